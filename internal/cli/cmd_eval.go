package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/gate/evaluate"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

func newEvalCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "The supervisor gate's evaluations: list, show, and run a step's checks",
		Long: `When an agent finishes an issue ("agentx hook finish"), the checks its
workflow step declares ([[steps.evaluate]]) are run and the attempt is
recorded: PASS, the step is done; NEEDS_REVISION, the work goes back to the
agent with the feedback (at most max_revisions times, default 2); a hard FAIL,
or one more attempt that does not pass, escalates to a person. See
docs/supervisor.md.`,
	}
	cmd.AddCommand(newEvalListCmd(a), newEvalShowCmd(a), newEvalRunCmd(a))
	return cmd
}

// evalRow is one attempt in a list.
type evalRow struct {
	Issue int `json:"issue"`
	*evaluate.Attempt
}

// evalListOptions are `agentx eval list`'s flags.
type evalListOptions struct {
	issue issueFlag
}

func newEvalListCmd(a *App) *cobra.Command {
	o := &evalListOptions{}
	cmd := &cobra.Command{
		Use:   "list [--issue N]",
		Short: "Every evaluation recorded (of one issue with --issue), oldest first",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
	o.issue.register(cmd, "only this issue")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *evalListOptions) run(a *App) error {
	n, err := o.issue.get(a)
	if err != nil {
		return err
	}
	ws, err := a.open()
	if err != nil {
		return err
	}
	issues := []int{}
	if n != nil {
		issues = append(issues, *n)
	} else if issues, err = evaluate.Issues(ws.Store); err != nil {
		return err
	}
	rows := []evalRow{}
	for _, i := range issues {
		rec, err := evaluate.Read(ws.Store, i)
		if err != nil {
			return err
		}
		for _, at := range rec.Attempts {
			rows = append(rows, evalRow{Issue: i, Attempt: at})
		}
	}
	return a.emit(rows, func() { o.text(a, rows) })
}

// text prints rows for a person: a table.
func (o *evalListOptions) text(a *App, rows []evalRow) {
	if len(rows) == 0 {
		a.printf("No evaluations.\n")
		return
	}
	t := table{}
	t.add(plain("ID", "ISSUE", "STEP", "AGENT", "ATTEMPT", "VERDICT", "OUTCOME", "NOT PASSED")...)
	for _, r := range rows {
		t.add(plain(r.ID, words.IssueRef(r.Issue), r.Workflow+"/"+r.Step, r.Agent,
			fmt.Sprintf("%d of %d", r.Attempt.Attempt, r.MaxAttempts), r.Verdict.Label(), outcomeText(r.Attempt), strings.Join(r.FailedChecks(), ", "))...)
	}
	t.write(a.stdout, "")
}

func outcomeText(at *evaluate.Attempt) string {
	if at.Outcome == evaluate.OutcomeEscalated && at.Escalation != "" {
		return "escalated " + safetext.Line(at.Escalation)
	}
	return safetext.Line(at.Outcome)
}

// evalShowOptions are `agentx eval show`'s argument.
type evalShowOptions struct {
	target string // ISSUE or EVAL-ID
}

func newEvalShowCmd(a *App) *cobra.Command {
	o := &evalShowOptions{}
	cmd := &cobra.Command{
		Use:   "show ISSUE|EVAL-ID",
		Short: "An issue's evaluations, or one, with each check's verdict, feedback and output",
		Example: `  agentx eval show 42
  agentx eval show EVAL-42-2`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.target = args[0]
			return o.run(a)
		}),
	}
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *evalShowOptions) run(a *App) error {
	issue, only, err := evalTarget(o.target)
	if err != nil {
		return err
	}
	ws, err := a.open()
	if err != nil {
		return err
	}
	rec, err := evaluate.Read(ws.Store, issue)
	if err != nil {
		return err
	}
	if only != "" {
		at := rec.Find(only)
		if at == nil {
			return fmt.Errorf("evaluation %s: %w", only, ledger.ErrNotFound)
		}
		rec.Attempts = []*evaluate.Attempt{at}
	}
	if rec.Attempts == nil {
		rec.Attempts = []*evaluate.Attempt{}
	}
	return a.emit(rec, func() {
		if len(rec.Attempts) == 0 {
			a.printf("No evaluations %s.\n", words.OnIssue(issue))
		}
		for i, at := range rec.Attempts {
			if i > 0 {
				a.printf("\n")
			}
			printAttempt(a.stdout, a.paint(boldAttr), issue, at)
		}
	})
}

// evalTarget reads ISSUE or EVAL-ID.
func evalTarget(arg string) (issue int, id string, err error) {
	if n, ok := evaluate.ParseID(arg); ok {
		return n, arg, nil
	}
	n, err := ledger.ParseIssue(arg)
	if err != nil {
		return 0, "", &usageError{Err: fmt.Errorf("%q: want an issue number or an evaluation id (EVAL-42-1)", arg)}
	}
	return n, "", nil
}

// printAttempt prints one attempt for a person, its id in bold.
func printAttempt(w io.Writer, bold func(string) string, issue int, at *evaluate.Attempt) {
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	printf("%s  %s  %s/%s  %s  attempt %d of %d  %s\n", bold(safetext.Line(at.ID)), words.IssueRef(issue), safetext.Line(at.Workflow), safetext.Line(at.Step),
		safetext.Line(at.Agent), at.Attempt, at.MaxAttempts, at.At.UTC().Format("2006-01-02 15:04"))
	printf("  verdict: %s, %s\n", at.Verdict.Label(), outcomeText(at))
	for _, c := range at.Checks {
		note := fmt.Sprintf("exit %d", c.ExitCode)
		if c.TimedOut {
			note = "timed out"
		}
		if c.JSON {
			note += ", JSON verdict"
		}
		printf("  - %s: %s (%s, %d ms)  %s\n", safetext.Line(c.Name), c.Verdict.Label(), note, c.DurationMs, safetext.Line(strings.Join(c.Command, " ")))
		if c.Feedback != "" {
			printf("%s", safetext.Indent(c.Feedback, "      feedback: ", "        "))
		}
		if c.Output != "" && c.Output != c.Feedback {
			printf("%s", safetext.Indent(c.Output, "      output: ", "        "))
		}
	}
}

// evalRunOptions are `agentx eval run`'s flags.
type evalRunOptions struct {
	issue                 issueFlag
	agent, workflow, step string
}

func newEvalRunCmd(a *App) *cobra.Command {
	o := &evalRunOptions{}
	cmd := &cobra.Command{
		Use:   "run --issue N --agent A [--workflow W] [--step S]",
		Short: "Run a step's checks now and print the verdicts, recording nothing (exit 9 unless PASS)",
		Long: `Run the checks of agent A's step (the first of its steps with checks, or
--step) as "hook finish" would, and print each verdict. Nothing is recorded,
nothing sent back or escalated: for people trying their checks, and CI.
Exit 0 when the verdict is PASS, 9 otherwise.`,
		Example: `  agentx eval run --issue 42 --agent engineer`,
		Args:    cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	o.issue.register(cmd, "the issue")
	cmd.Flags().StringVar(&o.agent, "agent", "", "the worker (default $AGENTX_AGENT)")
	cmd.Flags().StringVar(&o.workflow, "workflow", "", "the workflow (default: config's default_workflow)")
	cmd.Flags().StringVar(&o.step, "step", "", "the step (default: the agent's first step with checks)")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *evalRunOptions) run(ctx context.Context, a *App) error {
	n, err := o.issue.require(a)
	if err != nil {
		return err
	}
	who, err := required("agent", a.agentDefault(o.agent))
	if err != nil {
		return err
	}
	ws, h, err := a.hub() // fetched: the step's last escalation may have been settled elsewhere
	if err != nil {
		return err
	}
	w, s, err := gatedStep(h, who, o.workflow, o.step)
	if err != nil {
		return err
	}
	if s == nil {
		return &codedError{Code: ExitNotFound, Msg: fmt.Sprintf("%s has no step with checks in workflow %s", who, w.Name),
			Todo: "add [[steps.evaluate]] checks to its step (docs/supervisor.md), or name one with --step"}
	}
	g := newGate(ws.Root, h)
	job, _, err := g.Job(n, who, w, s)
	if err != nil {
		return err
	}
	at, err := g.Evaluate(ctx, job)
	if err != nil {
		return err
	}
	at.ID = "(not recorded)"
	if err := a.emit(evalRow{Issue: n, Attempt: at}, func() { printAttempt(a.stdout, a.paint(boldAttr), n, at) }); err != nil {
		return err
	}
	if at.Verdict != evaluate.Pass {
		return &codedError{Code: ExitBlocked, Msg: fmt.Sprintf("step %s %s: %s", s.ID, words.OnIssue(n), at.Verdict.Label()), Quiet: true}
	}
	return nil
}

// gatedStep is the workflow and the agent's step to evaluate (nil: none).
func gatedStep(h *router.Hub, agent, wf, step string) (*workflow.Workflow, *workflow.Step, error) {
	w, err := h.Rules().Workflow(wf)
	if err != nil {
		return nil, nil, err
	}
	s, err := w.Gated(agent, step)
	return w, s, err
}

// newGate is the supervisor gate over the hub.
func newGate(root string, h *router.Hub) *evaluate.Gate {
	return &evaluate.Gate{Hub: h, Runner: evaluate.Runner{Dir: root, Store: h.Store}}
}

// finishGate evaluates the work of agent on issue when its step has checks;
// nil when there is nothing to evaluate. It returns too the proposals the
// gate made of a failure (see afterFailure).
func finishGate(ctx context.Context, a *App, root string, h *router.Hub, issue int, agent, wf, step string) (*evaluate.Outcome, []*proposal.Proposal, error) {
	w, s, err := gatedStep(h, agent, wf, step)
	if err != nil || s == nil || len(s.Evaluate) == 0 {
		return nil, nil, err
	}
	if !checksTrusted(h, w, s) {
		return &evaluate.Outcome{Issue: issue, Agent: agent, Workflow: w.Name, Step: s.ID, Result: evaluate.ResultUntrusted}, nil, nil
	}
	out, err := newGate(root, h).Finish(ctx, issue, agent, w, s)
	if err != nil {
		return nil, nil, err
	}
	var ps []*proposal.Proposal
	if out.Attempt != nil && out.Attempt.Verdict != evaluate.Pass {
		ps = afterFailure(ctx, a, h, issue, out.Attempt)
	}
	return out, ps, nil
}

// revisionItems are the revision requests not yet delivered to agent, as
// inbox items, and a function that marks them delivered.
func revisionItems(ctx context.Context, a *App, store *ledger.Store, agent string, issue *int) ([]inbox.Item, func(), error) {
	ps, skipped, err := evaluate.PendingFor(store, agent, issue)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range skipped {
		a.warnf("%v: its revision requests are left out (fix the file or move it aside)", e)
	}
	items := make([]inbox.Item, 0, len(ps))
	for _, p := range ps {
		items = append(items, inbox.Item{
			Kind: inbox.KindRevision, ID: p.Attempt.ID, Issue: p.Issue, Topic: "step " + p.Attempt.Step,
			From: agent, To: agent, By: router.HubAgent, Round: p.Attempt.Attempt, Blocking: true, Status: ledger.Pending,
			Body: evaluate.RequestText(p.Issue, p.Attempt), At: p.Attempt.At, Key: fmt.Sprintf("%s:revision:%d", p.Attempt.ID, p.Attempt.Attempt),
		})
	}
	mark := func() {
		for _, p := range ps {
			a.warnIf(evaluate.MarkDelivered(ctx, store, p.Issue, p.Attempt.ID))
		}
	}
	return items, mark, nil
}

// gateMessage is what a Claude Code hook shows the person (its
// systemMessage) when the gate sent nothing back to the agent: the checks
// not run because this machine does not trust the workspace's commands,
// the step waiting for a person's decision, or an escalation; "" when the
// work passed or went back for revision.
func gateMessage(o *evaluate.Outcome) string {
	switch o.Result {
	case evaluate.ResultUntrusted:
		return fmt.Sprintf("agentx: the checks of step %s on %s were not run: this machine does not trust the workspace's commands. A person reviews and trusts them with agentx trust; the agent's next hook finish (or Stop hook) runs them",
			o.Step, words.Issue(o.Issue))
	case evaluate.ResultWaiting:
		return fmt.Sprintf("agentx: the work on %s (step %s) waits for a person's decision on %s, and no checks run until it is settled: agentx clarify show %s",
			words.Issue(o.Issue), o.Step, o.Escalation, o.Escalation)
	case evaluate.OutcomeEscalated:
		return fmt.Sprintf("agentx: the work on %s (step %s) did not pass evaluation and waits for a person's decision on %s: agentx clarify show %s",
			words.Issue(o.Issue), o.Step, o.Escalation, o.Escalation)
	}
	return ""
}

// renderGate prints what the gate did at hook finish.
func renderGate(w io.Writer, o *evaluate.Outcome) {
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	if o == nil {
		return
	}
	at := o.Attempt
	switch o.Result {
	case evaluate.ResultUntrusted:
		printf("evaluation: step %s waits: its checks were not run, since this machine does not trust the workspace's commands (a person runs agentx trust)\n", safetext.Line(o.Step))
	case evaluate.ResultWaiting:
		printf("evaluation: step %s waits for a person's decision on %s (no checks run): agentx clarify show %s\n",
			safetext.Line(o.Step), safetext.Line(o.Escalation), safetext.Line(o.Escalation))
	case evaluate.OutcomeDone:
		printf("evaluation %s: PASS: step %s done (attempt %d of %d)\n", safetext.Line(at.ID), safetext.Line(o.Step), at.Attempt, at.MaxAttempts)
	case evaluate.OutcomeRevise:
		printf("evaluation %s: %s: sent back for revision (attempt %d of %d)\n", safetext.Line(at.ID), at.Verdict.Label(), at.Attempt, at.MaxAttempts)
		printf("%s", safetext.Indent(o.Request, "  ", "  "))
	case evaluate.OutcomeEscalated:
		printf("evaluation %s: %s: escalated to a person as %s (attempt %d of %d): agentx clarify show %s\n", safetext.Line(at.ID), at.Verdict.Label(),
			safetext.Line(o.Escalation), at.Attempt, at.MaxAttempts, safetext.Line(o.Escalation))
	}
}

// delivered marks the revision request hook finish printed as delivered,
// when the worker reads that output: it runs as the worker (AGENTX_AGENT),
// or prints for a Claude Code hook (hook is true). Run by someone else (a
// CI job, a person), the request waits in the worker's inbox.
func delivered(ctx context.Context, a *App, h *router.Hub, res hookResult, hook bool) {
	if !hook && a.getenv(router.EnvAgent) != res.Agent {
		return
	}
	if e := res.Evaluation; e != nil && e.Result == evaluate.OutcomeRevise {
		a.warnIf(evaluate.MarkDelivered(ctx, h.Store, e.Issue, e.Attempt.ID))
	}
}

// stopHookOutput is what a Claude Code Stop hook prints on stdout (exit 0):
// decision "block" with a reason keeps the agent working, the reason its
// next instruction; systemMessage is shown to the user.
type stopHookOutput struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

// finishHookOutput prints hook finish's result for a Claude Code Stop
// hook: the revision request as a block decision, an escalation as a
// message to the user, nothing when the work passed.
func finishHookOutput(ctx context.Context, a *App, h *router.Hub, res hookResult) error {
	e := res.Evaluation
	var out stopHookOutput
	switch {
	case e == nil || e.Result == evaluate.OutcomeDone:
		return nil
	case e.Result == evaluate.OutcomeRevise:
		out = stopHookOutput{Decision: "block", Reason: safetext.Block(e.Request)}
	default:
		msg := gateMessage(e)
		if msg == "" {
			return nil
		}
		out.SystemMessage = safetext.Line(msg)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if _, err := a.stdout.Write(append(b, '\n')); err != nil {
		return err
	}
	delivered(ctx, a, h, res, true)
	return nil
}
