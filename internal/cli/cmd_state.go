package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

func newStateCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "state",
		Short: "Show every agent's status: working, blocked on a clarification, clarifying...",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			rows, errs, err := h.AgentStates()
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
					issue, since, detail := "-", "-", ""
					if r.Issue != nil {
						issue = fmt.Sprintf("#%d", *r.Issue)
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
					t.add(plain(r.Agent, string(r.Status), issue, detail, since)...)
				}
				t.write(a.stdout, "")
			})
		}),
	}
}

func newReadyCmd(a *App) *cobra.Command {
	var issue issueFlag
	cmd := &cobra.Command{
		Use:         "ready [--issue N]",
		Annotations: map[string]string{runsMonitor: "yes"},
		Short:       "Which issues may proceed; with --issue, a CI gate (exit 9 when blocked or escalated)",
		Long: `List each issue with an open clarification as READY, BLOCKED (a blocking
clarification is pending or stale) or ESCALATED (a clarification needs a human
decision).

With --issue N it is a gate for CI and hooks: exit 0 when the issue is ready,
9 when it is blocked or escalated.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			n, err := issue.get(a)
			if err != nil {
				return err
			}
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			a.gateIssue(ctx, h, n)
			return a.later(func(ctx context.Context) error { // gate on the state the monitor leaves
				rs, errs, err := h.Ready(n)
				if err != nil {
					return err
				}
				if rs, err = gateReadiness(h.Store, rs, n); err != nil {
					return err
				}
				for _, e := range errs {
					a.warnf("skipped %v", e)
				}
				if rs == nil {
					rs = []router.Readiness{}
				}
				if err := a.emit(rs, func() {
					if len(rs) == 0 {
						a.printf("No issues with open clarifications.\n")
					}
					for _, r := range rs {
						line := fmt.Sprintf("#%d %s", r.Issue, a.readyState(r.State))
						if r.Reason != "" {
							line += ": " + safetext.Line(r.Reason)
						}
						a.printf("%s\n", line)
					}
				}); err != nil {
					return err
				}
				if n != nil && len(rs) == 1 && rs[0].State != router.StateReady {
					return &codedError{Code: ExitBlocked, Msg: fmt.Sprintf("issue #%d is %s: %s", *n, rs[0].State, rs[0].Reason), Quiet: true}
				}
				return nil
			})
		}),
	}
	issue.register(cmd, "gate on this issue")
	return cmd
}

func (a *App) readyState(s string) string {
	switch s {
	case router.StateReady:
		return a.paint(statusColor(ledger.Answered))(s)
	case router.StateBlocked:
		return a.paint(statusColor(ledger.Pending))(s)
	}
	return a.paint(statusColor(ledger.Escalated))(s)
}
