package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/frontends/wake"
	"github.com/agentx-cli/agentx/internal/gate/evaluate"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// defaultHold is how long hook stop holds a turn for the answer to an open
// blocking question: well within Claude Code's default hook timeout (10
// minutes), so the hook is not cancelled while it waits.
const defaultHold = 5 * time.Minute

// maxStopPayload bounds what hook stop reads of its stdin (Claude Code's
// hook JSON is a few hundred bytes).
const maxStopPayload = 1 << 20

// stopPayload is what Claude Code gives a Stop hook on stdin (the fields
// agentx reads; the rest is ignored).
type stopPayload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// stopKinds are the inbox items a turn's end delivers: what came back to
// the agent's own questions. Questions waiting for it to answer stay for
// its next prompt.
var stopKinds = []inbox.Kind{inbox.KindAnswer, inbox.KindResolved, inbox.KindEscalated, inbox.KindAbandoned}

// stopOptions are `agentx hook stop`'s flags.
type stopOptions struct {
	issue          issueFlag
	agent          string
	workflow, step string
	hold           time.Duration
}

func newHookStopCmd(a *App) *cobra.Command {
	o := &stopOptions{}
	cmd := &cobra.Command{
		Use:   "stop --agent A [--issue N] [--hold 5m]",
		Short: "An agent's turn ended (Claude Code's Stop hook): deliver answers, hold for a blocking one, never close a question",
		Long: `The command for Claude Code's Stop hook, which fires at the end of every
turn. A turn's end is not the end of the agent's work on the issue: this
hook never closes a question (that is "agentx hook finish"). It reads the
hook's JSON on stdin and, in order:

  1. answers, decisions or escalations of the agent's own questions that it
     has not seen: the stop is blocked with them ({"decision":"block"}), so
     the session carries on with the answer in context;
  2. an open blocking question of the agent's with no answer: the turn is
     held, waiting for the answer (as "clarify wait" does, reading GitHub,
     Slack and the remote) up to --hold; an answer that comes blocks the
     stop with it; none, and the agent stops, with a message saying what it
     waits on (its answer comes with the agent's next prompt, through the
     inbox hook); settled with nothing to tell the agent (it withdrew the
     question elsewhere, say), the hook goes on as if it were not open;
  3. nothing open, and the agent's step has checks: the supervisor gate, as
     at hook finish (a revision request blocks the stop);
  4. otherwise the agent stops.

When Claude Code is already continuing because of a Stop hook
(stop_hook_active), only new answers block: no hold, no gate, so it never
loops. Prints nothing, or one JSON object for Claude Code; exit 0 unless the
hook itself failed (exit 1: Claude Code shows the error and lets the agent
stop). See docs/agents.md.`,
		Example: `  # .claude/settings.json: "Stop": [{"hooks": [{"type": "command",
  #   "command": "agentx hook stop --agent engineer", "timeout": 600}]}]
  echo '{"hook_event_name":"Stop","stop_hook_active":false}' | agentx hook stop --agent engineer --issue 77`,
		Annotations: map[string]string{clientHookKey: "yes"},
		Args:        cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a, cmd)
		}),
	}
	o.issue.register(cmd, "the issue the agent works on (default: every issue)")
	cmd.Flags().StringVar(&o.agent, "agent", "", "the agent whose turn ended (default $AGENTX_AGENT)")
	cmd.Flags().DurationVar(&o.hold, "hold", defaultHold, "how long to hold the turn for the answer to an open blocking question (default: [agents.NAME] hold, else 5m; keep the hook's timeout above it)")
	cmd.Flags().StringVar(&o.workflow, "workflow", "", "the workflow whose step's checks evaluate the work when nothing is open (default: config's default_workflow)")
	cmd.Flags().StringVar(&o.step, "step", "", "the step evaluated (default: the agent's first step with checks)")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *stopOptions) run(ctx context.Context, a *App, cmd *cobra.Command) error {
	a.holdGiven = cmd.Flags().Changed("hold")
	err := o.stop(ctx, a)
	var noWS *workspace.NotFoundError
	if errors.As(err, &noWS) {
		return nil // no workspace here: nothing to deliver, the agent stops
	}
	// Claude Code reads exit 2 from a Stop hook as "block": a usage
	// error exits 1 (clientHookKey)
	return err
}

// stop is hook stop's checks, then the view (after the monitor) that
// delivers, holds or gates.
func (o *stopOptions) stop(ctx context.Context, a *App) error {
	if a.json {
		return &usageError{Err: fmt.Errorf("hook stop prints Claude Code's hook JSON: drop --json")}
	}
	if o.hold < 0 {
		return &usageError{Err: fmt.Errorf("--hold %s: must not be negative", o.hold)}
	}
	p, who, n, err := stopHookStart(a, &o.issue, o.agent)
	if err != nil {
		return err
	}
	ws, h, err := a.hub()
	if err != nil {
		return err
	}
	// where the agent can be reached when an answer lands after this turn
	if err := wake.RecordSession(ctx, h.Store, who, n, wake.Session{ID: p.SessionID, Cwd: p.Cwd, Transcript: p.TranscriptPath, Owner: wake.ClientPID()}); err != nil {
		a.warnf("%v", err)
	}
	if a.side == nil && !a.monitorOff() {
		a.side = &sideMonitor{} // a hook runs the monitor; its findings go to stderr, never in the hook's JSON
	}
	turn := stopTurn{h: h, root: ws.Root, payload: p, who: who, issue: n, hold: o.holdFor(a, h, who)}
	return a.later(func(ctx context.Context) error {
		out, err := o.decide(ctx, a, turn)
		if err != nil || out == nil {
			return err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		_, err = a.stdout.Write(append(b, '\n'))
		return err
	})
}

// holdFor is how long to hold who's turn: --hold when given, else
// [agents.NAME] hold, else --hold's default.
func (o *stopOptions) holdFor(a *App, h *router.Hub, who string) time.Duration {
	if !a.holdGiven {
		if d := h.Rules().Config.Agents[who].Hold.Duration; d > 0 {
			return d
		}
	}
	return o.hold
}

// stopTurn is the turn hook stop decides on: the hub, the repository root,
// the hook's JSON, the agent, its issue (nil: every one) and how long to
// hold the turn.
type stopTurn struct {
	h       *router.Hub
	root    string
	payload stopPayload
	who     string
	issue   *int
	hold    time.Duration
}

// stopHookStart reads what both Stop hooks (hook stop, hook rewake) start
// from: the hook's JSON on stdin, the agent, the issue (nil: every one).
func stopHookStart(a *App, issue *issueFlag, agent string) (stopPayload, string, *int, error) {
	p, err := readHookPayload(a.stdin)
	if err != nil {
		return p, "", nil, err
	}
	who, err := a.requireAgent("agent", agent)
	if err != nil {
		return p, "", nil, err
	}
	n, err := issue.get(a)
	return p, who, n, err
}

// envSession names the session an agent process runs in, for a client
// whose hooks do not report it (a script, a CI job that resumes by id):
// an ask or the MCP server records it as hook stop records a hook's.
const envSession = "AGENTX_SESSION"

// recordEnvSession records AGENTX_SESSION, when set, as where agent can be
// reached for issue (nil: any): a failure is a warning.
func (a *App) recordEnvSession(ctx context.Context, store *ledger.Store, agent string, issue *int) {
	id := strings.TrimSpace(a.getenv(envSession))
	if id == "" || agent == "" || ledger.IsHuman(agent) {
		return
	}
	cwd, _ := os.Getwd()
	if err := wake.RecordSession(ctx, store, agent, issue, wake.Session{ID: id, Cwd: cwd}); err != nil {
		a.warnf("%s: %v", envSession, err)
	}
}

// readHookPayload reads Claude Code's hook JSON from stdin (hook stop,
// and the inbox's claude-hook format): nothing (a terminal, or empty
// input: run by hand) is a zero payload.
func readHookPayload(stdin io.Reader) (stopPayload, error) {
	var p stopPayload
	if f, ok := stdin.(interface{ Fd() uintptr }); ok && isatty.IsTerminal(f.Fd()) {
		return p, nil
	}
	b, err := io.ReadAll(io.LimitReader(stdin, maxStopPayload+1))
	if err != nil {
		return p, fmt.Errorf("read the hook's input: %w", err)
	}
	if len(b) > maxStopPayload {
		return p, &usageError{Err: fmt.Errorf("the hook's input on stdin is over %d bytes: not Claude Code's hook JSON", maxStopPayload)}
	}
	if strings.TrimSpace(string(b)) == "" {
		return p, nil
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, &usageError{Err: fmt.Errorf("the hook's input on stdin is not Claude Code's hook JSON: %v", err)}
	}
	return p, nil
}

// decide is what hook stop tells Claude Code, nil to let the agent stop
// without a word (see newHookStopCmd for the order).
func (o *stopOptions) decide(ctx context.Context, a *App, t stopTurn) (*stopHookOutput, error) {
	if out, err := stopDeliver(ctx, t.h, t.who, t.issue); out != nil || err != nil {
		return out, err
	}
	if t.payload.StopHookActive {
		return nil, nil // already continuing for a Stop hook: never hold or gate twice
	}
	waiting, err := openBlocking(t.h, t.who, t.issue)
	if err != nil {
		return nil, err
	}
	if len(waiting) > 0 && t.hold > 0 {
		if out, err := holdTurn(ctx, a, t, waiting[0].ID); out != nil || err != nil {
			return out, err
		}
		// settled with nothing to tell (withdrawn, say), or not: what
		// waits now
		if waiting, err = openBlocking(t.h, t.who, t.issue); err != nil {
			return nil, err
		}
	}
	if len(waiting) > 0 {
		return &stopHookOutput{SystemMessage: waitsOn(t.h, t.who, waiting)}, nil
	}
	if t.issue == nil {
		return nil, nil
	}
	return o.gate(ctx, a, t)
}

// holdTurn holds the turn up to t.hold for the answer to id, then
// delivers what came back (nil: nothing did). Nothing wakes the agent
// while its turn is held: this hook delivers, and marks what it delivers
// before the hold goes (a waker that looks once it has gone finds it
// delivered).
func holdTurn(ctx context.Context, a *App, t stopTurn, id string) (*stopHookOutput, error) {
	end := time.Now().Add(t.hold)
	release, err := wake.Holding(ctx, t.h.Store, t.who, t.issue, t.h.Store.Now().Add(t.hold))
	if err != nil {
		return nil, err
	}
	defer release()
	rec, err := waitAnswer(ctx, a, t.h, id, t.hold)
	_, timedOut := errors.AsType[*router.WaitTimeoutError](err)
	if err != nil && !timedOut {
		return nil, err
	}
	out, err := stopDeliver(ctx, t.h, t.who, t.issue)
	if out != nil || err != nil || timedOut {
		return out, err
	}
	// The answer is in the ledger, and what delivers it is its event,
	// which its writer appends right after the ledger's rename: a hold
	// that let go now would leave it to a waker, which resumes the agent
	// in a new run instead of this one. Wait for the event, within the
	// hold and for at most eventGrace (a writer killed in between leaves
	// none until doctor --fix appends it), unless nothing of what settled
	// it is for the agent to be told (it resolved or withdrew it itself,
	// another agent resolved it, it saw the answer another way).
	if rec.Clarification != nil {
		if due, err := inbox.Due(t.h.Store, t.who, rec.Clarification, stopKinds); err == nil && !due {
			return nil, nil
		}
	}
	if grace := time.Now().Add(eventGrace); grace.Before(end) {
		end = grace
	}
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(eventPoll):
		}
		if out, err := stopDeliver(ctx, t.h, t.who, t.issue); out != nil || err != nil {
			return out, err
		}
	}
	return nil, nil
}

// eventGrace bounds how long a held turn waits, once the answer is in the
// ledger, for its event (see holdTurn); eventPoll is how often it looks.
const (
	eventGrace = 3 * time.Second
	eventPoll  = 20 * time.Millisecond
)

// waitsOn is the message an agent stops with while its blocking questions
// wait (none came within the hold): what it waits on, and how the answer
// will reach it.
func waitsOn(h *router.Hub, who string, waiting []router.Record) string {
	ids := make([]string, len(waiting))
	for i, r := range waiting {
		ids[i] = r.ID
	}
	how := "the answer wakes this session in place when agentx hook rewake is wired, else comes with the agent's next prompt (agentx inbox hook)"
	switch resumeOf(h, who) {
	case resumeTrusted:
		how = "the agent is woken when it is answered: in place (agentx hook rewake) while the session is open, else by [agents." + who + "] resume"
	case resumeUntrusted:
		how = "not woken by [agents." + who + "] resume: the resume command is not trusted on this machine (agentx trust); the answer comes in place (agentx hook rewake) or with the agent's next prompt"
	}
	return safetext.Line(fmt.Sprintf("agentx: %s waits on %s (blocking, no answer yet); %s",
		who, strings.Join(ids, ", "), how))
}

// gate runs the supervisor gate when nothing is open on the issue: a
// revision request blocks the stop, an escalation or an untrusted check
// is said.
func (o *stopOptions) gate(ctx context.Context, a *App, t stopTurn) (*stopHookOutput, error) {
	out, _, err := finishGate(ctx, a, t.root, t.h, *t.issue, t.who, o.workflow, o.step)
	if err != nil || out == nil {
		return nil, err
	}
	switch out.Result {
	case evaluate.OutcomeRevise:
		a.warnIf(evaluate.MarkDelivered(ctx, t.h.Store, out.Issue, out.Attempt.ID))
		return &stopHookOutput{Decision: "block", Reason: safetext.Block(out.Request)}, nil
	case evaluate.OutcomeEscalated, evaluate.ResultUntrusted:
		return &stopHookOutput{SystemMessage: safetext.Line(gateMessage(out))}, nil
	}
	return nil, nil
}

// The states of an agent's resume command (resumeOf).
const (
	resumeNone      = iota // none configured
	resumeTrusted          // configured and trusted on this machine
	resumeUntrusted        // configured, not trusted: nothing runs it
)

// resumeOf is the state of who's [agents.NAME] resume command.
func resumeOf(h *router.Hub, who string) int {
	switch {
	case len(h.Rules().Config.Agents[who].Resume) == 0 && len(h.Rules().Config.Agents[who].Queue) == 0:
		return resumeNone
	case slices.Contains(untrustedResumes(h.Trust, h.Rules()), who):
		return resumeUntrusted
	}
	return resumeTrusted
}

// stopDeliver blocks the stop with what came back to who's questions and
// it has not seen, marking it delivered; nil when there is nothing.
func stopDeliver(ctx context.Context, h *router.Hub, who string, n *int) (*stopHookOutput, error) {
	res, err := inbox.Check(ctx, h.Store, inbox.Options{Agent: who, Issue: n, Kinds: stopKinds, Limit: inbox.HookLimit, Via: inbox.ViaHookStop})
	if err != nil || len(res.Items) == 0 {
		return nil, err
	}
	return &stopHookOutput{Decision: "block", Reason: inbox.Text(res)}, nil
}

// openBlocking are who's own blocking questions (on issue n, or every
// issue) that wait for an answer, oldest first.
func openBlocking(h *router.Hub, who string, n *int) ([]router.Record, error) {
	recs, _, err := h.List(router.Filter{Issue: n, Agent: who, Statuses: []ledger.Status{ledger.Pending, ledger.Stale}})
	if err != nil {
		return nil, err
	}
	recs = slices.DeleteFunc(recs, func(r router.Record) bool { return r.From != who || !r.Blocking })
	slices.SortFunc(recs, func(x, y router.Record) int { return x.Created.Compare(y.Created.Time) })
	return recs, nil
}
