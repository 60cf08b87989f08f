package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/gate/scope"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// gitTimeout bounds a git command scope check runs.
const gitTimeout = 30 * time.Second

func newScopeCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scope",
		Short: "A step's write scope: where its agent may write (reads are never restricted)",
	}
	cmd.AddCommand(newScopeCheckCmd(a))
	return cmd
}

// scopeView is what scope check found.
type scopeView struct {
	Agent    string       `json:"agent"`
	Workflow string       `json:"workflow"`
	Step     string       `json:"step,omitempty"` // "" when the agent has no scoped step: unrestricted
	Scope    []string     `json:"scope"`
	Files    []scopedFile `json:"files"`
}

type scopedFile struct {
	Path    string `json:"path"`           // as given
	Rel     string `json:"rel,omitempty"`  // repository-relative, links resolved; "" outside the repository
	Allowed bool   `json:"allowed"`        // inside the scope
	Tool    string `json:"tool,omitempty"` // the Claude Code tool (hook payload)
}

// scopeCheckOptions are `agentx scope check`'s flags and arguments.
type scopeCheckOptions struct {
	agent, workflow, step string
	files, staged         bool
	paths                 []string
}

func newScopeCheckCmd(a *App) *cobra.Command {
	o := &scopeCheckOptions{}
	cmd := &cobra.Command{
		Use:   "check [--agent A] [--files PATH... | --staged]",
		Short: "Check writes against the agent's step scope: a Claude Code PreToolUse hook (stdin), --files, or --staged",
		Long: `Check that agent A writes only inside the scope of its workflow step
(scope = [...]; the first of its steps with one, or --step). An agent with no
scoped step is unrestricted. Reads are never restricted. Paths are resolved
against the repository root: ".." and symbolic links are followed, and a
path outside the repository is outside any scope.

With no flags it reads a Claude Code PreToolUse hook payload on stdin: for a
Write, Edit, MultiEdit or NotebookEdit outside the scope it prints the hook
decision that denies the call, with a message telling the agent it may ask
a person for a wider scope; otherwise it prints nothing. It exits 0 either
way (also with nothing on stdin), and 1 (never 2) when it cannot judge. See docs/agents.md for the hook.

--files PATH... checks the files named, --staged the files staged in git
(a pre-commit hook, or CI on a pull request's changes): each file outside
the scope is named, and the command exits 4.`,
		Example: `  agentx scope check --agent engineer --files src/components/Button.tsx package.json
  agentx scope check --agent engineer --staged`,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.paths = args
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().StringVar(&o.agent, "agent", "", "whose scope (default $AGENTX_AGENT)")
	cmd.Flags().StringVar(&o.workflow, "workflow", "", "the workflow (default: config's default_workflow)")
	cmd.Flags().StringVar(&o.step, "step", "", "the step (default: the agent's first step with a scope)")
	cmd.Flags().BoolVar(&o.files, "files", false, "check the paths given as arguments")
	cmd.Flags().BoolVar(&o.staged, "staged", false, "check the files staged in git (git diff --cached)")
	return cmd
}

// hook reports whether the check reads a Claude Code hook's payload.
func (o *scopeCheckOptions) hook() bool { return !o.files && !o.staged }

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *scopeCheckOptions) run(ctx context.Context, a *App) error {
	err := o.check(ctx, a)
	if o.hook() && err != nil && errorExit(err) != ExitFailure {
		var noWS *workspace.NotFoundError
		if errors.As(err, &noWS) {
			return nil // no workspace: nothing to enforce
		}
		// Claude Code reads exit 2 as "deny" with stderr as the reason;
		// a broken hook must say what is wrong, not pose as a refusal.
		return &codedError{Code: ExitFailure, Msg: err.Error(), Todo: hintOf(err)}
	}
	return err
}

// usage refuses flags and arguments that do not go together.
func (o *scopeCheckOptions) usage() error {
	switch {
	case o.files && o.staged:
		return &usageError{Err: errors.New("--files and --staged: choose one")}
	case !o.files && len(o.paths) > 0:
		return &usageError{Err: fmt.Errorf("unexpected arguments %q: use --files to check paths", o.paths)}
	case o.files && len(o.paths) == 0:
		return &usageError{Err: errors.New("--files needs at least one path")}
	}
	return nil
}

// check judges the writes the options name against the agent's scope.
func (o *scopeCheckOptions) check(ctx context.Context, a *App) error {
	if err := o.usage(); err != nil {
		return err
	}
	// the agent, the workspace and the hub: the check changes nothing and
	// reads no ledger (so in remote mode nothing is fetched for it)
	who, err := required("agent", a.agentDefault(o.agent))
	if err != nil {
		return err
	}
	ws, h, err := a.localHub()
	if err != nil {
		return err
	}
	w, err := h.Rules().Workflow(o.workflow)
	if err != nil {
		return err
	}
	s, err := w.Scoped(who, o.step)
	if err != nil {
		return err
	}
	c := &scopeChecker{root: ws.Root, v: scopeView{Agent: who, Workflow: w.Name, Scope: []string{}, Files: []scopedFile{}}}
	if s != nil {
		c.v.Step, c.v.Scope = s.ID, s.Scope
	}
	cwd, _ := a.startDir()
	switch {
	case o.hook():
		return c.hook(a, h, cwd)
	case o.staged:
		err = c.staged(ctx)
	default:
		err = c.all(cwd, o.paths)
	}
	if err != nil {
		return err
	}
	return c.report(a)
}

// scopeChecker judges files against a step's scope, in the repository at
// root, into v.
type scopeChecker struct {
	root string
	v    scopeView
}

// file judges the path p, relative to cwd, written by tool ("" unknown).
func (c *scopeChecker) file(cwd, p, tool string) error {
	rel, inside, err := scope.Resolve(c.root, cwd, p)
	if err != nil {
		return err
	}
	f := scopedFile{Path: p, Allowed: inside && scope.Match(c.v.Scope, rel), Tool: tool}
	if len(c.v.Scope) == 0 { // unrestricted: even outside the repository
		f.Allowed = true
	}
	if inside {
		f.Rel = rel
	}
	c.v.Files = append(c.v.Files, f)
	return nil
}

// all judges the paths given, relative to cwd.
func (c *scopeChecker) all(cwd string, paths []string) error {
	for _, p := range paths {
		if err := c.file(cwd, p, ""); err != nil {
			return err
		}
	}
	return nil
}

// staged judges the files staged in git.
func (c *scopeChecker) staged(ctx context.Context) error {
	res := router.RunProcess(ctx, []string{"git", "diff", "--cached", "--name-only", "-z", "--diff-filter=ACMRD"}, c.root, nil, nil, gitTimeout)
	if res.Err != nil || res.ExitCode != 0 {
		return fmt.Errorf("git diff --cached: %s", res.Describe([]string{"git"}, gitTimeout))
	}
	var paths []string
	for _, p := range strings.Split(strings.TrimRight(string(res.Stdout), "\x00"), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return c.all(c.root, paths)
}

// hook judges the write a Claude Code PreToolUse hook's payload on stdin
// names, and prints the decision that denies it when it is outside.
func (c *scopeChecker) hook(a *App, h *router.Hub, cwd string) error {
	data, err := io.ReadAll(io.LimitReader(a.stdin, scope.MaxPayload))
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil // no payload (run by hand): nothing to judge
	}
	p, target, err := scope.ParsePayload(data)
	if err != nil {
		return &usageError{Err: err}
	}
	if target == "" {
		return nil // not a write: reads are never restricted
	}
	if p.CWD != "" {
		cwd = p.CWD
	}
	if err := c.file(cwd, target, p.ToolName); err != nil {
		return err
	}
	f := c.v.Files[0]
	if f.Allowed {
		return nil
	}
	scopeRefused(h, a.getenv("AGENTX_ISSUE"), c.v, f)
	out, err := scope.HookDeny(denyReason(c.v, f))
	if err != nil {
		return err
	}
	_, err = a.stdout.Write(out)
	return err
}

// report prints each file judged; any outside the scope fails it (exit 4).
func (c *scopeChecker) report(a *App) error {
	v := c.v
	var outside []string
	for _, f := range v.Files {
		if !f.Allowed {
			outside = append(outside, f.Path)
		}
	}
	if err := a.emit(v, func() {
		for _, f := range v.Files {
			state := "ok     "
			if !f.Allowed {
				state = "OUTSIDE"
			}
			a.printf("%s  %s\n", state, safetext.Line(f.Path))
		}
		if len(v.Files) == 0 {
			a.printf("No files to check.\n")
		}
	}); err != nil {
		return err
	}
	if len(outside) > 0 {
		return &router.RuleError{Kind: router.RuleScope,
			Msg:    fmt.Sprintf("%d of %s outside the write scope of %s (step %s: %s): %s", len(outside), words.Count(len(v.Files), "file", "files"), v.Agent, v.Step, strings.Join(v.Scope, ", "), strings.Join(outside, ", ")),
			Advice: "move the change inside the scope, or ask a person for a wider scope: agentx clarify ask --to human --topic scope"}
	}
	return nil
}

// scopeRefused logs a write the hook denied (router.EventScopeRefused):
// on the issue in AGENTX_ISSUE (0 without one), the file as topic (as the
// repository names it, else as given), why as reason.
func scopeRefused(h *router.Hub, envIssue string, v scopeView, f scopedFile) {
	issue, _ := ledger.ParseIssue(envIssue) // none, or not a number: 0
	file := f.Rel
	if file == "" {
		file = f.Path
	}
	where := "outside the write scope"
	if f.Rel == "" {
		where = "outside the repository"
	}
	tool := f.Tool
	if tool == "" {
		tool = "a write"
	}
	h.ScopeRefused(issue, v.Agent, "", file, fmt.Sprintf("%s of %s denied: %s of step %s of workflow %s (%s)", tool, file, where, v.Step, v.Workflow, strings.Join(v.Scope, ", ")))
}

// denyReason is what the agent reads when a write is refused: where it may
// write, and how to ask for more. The path is neutralised: it came from the
// payload.
func denyReason(v scopeView, f scopedFile) string {
	where := "outside the repository"
	if f.Rel != "" {
		where = "outside the write scope"
	}
	return safetext.Line(fmt.Sprintf("agentx: %s may not write %s: %s of step %s (%s). Reads are not restricted. "+
		"If the task needs this file, ask a person for a wider scope: agentx clarify ask --to human --topic scope --question \"...\" (or ask_human), "+
		"and go on with the work inside the scope meanwhile.",
		v.Agent, f.Path, where, v.Step, strings.Join(v.Scope, ", ")))
}
