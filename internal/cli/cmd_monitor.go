package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/agentx-cli/agentx/internal/words"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/monitor"
)

// monitorOptions are `agentx monitor`'s flags.
type monitorOptions struct {
	dryRun bool
}

func newMonitorCmd(a *App) *cobra.Command {
	o := &monitorOptions{}
	cmd := &cobra.Command{
		Use:   "monitor [--dry-run]",
		Short: "Find stale, stuck and deadlocked clarifications and act on them",
		Long: `Look at every open clarification once and act on what is wrong:

  stale     pending past its SLA: marked stale and retried once (the target's
            responder run again, or the human notified again); still
            unanswered one SLA later: escalated
  stuck     the same question asked again, or bounced back (A asks B what B
            asked A): escalated
  deadlock  blocking questions waiting on each other in a cycle: the question
            of the lowest-precedence agent in the cycle is escalated

The monitor also runs by itself after every hook, "agentx ready" and every
"agentx clarify" command (AGENTX_NO_MONITOR=1 turns that off). Each action is
re-checked under the ledger's lock, so monitors running at once act once.
With --dry-run it only reports what it would do. Run by name, it lets each
retry run up to its responder's timeout; as a side effect of another command
it gives retries 10s in all and leaves the rest for the next command. See
docs/monitor.md.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "report what it would do; change nothing")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *monitorOptions) run(a *App) error {
	if _, _, err := a.hub(); err != nil {
		return err
	}
	// asked for by name: every issue scanned, each retry may run up
	// to its timeout; the report is the command's output
	s := a.monitorAs(true)
	s.whole, s.dryRun = true, o.dryRun
	return a.later(func(context.Context) error {
		r := s.report
		return a.emit(r, func() { renderReport(a.stdout, a.paint, r) })
	})
}

// renderReport writes a monitor report for a person.
func renderReport(w io.Writer, paint painter, r *monitor.Report) {
	bold := paint(boldAttr)
	noun := "clarifications"
	if r.Open == 1 {
		noun = "clarification"
	}
	fmt.Fprintf(w, "%s %s: %d open %s.\n", bold("Monitor"), r.Now.UTC().Format("2006-01-02 15:04 MST"), r.Open, noun)
	if r.DryRun {
		fmt.Fprintln(w, "Dry run: nothing was changed.")
	}
	if r.Index != "" {
		fmt.Fprintf(w, "Index: %s.\n", safetext.Line(r.Index))
	}
	if len(r.Findings) == 0 {
		fmt.Fprintln(w, "Nothing to do.")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "  %s\n", safetext.Line(fmt.Sprintf("%s  %s  %s -> %s  %s: %s", f.ID, words.IssueRef(f.Issue), f.From, f.To, f.Kind, outcome(f))))
		fmt.Fprintf(w, "      %s\n", safetext.Line(f.Reason))
	}
	if len(r.Waiting) > 0 {
		fmt.Fprintln(w, "Waiting for an answer:")
		for _, s := range r.Waiting {
			fmt.Fprintf(w, "  %s  %s  %s -> %s  stale since %s, escalates at %s (%d %s)\n", safetext.Line(s.ID), words.IssueRef(s.Issue), safetext.Line(s.From), safetext.Line(s.To),
				minute(s.StaleSince.Time), minute(s.EscalatesAt.Time), s.Retries, words.Plural(s.Retries, "retry", "retries"))
		}
	}
	if len(r.Problems) > 0 {
		fmt.Fprintln(w, "Problems:")
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %s\n", safetext.Line(p.Message))
		}
	}
}

func minute(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

func newClarifyStaleCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "stale",
		Short: "List only the stale and stuck clarifications (and those escalated for it)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return runStale(a)
		}),
	}
}

// runStale is `agentx clarify stale`'s body over the session a (it takes
// no flags): its streams, global flags, output and hub.
func runStale(a *App) error {
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	return a.later(func(ctx context.Context) error { // list the state the monitor leaves
		entries, skipped, err := monitor.OpenEntries(h.Store)
		if err != nil {
			return err
		}
		for _, e := range skipped {
			a.warnf("skipped %v", e)
		}
		items := monitor.StaleAndStuck(entries, h.Store.Now(), newMonitor(h).Config)
		return a.emit(items, func() { printStale(a, items) })
	})
}

// printStale writes the stale and stuck clarifications: a table with a
// header on a terminal, tab-separated for a script.
func printStale(a *App, items []monitor.Item) {
	if len(items) == 0 {
		if a.isTTY {
			a.printf("No stale or stuck clarifications.\n")
		}
		return
	}
	var t table
	if a.isTTY {
		t.add(plain("ID", "ISSUE", "STATUS", "KIND", "FROM", "TO", "WHY")...)
	}
	for _, it := range items {
		why := it.Reason
		if it.EscalatesAt != nil {
			why += "; escalates at " + minute(it.EscalatesAt.Time)
		}
		t.add(cell{text: it.ID}, cell{text: strconv.Itoa(it.Issue)}, cell{text: string(it.Status), paint: a.paint(statusColor(it.Status))},
			cell{text: string(it.Kind)}, cell{text: it.From}, cell{text: it.To}, cell{text: why})
	}
	t.write(a.stdout, "")
}
