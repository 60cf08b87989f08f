package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/gate/skills"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/internal/workspace"
)

func newSkillsCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "Skills drafted from approved proposals: draft, validate, list",
		Long: `A skill is what Claude Code loads from DIR/NAME/SKILL.md ([skills] dir in
config.toml, default .claude/skills): YAML front matter with a name and a
description, then the instructions. An approved new_skill proposal is drafted
into one (skills draft) by a person or an agent; the draft is inert (Claude
does not load it on its own) until someone writes its instructions, removes
the draft marker and disable-model-invocation, and a person commits it. There
is no hot-loading: a skill is active once committed. See docs/supervisor.md.`,
	}
	cmd.AddCommand(newSkillsDraftCmd(a), newSkillsValidateCmd(a), newSkillsListCmd(a))
	return cmd
}

// skillsDraftOptions are `agentx skills draft`'s flags and argument.
type skillsDraftOptions struct {
	proposal string
	name, as string
}

func newSkillsDraftCmd(a *App) *cobra.Command {
	o := &skillsDraftOptions{}
	cmd := &cobra.Command{
		Use:   "draft PROPOSAL-ID [--name NAME]",
		Short: "Draft a skill from an approved new_skill proposal (never over an existing skill)",
		Example: `  agentx skills draft PROP-001
  agentx skills draft PROP-001 --name db-migrations`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.proposal = args[0]
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().StringVar(&o.name, "name", "", "the skill's name and folder (default: from the proposal)")
	cmd.Flags().StringVar(&o.as, "as", "", "the person drafting (a person, at a terminal of their own)")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *skillsDraftOptions) run(ctx context.Context, a *App) error {
	ws, err := a.open()
	if err != nil {
		return err
	}
	by, err := actor(a, o.as)
	if err != nil {
		return err
	}
	dir := ws.Rules.Config.Skills.Dir
	p, err := skills.Draft(ctx, ws.Store, o.proposal, skills.DraftOptions{Root: ws.Root, Dir: dir, Name: o.name, By: by})
	if err != nil {
		return draftError(err)
	}
	all, err := scanSkills(ws)
	if err != nil {
		return err
	}
	s := skills.Find(all, p.Drafted.Skill)
	if s == nil {
		return fmt.Errorf("skills: %s was written but cannot be read back", p.Drafted.Path)
	}
	return a.emit(s, func() {
		a.printf("Drafted %s from %s: %s.\n", safetext.Line(s.Path), safetext.Line(p.ID), s.Status)
		printProblems(a.stdout, s)
		a.printf("  Claude does not load it on its own (disable-model-invocation: true). Write its instructions and\n")
		a.printf("  description, delete the draft marker line and the disable-model-invocation line, check it with\n")
		a.printf("  agentx skills validate %s, and commit it: a skill is active once committed.\n", safetext.Line(s.Name))
	})
}

// draftError gives a refused draft its exit code: a name Claude Code
// would refuse is bad input (2), a proposal of another type is refused
// (4), one not approved or drafted already cannot move there (6).
func draftError(err error) error {
	var ne *skills.NameError
	if errors.As(err, &ne) {
		return &codedError{Code: ExitUsage, Msg: err.Error(), Todo: hintOf(err)}
	}
	var de *proposal.DraftError
	if !errors.As(err, &de) {
		return err
	}
	code := ExitTransition
	if de.WrongType() {
		code = ExitRejected
	}
	return &codedError{Code: code, Msg: err.Error(), Todo: hintOf(err)}
}

// skillsValidateOptions are `agentx skills validate`'s argument.
type skillsValidateOptions struct {
	name string // "": every skill
}

func newSkillsValidateCmd(a *App) *cobra.Command {
	o := &skillsValidateOptions{}
	return &cobra.Command{
		Use:   "validate [NAME]",
		Short: "Check every skill (or one) against Claude Code's format; exit 7 naming each problem",
		Long: `Check the skills of the skills directory: the front matter is there and is
YAML; name is lowercase letters, digits and hyphens (at most 64, no
"anthropic" or "claude") and is the folder's name; description is there, at
most 1024 characters, with no XML tag; every file the instructions link to
exists inside the skill folder; no two skills (nor a skill and a custom
command) share a name, and no two descriptions are so alike that Claude
could not tell when to use which. Each problem is printed as
path:line: check: problem. Exits 7 if a skill checked has one.`,
		Example: `  agentx skills validate
  agentx skills validate db-migrations`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.name = args[0]
			}
			return o.run(a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *skillsValidateOptions) run(a *App) error {
	ws, all, err := openSkills(a)
	if err != nil {
		return err
	}
	checked := all
	if o.name != "" {
		s := skills.Find(all, o.name)
		if s == nil {
			return &codedError{Code: ExitNotFound, Msg: fmt.Sprintf("no skill %s in %s", safetext.Line(o.name), ws.Rules.Config.Skills.Dir),
				Todo: "agentx skills list shows the skills there"}
		}
		checked = []*skills.Skill{s}
	}
	bad := 0
	for _, s := range checked {
		if s.Status == skills.StatusInvalid {
			bad++
		}
	}
	if err := a.emit(checked, func() { o.text(a, ws.Rules.Config.Skills.Dir, checked, bad) }); err != nil {
		return err
	}
	if bad > 0 {
		return &codedError{Code: ExitInvalidData, Msg: fmt.Sprintf("%d of %d %s %s problems", bad, len(checked), words.Plural(len(checked), "skill", "skills"), words.Plural(bad, "has", "have")),
			Todo: "fix each problem named, then run agentx skills validate again", Quiet: !a.json}
	}
	return nil
}

// text prints, for a person, the skills checked in dir: bad of them have problems.
func (o *skillsValidateOptions) text(a *App, dir string, checked []*skills.Skill, bad int) {
	if len(checked) == 0 {
		a.printf("No skills in %s.\n", safetext.Line(dir))
		return
	}
	for _, s := range checked {
		if s.Status == skills.StatusInvalid {
			printProblems(a.stdout, s)
			continue
		}
		a.printf("%s: %s", safetext.Line(s.Path), s.Status)
		if s.Status == skills.StatusDraft {
			a.printf(" (its format is right; Claude does not load it on its own until the draft marker and disable-model-invocation are gone)")
		}
		a.printf("\n")
	}
	if bad > 0 {
		a.printf("%d of %d %s %s problems.\n", bad, len(checked), words.Plural(len(checked), "skill", "skills"), words.Plural(bad, "has", "have"))
	}
}

// skillsListOptions are `agentx skills list`'s (it has no flags).
type skillsListOptions struct{}

func newSkillsListCmd(a *App) *cobra.Command {
	o := &skillsListOptions{}
	return &cobra.Command{
		Use:   "list",
		Short: "The skills, with origin (manual or the proposal drafted from) and status (draft, validated, invalid)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *skillsListOptions) run(a *App) error {
	ws, all, err := openSkills(a)
	if err != nil {
		return err
	}
	return a.emit(all, func() {
		if len(all) == 0 {
			a.printf("No skills in %s.\n", safetext.Line(ws.Rules.Config.Skills.Dir))
			return
		}
		var rows [][]string
		for _, s := range all {
			origin := s.Origin
			if s.Proposal != "" {
				origin = "from " + s.Proposal
			}
			desc := s.Description
			if s.Status == skills.StatusInvalid {
				desc = fmt.Sprintf("(%d %s: agentx skills validate %s)", len(s.Problems), words.Plural(len(s.Problems), "problem", "problems"), s.Name)
			}
			rows = append(rows, []string{s.Name, string(s.Status), origin, clip(desc, 60)})
		}
		writeTable(a.stdout, []string{"NAME", "STATUS", "ORIGIN", "DESCRIPTION"}, rows)
	})
}

// openSkills opens the workspace and reads its skills.
func openSkills(a *App) (*workspace.Workspace, []*skills.Skill, error) {
	ws, err := a.open()
	if err != nil {
		return nil, nil, err
	}
	all, err := scanSkills(ws)
	return ws, all, err
}

// scanSkills reads the workspace's skills, their origins from the
// proposals' drafts.
func scanSkills(ws *workspace.Workspace) ([]*skills.Skill, error) {
	dir := ws.Rules.Config.Skills.Dir
	b, err := proposal.Read(ws.Store)
	if err != nil {
		return nil, err
	}
	origins := map[string]string{}
	for _, p := range b.Proposals {
		if d := p.Drafted; d != nil && path.Clean(d.Path) == path.Join(dir, d.Skill, skills.FileName) {
			origins[d.Skill] = p.ID
		}
	}
	return skills.Scan(ws.Root, dir, origins)
}

// printProblems prints each problem of s as path:line: check: message.
func printProblems(w io.Writer, s *skills.Skill) {
	for _, p := range s.Problems {
		at := s.Path
		if p.Line > 0 {
			at = fmt.Sprintf("%s:%d", s.Path, p.Line)
		}
		fmt.Fprintf(w, "%s\n", safetext.Line(fmt.Sprintf("%s: %s: %s", at, p.Check, p.Message)))
	}
}

// clip cuts s to n characters, with an ellipsis.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
