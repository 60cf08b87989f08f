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

// phaseOptions are `agentx hook start` and `hook finish`'s flags.
type phaseOptions struct {
	phase    string // router.HookStart or HookFinish
	issue    issueFlag
	agent    string
	workflow string
	strict   bool
	step     string
	format   string
}

func newHookPhaseCmd(a *App, phase string) *cobra.Command {
	o := &phaseOptions{phase: phase}
	short := "An agent starts work on an issue: status working, then the monitor"
	if phase == router.HookFinish {
		short = "An agent finished an issue: status done, then the monitor closes what it left there (--strict: exit 9 while blocked)"
	}
	cmd := &cobra.Command{
		Use:   phase + " --issue N --agent A",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	o.issue.register(cmd, "the issue")
	cmd.Flags().StringVar(&o.agent, "agent", "", "the agent (default $AGENTX_AGENT)")
	if phase == router.HookStart {
		cmd.Flags().StringVar(&o.workflow, "workflow", "", "the workflow the agent works in (checked to exist)")
	} else {
		cmd.Flags().BoolVar(&o.strict, "strict", false, "exit 9 while the issue is not ready (as ready --issue N): a blocking clarification is pending, stale or escalated, or work was sent back for revision")
		cmd.Flags().StringVar(&o.workflow, "workflow", "", "the workflow whose step's checks evaluate the work (default: config's default_workflow)")
		cmd.Flags().StringVar(&o.step, "step", "", "the step evaluated (default: the agent's first step with checks)")
		cmd.Flags().StringVar(&o.format, "format", formatText, "text, or claude-hook: the JSON a Claude Code Stop hook prints to send the agent back with the feedback")
	}
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *phaseOptions) run(ctx context.Context, a *App) error {
	n, err := o.issue.require(a)
	if err != nil {
		return err
	}
	who, err := a.requireAgent("agent", o.agent)
	if err != nil {
		return err
	}
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	if o.workflow != "" {
		if _, err := h.Rules().Workflow(o.workflow); err != nil {
			return err
		}
	}
	res := hookResult{Hook: o.phase, Agent: who, Issue: n}
	effective := o.phase
	if o.phase == router.HookFinish {
		if effective, err = o.finish(ctx, a, h, &res); err != nil {
			return err
		}
	}
	if res.Status, err = h.Hook(ctx, effective, who, n); err != nil {
		return err
	}
	if s := a.monitorAs(false); s != nil {
		s.hook = &monitor.Hook{Phase: effective, Agent: who, Issue: n}
	}
	return a.later(func(ctx context.Context) error { return o.view(ctx, a, h, res) })
}

// finish runs the supervisor gate on the agent's work at hook finish and
// returns the phase the hook records: finish, or start while the work is
// not done (the agent is still at work, and keeps its questions).
func (o *phaseOptions) finish(ctx context.Context, a *App, h *router.Hub, res *hookResult) (string, error) {
	if o.format != formatText && o.format != formatClaudeHook {
		return "", &usageError{Err: fmt.Errorf("--format %q: use text or %s", o.format, formatClaudeHook)}
	}
	ws, _ := a.open()
	var err error
	if res.Evaluation, res.Proposals, err = finishGate(ctx, a, ws.Root, h, res.Issue, res.Agent, o.workflow, o.step); err != nil {
		return "", err
	}
	if res.Evaluation != nil && !res.Evaluation.Done() {
		return router.HookStart, nil
	}
	return router.HookFinish, nil
}

// view is a hook's output, once the monitor ran: what it did, what it
// closed of the agent's own questions (marked so the inbox does not
// deliver them), and with --strict whether the issue is blocked.
func (o *phaseOptions) view(ctx context.Context, a *App, h *router.Hub, res hookResult) error {
	if a.side != nil {
		res.Monitor = a.side.report
		markClosed(ctx, a.warnIf, h, res.Agent, res.Monitor)
	}
	n := res.Issue
	if o.strict { // the gate of ready --issue N
		rs, _, err := h.Ready(&n)
		if err != nil {
			return err
		}
		res.Blocked = rs[0].Blocked
	}
	if o.format == formatClaudeHook {
		return finishHookOutput(ctx, a, h, res)
	}
	if err := a.emit(res, func() { renderHook(a, res) }); err != nil {
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

// renderHook writes a hook's result as text.
func renderHook(a *App, res hookResult) {
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
func markClosed(ctx context.Context, warn func(error), h *router.Hub, agent string, r *monitor.Report) {
	for _, f := range r.Findings {
		if f.Kind != monitor.KindAbandoned || f.Result != monitor.Done || f.From != agent {
			continue
		}
		if rec, err := h.Get(f.ID); err == nil {
			markSeen(ctx, warn, h.Store, agent, inbox.ViaHook, rec)
		}
	}
}
