package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/gate/evaluate"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/monitor"
	"github.com/agentx-cli/agentx/router"
)

func newHookCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Lifecycle hooks: an agent starts or finishes work on an issue (runs the monitor)",
		Long: `Call "agentx hook start" when an agent begins work on an issue and
"agentx hook finish" when it is done (from an agent's hooks, a script or CI).
Each records the agent's status, then runs the monitor (see "agentx monitor").
An agent is its role on an issue, so a hook acts on that issue alone:

  start   closes nothing (another process of the same role may be working
          another issue with questions of its own)
  finish  the agent's own pending questions on this issue are abandoned, and
          its answered ones resolved with their last answer (it finished: the
          answer stood); a question to a human stays open for the person to
          answer, and escalates by the SLA rules

Both exit 0 unless the hook itself failed; "finish --strict" exits 9 while
the issue is not ready, as a CI gate: by the rule of "agentx ready", a
blocking clarification is pending, stale or escalated, or work was sent back
for revision (a non-blocking question never holds the issue up).`,
	}
	cmd.AddCommand(newHookPhaseCmd(a, router.HookStart), newHookStopCmd(a), newHookRewakeCmd(a), newHookPhaseCmd(a, router.HookFinish))
	return cmd
}

// hookResult is what a hook prints.
type hookResult struct {
	Hook    string            `json:"hook"`
	Agent   string            `json:"agent"`
	Issue   int               `json:"issue"`
	Status  ledger.AgentState `json:"status"`
	Monitor *monitor.Report   `json:"monitor,omitempty"` // nil with AGENTX_NO_MONITOR
	Blocked []string          `json:"blockedBy,omitempty"`
	// Evaluation is what the supervisor gate did at finish, when the
	// agent's step has checks (docs/supervisor.md).
	Evaluation *evaluate.Outcome `json:"evaluation,omitempty"`
	// Proposals are the enhancement proposals the gate made or added
	// evidence to, when the work did not pass (also said on stderr in text).
	Proposals []*proposal.Proposal `json:"proposals,omitempty"`
}

func newHookPhaseCmd(a *App, phase string) *cobra.Command {
	var (
		issue    issueFlag
		agent    string
		workflow string
		strict   bool
		step     string
		format   string
	)
	short := "An agent starts work on an issue: status working, then the monitor"
	if phase == router.HookFinish {
		short = "An agent finished an issue: status done, then the monitor closes what it left there (--strict: exit 9 while blocked)"
	}
	cmd := &cobra.Command{
		Use:   phase + " --issue N --agent A",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			n, err := issue.require(a)
			if err != nil {
				return err
			}
			who, err := a.requireAgent("agent", agent)
			if err != nil {
				return err
			}
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			if workflow != "" {
				if _, err := h.Rules().Workflow(workflow); err != nil {
					return err
				}
			}
			res := hookResult{Hook: phase, Agent: who, Issue: n}
			effective := phase
			if phase == router.HookFinish {
				if format != formatText && format != formatClaudeHook {
					return &usageError{Err: fmt.Errorf("--format %q: use text or %s", format, formatClaudeHook)}
				}
				ws, _ := a.open()
				if res.Evaluation, res.Proposals, err = finishGate(ctx, a, ws.Root, h, n, who, workflow, step); err != nil {
					return err
				}
				if res.Evaluation != nil && !res.Evaluation.Done() {
					effective = router.HookStart // not done: the agent is still at work, and keeps its questions
				}
			}
			if res.Status, err = h.Hook(ctx, effective, who, n); err != nil {
				return err
			}
			if s := a.monitorAs(false); s != nil {
				s.hook = &monitor.Hook{Phase: effective, Agent: who, Issue: n}
			}
			return a.later(func(ctx context.Context) error {
				return a.hookView(ctx, h, res, who, n, strict, format)
			})
		}),
	}
	issue.register(cmd, "the issue")
	cmd.Flags().StringVar(&agent, "agent", "", "the agent (default $AGENTX_AGENT)")
	if phase == router.HookStart {
		cmd.Flags().StringVar(&workflow, "workflow", "", "the workflow the agent works in (checked to exist)")
	} else {
		cmd.Flags().BoolVar(&strict, "strict", false, "exit 9 while the issue is not ready (as ready --issue N): a blocking clarification is pending, stale or escalated, or work was sent back for revision")
		cmd.Flags().StringVar(&workflow, "workflow", "", "the workflow whose step's checks evaluate the work (default: config's default_workflow)")
		cmd.Flags().StringVar(&step, "step", "", "the step evaluated (default: the agent's first step with checks)")
		cmd.Flags().StringVar(&format, "format", formatText, "text, or claude-hook: the JSON a Claude Code Stop hook prints to send the agent back with the feedback")
	}
	return cmd
}

// hookView is a hook's output, once the monitor ran: what it did, what
// it closed of the agent's own questions (marked so the inbox does not
// deliver them), and with --strict whether the issue is blocked.
func (a *App) hookView(ctx context.Context, h *router.Hub, res hookResult, who string, n int, strict bool, format string) error {
	if a.side != nil {
		res.Monitor = a.side.report
		a.markClosed(ctx, h, who, res.Monitor)
	}
	if strict { // the gate of ready --issue N
		bs, err := issueBlockers(h, n)
		if err != nil {
			return err
		}
		res.Blocked = router.ReadinessOf(n, bs).Blocked
	}
	if format == formatClaudeHook {
		return finishHookOutput(ctx, a, h, res)
	}
	if err := a.emit(res, func() { a.renderHook(res) }); err != nil {
		return err
	}
	delivered(ctx, a, h, res, false)
	if len(res.Blocked) > 0 {
		return &codedError{Code: ExitBlocked,
			Msg:  fmt.Sprintf("%s has open blocking clarifications: %s", words.Issue(n), strings.Join(res.Blocked, ", ")),
			Todo: "answer or resolve them (agentx clarify show --issue " + fmt.Sprint(n) + ")"}
	}
	return nil
}

func (a *App) renderHook(res hookResult) {
	a.printf("hook %s: %s %s on %s\n", res.Hook, safetext.Line(res.Agent), res.Status, words.IssueRef(res.Issue))
	r := res.Monitor
	switch {
	case r == nil:
		a.printf("monitor: off (%s)\n", envNoMonitor)
	case r.Quiet():
		a.printf("monitor: nothing to do (%d open)\n", r.Open)
	default:
		if r.Index != "" {
			a.printf("monitor: index %s\n", safetext.Line(r.Index))
		}
		for _, f := range r.Acted() {
			a.printf("monitor: %s\n", findingLine(f))
		}
		for _, p := range r.Problems {
			a.printf("monitor: problem: %s\n", safetext.Line(p.Message))
		}
	}
	if len(res.Blocked) > 0 {
		a.printf("blocked by: %s\n", safetext.Line(strings.Join(res.Blocked, ", ")))
	}
	renderGate(a.stdout, res.Evaluation)
}

// markClosed marks what the hook's monitor closed of agent's own questions
// as seen by it: the hook's report tells it, so its inbox need not.
func (a *App) markClosed(ctx context.Context, h *router.Hub, agent string, r *monitor.Report) {
	for _, f := range r.Findings {
		if f.Kind != monitor.KindAbandoned || f.Result != monitor.Done || f.From != agent {
			continue
		}
		if rec, err := h.Get(f.ID); err == nil {
			a.markSeen(ctx, h.Store, agent, inbox.ViaHook, rec)
		}
	}
}
