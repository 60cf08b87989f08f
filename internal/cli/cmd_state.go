package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

func newStateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "state",
		Short: "Show every agent's status: working, blocked on a clarification, clarifying...",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return runState(a)
		}),
	}
}

// runState is `agentx state`'s body over the session a (it takes no
// flags): its streams, global flags, output and hub.
func runState(a *App) error {
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	rows, errs, err := h.StateRows()
	if err != nil {
		return err
	}
	for _, e := range errs {
		fmt.Fprintf(a.stderr, "agentx: warning: skipped %v\n", e)
	}
	now := a.now()
	return a.emit(rows, func() {
		if len(rows) == 0 {
			a.printf("No agent has reported a status yet.\n")
			return
		}
		var t table
		t.add(plain("AGENT", "STATUS", "ISSUE", "DETAIL", "SINCE")...)
		for _, r := range rows {
			t.add(stateCells(r, now)...)
		}
		t.write(a.stdout, "")
	})
}

// stateCells is one agent's row of the state table.
func stateCells(r router.AgentState, now time.Time) []cell {
	issue, since, detail := "-", "-", ""
	if r.Issue != nil {
		issue = words.IssueRef(*r.Issue)
	}
	if r.LastActivity != nil {
		since = age(now.Sub(r.LastActivity.Time))
	}
	switch {
	case r.WaitingOn != "":
		detail = fmt.Sprintf("waiting on %s (%s)", r.WaitingOn, r.ClarificationID)
	case r.RespondingTo != "":
		detail = fmt.Sprintf("answering %s (%s)", r.RespondingTo, r.ClarificationID)
	}
	if r.FromFile {
		detail = strings.TrimSpace(detail + " (as agent-status.json says)")
	}
	return plain(r.Agent, string(r.Status), issue, detail, since)
}

// readyOptions are `agentx ready`'s flags.
type readyOptions struct {
	issue issueFlag
}

func newReadyCmd(a *App) *cobra.Command {
	o := &readyOptions{}
	cmd := &cobra.Command{
		Use:         "ready [--issue N]",
		Annotations: map[string]string{runsMonitor: "yes", allRules: "yes"},
		Short:       "Which issues may proceed; with --issue, a CI gate (exit 9 when blocked or escalated)",
		Long: `List each issue with an open clarification as READY, BLOCKED (a blocking
clarification is pending or stale, or work was sent back for revision) or
ESCALATED (a blocking clarification needs a human decision). A non-blocking
question never holds an issue up, whatever its status, escalated included.

With --issue N it is a gate for CI and hooks: exit 0 when the issue is ready,
9 when it is blocked or escalated; "hook finish --strict" gates on the same.

It answers for every workflow: one whose file does not load fails it (exit
7, naming the file and line), while other commands go on without it.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	o.issue.register(cmd, "gate on this issue")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *readyOptions) run(ctx context.Context, a *App) error {
	n, err := o.issue.get(a)
	if err != nil {
		return err
	}
	a.wide = n == nil // one issue is made current below
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	if err := a.gateIssue(ctx, h, n); err != nil {
		return err
	}
	return a.later(func(ctx context.Context) error { return gateReady(a, h, n) }) // gate on the state the monitor leaves
}

// gateReady prints the readiness of issue n (nil: of every issue that is
// held up or has an open clarification); with an issue, one not READY is
// exit 9.
func gateReady(a *App, h *router.Hub, n *int) error {
	rs, errs, err := readiness(h, n)
	if err != nil {
		return err
	}
	for _, e := range errs {
		a.warnf("skipped %v", e)
	}
	if err := a.emit(rs, func() { printReadiness(a.stdout, a.paint, rs) }); err != nil {
		return err
	}
	if n != nil && len(rs) == 1 && rs[0].State != router.StateReady {
		return &codedError{Code: ExitBlocked, Msg: fmt.Sprintf("%s is %s: %s", words.Issue(*n), rs[0].State, rs[0].Reason), Quiet: true}
	}
	return nil
}

// printReadiness writes a line an issue: its state and, when not READY,
// why.
func printReadiness(w io.Writer, paint painter, rs []router.Readiness) {
	if len(rs) == 0 {
		fmt.Fprintf(w, "No issues with open clarifications.\n")
	}
	for _, r := range rs {
		line := fmt.Sprintf("%s %s", words.IssueRef(r.Issue), readyState(paint, r.State))
		if r.Reason != "" {
			line += ": " + safetext.Line(r.Reason)
		}
		fmt.Fprintf(w, "%s\n", line)
	}
}

// readyState is a readiness state, coloured as the status it stands for.
func readyState(paint painter, s string) string {
	switch s {
	case router.StateReady:
		return paint(statusColor(ledger.Answered))(s)
	case router.StateBlocked:
		return paint(statusColor(ledger.Pending))(s)
	}
	return paint(statusColor(ledger.Escalated))(s)
}

// readiness is the readiness of issue (with nil, of every issue with an
// open clarification or work sent back), by the hub's one rule
// (router.Hub.Ready), its reasons worded for the command line.
func readiness(h *router.Hub, issue *int) ([]router.Readiness, []error, error) {
	rs, errs, err := h.Ready(issue)
	if err != nil {
		return nil, nil, err
	}
	for i := range rs {
		rs[i].Reason = readyReason(rs[i])
	}
	return rs, errs, nil
}

// readyReason words why r is not READY, from the blocker that gives its
// state: "" when it is READY.
func readyReason(r router.Readiness) string {
	b, ok := r.Cause()
	if !ok {
		return ""
	}
	switch b.Rule {
	case router.BlockEscalated:
		return fmt.Sprintf("Clarification %s needs a human decision (agentx clarify show %s)", b.ID, b.ID)
	case router.BlockUnanswered:
		return fmt.Sprintf("Clarification %s %s from %s", b.ID, b.Status, b.On)
	case router.BlockUnreadable:
		return fmt.Sprintf("its ledger cannot be read (%s); run agentx doctor", b.Why)
	case router.BlockSentBack:
		return fmt.Sprintf("%s (agentx eval show %s)", b.Why, b.ID)
	}
	return b.Why
}
