package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/todo"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
)

// todoOptions are `agentx todo`'s flags.
type todoOptions struct {
	issue issueFlag
}

func newTodoCmd(a *App) *cobra.Command {
	o := &todoOptions{}
	cmd := &cobra.Command{
		Use:   "todo [--issue N]",
		Short: "Everything that waits on a person, most urgent first, each with the command that settles it",
		Long: `One list of everything in the workspace that waits on a person: questions
to human (pending or stale), escalations (with their numbered options and
both positions), escalated evaluations, pending enhancement proposals,
answers their askers never picked up (10 minutes and more), and reused
decisions: questions whose asker proceeds on an earlier decision (clarify
assume --reuse), which a person keeps or overturns by answering. What is overdue
comes first, the longest overdue first; then the rest by when it falls due,
else by how long it has waited. Each item says the command that settles it;
an option's own command picks it. "agentx desk" shows the same queue as a
page in the browser.`,
		Example: `  agentx todo
  agentx todo --issue 42 --json`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{runsMonitor: "yes"},
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
	o.issue.register(cmd, "only this issue's items")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *todoOptions) run(a *App) error {
	n, err := o.issue.get(a)
	if err != nil {
		return err
	}
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	return a.later(func(context.Context) error {
		items, skipped, err := todo.List(h, todo.Filter{Issue: n})
		if err != nil {
			return err
		}
		for _, e := range skipped {
			a.warnf("skipped %v", e)
		}
		for _, agent := range untrustedResumes(h.Trust, h.Rules()) {
			a.warnf("%s", untrustedResumeNote(agent))
		}
		if items == nil {
			items = []todo.Item{}
		}
		return a.emit(items, func() { printTodo(a.stdout, a.paint, items, h.Store.Now()) })
	})
}

// printTodo writes the queue as text: one block per item, agent text made
// safe for the terminal.
func printTodo(w io.Writer, paint painter, items []todo.Item, now time.Time) {
	if len(items) == 0 {
		fmt.Fprintf(w, "Nothing waits on a person.\n")
		return
	}
	bold := paint(boldAttr)
	for i, it := range items {
		if i > 0 {
			fmt.Fprintf(w, "\n")
		}
		printTodoItem(w, bold, it, now)
	}
}

// printTodoItem writes one item of the queue: its heading, who and why,
// the positions or the text, and the commands that settle it.
func printTodoItem(w io.Writer, bold func(string) string, it todo.Item, now time.Time) {
	line := safetext.Line
	where := words.IssueRef(it.Issue)
	if it.Kind == todo.KindProposal {
		where = issuesOrNone(it.Issues)
	}
	fmt.Fprintf(w, "%s  %s  %s  %s  %s\n", bold(line(it.ID)), where, kindLabel(it), it.Status, todoWhen(it, now))
	fmt.Fprintf(w, "  %s  (%s)\n", line(it.Topic), line(who(it)))
	if it.Reason != "" && it.Kind != todo.KindProposal {
		fmt.Fprintf(w, "  Reason: %s\n", line(it.Reason))
	}
	if it.Reuses != nil {
		fmt.Fprintf(w, "  %s proceeds on the decision of %s: %s\n", line(it.From), line(it.Reuses.ID), line(it.Reuses.Summary))
	}
	printPositions(w, it)
	for _, o := range it.Options {
		fmt.Fprintf(w, "  %d. %s\n       %s\n", o.N, line(o.Text), line(o.Command))
	}
	for k, act := range it.Actions {
		label := "settle: "
		switch {
		case it.Kind == todo.KindReused:
			label = fmt.Sprintf("%-10s", act.Verb+":") // overturn:, keep:
		case k > 0:
			label = "or:     "
		}
		fmt.Fprintf(w, "  %s%s\n", label, line(act.Command))
	}
}

// printPositions writes an escalation's two positions (the asker's, the
// asked agent's), else the item's text, each cut at 600 bytes.
func printPositions(w io.Writer, it todo.Item) {
	for k, p := range it.Positions {
		role := "asker"
		if k == 1 {
			role = "asked"
		}
		text := p.Text
		if text == "" {
			text = "(has not answered)"
		}
		fmt.Fprintf(w, "%s", safetext.Indent(clipText(text, 600), fmt.Sprintf("  %s (%s): ", safetext.Line(p.Agent), role), "    "))
	}
	if len(it.Positions) == 0 && it.Text != "" {
		fmt.Fprintf(w, "%s", safetext.Indent(clipText(it.Text, 600), "  > ", "  > "))
	}
}

// todoWhen says how long an item has waited, and when it falls due or
// how long it is overdue.
func todoWhen(it todo.Item, now time.Time) string {
	when := "waiting " + todo.Ago(now.Sub(it.Since.Time))
	switch {
	case it.Overdue:
		return "OVERDUE " + todo.Ago(now.Sub(it.Due.Time)) + ", " + when
	case it.Due != nil:
		return when + ", due in " + todo.Ago(it.Due.Sub(now))
	}
	return when
}

func kindLabel(it todo.Item) string {
	switch it.Kind {
	case todo.KindQuestion:
		return "question to human"
	case todo.KindUndelivered:
		return "answer not picked up by " + safetext.Line(it.From)
	case todo.KindReused:
		return "reused decision"
	}
	return string(it.Kind)
}

func who(it todo.Item) string {
	if it.Kind == todo.KindProposal {
		return "proposed by " + it.From
	}
	return it.From + " -> " + it.To
}

// clipText keeps the first n bytes of s (at a rune boundary), saying how
// much was cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " \n") + fmt.Sprintf(" [... %d bytes more]", len(s)-cut)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
