package skills

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
)

// DraftOptions say where and how to draft.
type DraftOptions struct {
	Root string // the repository root
	Dir  string // the skills directory, relative to Root, "/"-separated
	Name string // the skill's name; "" derives one from the proposal
	By   string // who drafts: an agent, or human:NAME
}

// ExistsError is a skill that is there already: a draft never replaces one.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s exists already: a draft never replaces a skill", e.Path)
}

// Hint says how to go on, in no front end's words (the command line names
// its flag).
func (e *ExistsError) Hint() string {
	return "draft under another name, or edit the skill that is there"
}

// NameError is a skill name that Claude Code would not accept.
type NameError struct{ Name, Why string }

func (e *NameError) Error() string { return fmt.Sprintf("skill name %q %s", e.Name, e.Why) }

// Hint says how to go on, in no front end's words (the command line names
// its flag).
func (e *NameError) Hint() string {
	return "give a name of lowercase letters, digits and hyphens, at most 64 characters"
}

// Draft writes a skill drafted from the approved new_skill proposal id to
// DIR/NAME/SKILL.md and records the draft on the proposal (see
// proposal.RecordDraft). The folder is created for it: an existing one,
// and a symbolic link on the way, are refused, and nothing is written.
func Draft(ctx context.Context, store *ledger.Store, id string, o DraftOptions) (*proposal.Proposal, error) {
	var created string // the folder made, removed again if recording fails
	p, err := proposal.RecordDraft(ctx, store, id, o.By, func(p *proposal.Proposal) (string, string, error) {
		name := o.Name
		if name == "" {
			name = DefaultName(p)
		}
		if why := NameProblem(name); why != "" {
			return "", "", &NameError{Name: name, Why: why}
		}
		rel := path.Join(o.Dir, name, FileName)
		dir := filepath.Join(o.Root, filepath.FromSlash(o.Dir))
		folder := filepath.Join(dir, name)
		if err := atomicfile.CheckNoLinks(o.Root, folder); err != nil {
			return "", "", err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", fmt.Errorf("skills: %w", err)
		}
		if err := atomicfile.CheckNoLinks(o.Root, folder); err != nil {
			return "", "", err
		}
		// Mkdir claims the name: it fails on anything there, a link included.
		if err := os.Mkdir(folder, 0o755); errors.Is(err, fs.ErrExist) {
			return "", "", &ExistsError{Path: path.Join(o.Dir, name)}
		} else if err != nil {
			return "", "", fmt.Errorf("skills: %w", err)
		}
		created = folder
		data, err := Render(p, name, o.By, store.Now())
		if err == nil {
			err = atomicfile.Write(filepath.Join(folder, FileName), data, 0o644)
		}
		return name, rel, err
	})
	if err != nil && created != "" {
		_ = os.Remove(filepath.Join(created, FileName))
		_ = os.Remove(created)
	}
	return p, err
}

// DefaultName is the name a skill drafted from p gets: for a proposal
// from the gate, its workflow, step and check; else its title's words.
func DefaultName(p *proposal.Proposal) string {
	if wf, step, check, ok := gatePattern(p); ok {
		if n := Slug(wf + " " + step + " " + check); n != "" {
			return n
		}
	}
	if n := Slug(p.Title); n != "" {
		return n
	}
	return "skill-" + strings.ToLower(Slug(p.ID))
}

// gatePattern reads the workflow, step and check of a proposal from the
// gate ("check:WORKFLOW/STEP/CHECK").
func gatePattern(p *proposal.Proposal) (wf, step, check string, ok bool) {
	rest, ok := strings.CutPrefix(p.Pattern, "check:")
	if !ok {
		return "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// draftFront is a draft's front matter, in this order.
type draftFront struct {
	Name                   string            `yaml:"name"`
	Description            string            `yaml:"description"`
	DisableModelInvocation bool              `yaml:"disable-model-invocation"`
	Metadata               map[string]string `yaml:"metadata"`
}

// Render is the SKILL.md drafted from p: front matter with name, a
// description, disable-model-invocation (Claude does not load a draft on
// its own) and the proposal in metadata; the draft marker; the proposal's
// rationale, evidence and action, neutralised as Markdown text (no link,
// heading or markup of theirs survives, nor a control character); and an
// outline of the instructions to write.
func Render(p *proposal.Proposal, name, by string, now time.Time) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	err := enc.Encode(draftFront{
		Name: name, Description: Description(p), DisableModelInvocation: true,
		Metadata: map[string]string{ProposalKey: p.ID},
	})
	if err == nil {
		err = enc.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	b.WriteString("---\n")
	fmt.Fprintf(&b, "%s from %s by %s on %s. Claude does not load this skill on its own while disable-model-invocation is true. Write the instructions and the description, delete this line and the disable-model-invocation line, run agentx skills validate, and commit: the skill is active once committed. -->\n\n",
		DraftMarker, safetext.Line(p.ID), safetext.Line(by), now.UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "# %s\n\n", safetext.MarkdownLine(p.Title))
	b.WriteString("## Why\n\n")
	b.WriteString(quote(p.Rationale))
	if len(p.Evidence) > 0 {
		b.WriteString("\nWhat failed:\n\n")
		for _, e := range p.Evidence {
			fmt.Fprintf(&b, "- #%d, %s, check %s", e.Issue, safetext.MarkdownLine(e.Eval), safetext.MarkdownLine(e.Check))
			if strings.TrimSpace(e.Feedback) == "" {
				b.WriteString("\n")
				continue
			}
			b.WriteString(":\n\n")
			for _, l := range strings.Split(strings.TrimSuffix(quote(e.Feedback), "\n"), "\n") {
				b.WriteString("  " + l + "\n")
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n## What was asked\n\n")
	b.WriteString(quote(p.Action))
	b.WriteString("\n## Instructions\n\n")
	b.WriteString("<!-- An outline: replace each item with what to do, in the imperative. -->\n\n")
	b.WriteString("1. When this applies: the situation, and what tells you it is the one.\n")
	b.WriteString("2. Before starting: what to read, run or set up first.\n")
	b.WriteString("3. Steps: what to do, in order, with the commands.\n")
	if _, step, check, ok := gatePattern(p); ok {
		fmt.Fprintf(&b, "4. Check the work as the gate will: run the %s check of step %s before finishing (agentx eval run).\n", safetext.MarkdownLine(check), safetext.MarkdownLine(step))
	} else {
		b.WriteString("4. Check the work: how to tell it is done and right.\n")
	}
	b.WriteString("5. Pitfalls: what went wrong before (above), and how to avoid it.\n")
	return b.Bytes(), nil
}

// quote renders untrusted text as a Markdown block quote of plain text.
func quote(s string) string {
	if strings.TrimSpace(s) == "" {
		return "> (none given)\n"
	}
	var b strings.Builder
	for _, l := range strings.Split(safetext.Markdown(s), "\n") {
		b.WriteString(strings.TrimRight("> "+l, " ") + "\n")
	}
	return b.String()
}

// Description is a draft's description, from the proposal: what the
// skill is about and when to use it, within the limits (no XML tag, at
// most MaxDescriptionLen characters). The author rewrites it.
func Description(p *proposal.Proposal) string {
	var d string
	if wf, step, check, ok := gatePattern(p); ok {
		d = fmt.Sprintf("How to pass the %s check of step %s (workflow %s) the first time. Use when working on %s, before finishing it.", check, step, wf, step)
	} else {
		d = strings.TrimRight(p.Title, ". ") + "."
		if len(p.Issues) > 0 {
			d += fmt.Sprintf(" Use when working on issues like #%d.", p.Issues[0])
		}
	}
	d = strings.NewReplacer("<", "‹", ">", "›").Replace(safetext.Line(d))
	if utf8.RuneCountInString(d) > MaxDescriptionLen {
		d = string([]rune(d)[:MaxDescriptionLen])
	}
	return d
}
