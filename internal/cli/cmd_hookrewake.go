package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/eventlog"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/frontends/wake"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// defaultRewakeMax is how long hook rewake waits at most: a working day.
// Claude Code's hook timeout ([setup] writes it a minute above) ends it
// too, and so does the end of the session.
const defaultRewakeMax = 12 * time.Hour

// rewakeSlice is how long one wait of hook rewake's lasts before it looks
// again at what it waits on (the session still open, itself still the
// session's waiter, new questions of the agent's).
const rewakeSlice = time.Minute

// ExitRewake is hook rewake's deliberate exit 2: Claude Code gives its
// stderr to the model as a new turn of the idle session (asyncRewake).
var ExitRewake = ExitCode{2, "rewake", "agentx hook rewake only: the answer is on stderr, for Claude Code to wake the session with (asyncRewake)"}

// clientHookKey marks the commands a client runs as a hook, which exit 2
// only on purpose: Claude Code reads a Stop hook's 2 as "do not stop" and
// a prompt hook's as "block the prompt", so their usage errors, flag
// parsing included, exit 1 (clientHookExit).
const clientHookKey = "agentx/client-hook"

// rewakeOptions are `agentx hook rewake`'s flags.
type rewakeOptions struct {
	issue    issueFlag
	agent    string
	maxWait  time.Duration
	hookTime time.Duration // --timeout, ignored
}

func newHookRewakeCmd(a *App) *cobra.Command {
	o := &rewakeOptions{}
	cmd := &cobra.Command{
		Use:   "rewake --agent A [--issue N]",
		Short: "Wake an idle Claude Code session in place when what it waits on lands (an asyncRewake Stop hook)",
		Long: `The command for Claude Code's Stop hook with "asyncRewake": true, which
Claude Code runs in the background at the end of every turn. It reads the
hook's JSON on stdin (the session's id) and:

  - when the agent has nothing open (no question of its own waiting for an
    answer, a reply, a decision) and nothing undelivered: exits 0 at once;
  - otherwise it becomes the session's live waiter (a newer turn's waiter
    replaces it) and sleeps until something for the agent lands: an answer,
    a further reply, a person's decision, an escalation's outcome. Then it
    prints the inbox text on stderr, marks it delivered (via rewake) and
    exits 2: Claude Code wakes the idle session with it, in place.

While a held "agentx hook stop" waits, that hook delivers; while this
waiter lives, no [agents.NAME] resume command starts a second process on
the session. It never delivers twice, so it cannot loop. It exits 0 quietly
when the question is settled and delivered some other way, when the
session's client exits, when a newer waiter of the session replaces it, or
after --max. Every error is exit 1 (never 2). See docs/agents.md.`,
		Example: `  # .claude/settings.json: "Stop": [{"hooks": [{"type": "command",
  #   "command": "agentx hook rewake --agent engineer", "asyncRewake": true, "timeout": 43260}]}]`,
		Annotations: map[string]string{clientHookKey: "yes"},
		Args:        cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	o.issue.register(cmd, "the issue the agent works on (default: every issue)")
	cmd.Flags().StringVar(&o.agent, "agent", "", "the agent whose session it wakes (default $AGENTX_AGENT)")
	cmd.Flags().DurationVar(&o.maxWait, "max", defaultRewakeMax, "the longest it waits (keep the hook's timeout above it)")
	cmd.Flags().DurationVar(&o.hookTime, "timeout", 0, "ignored: the hook's timeout is Claude Code's setting")
	_ = cmd.Flags().MarkHidden("timeout")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *rewakeOptions) run(ctx context.Context, a *App) error {
	err := o.rewake(ctx, a)
	var noWS *workspace.NotFoundError
	if errors.As(err, &noWS) {
		return nil // no workspace here: nothing to wait for
	}
	return err
}

// rewake is hook rewake's checks, then the wait (after the monitor) as the
// session's live waiter.
func (o *rewakeOptions) rewake(ctx context.Context, a *App) error {
	if a.json {
		return &usageError{Err: fmt.Errorf("hook rewake prints for Claude Code: drop --json")}
	}
	if o.maxWait <= 0 {
		return &usageError{Err: fmt.Errorf("--max %s: must be positive", o.maxWait)}
	}
	p, who, n, err := stopHookStart(a, &o.issue, o.agent)
	if err != nil {
		return err
	}
	if p.SessionID == "" {
		return nil // no session to wake: run by hand, or not from a client
	}
	if headless(a.getenv) {
		// claude -p waits for its async hooks before it exits: a waiter
		// would keep a headless run alive for hours. Its answer goes to
		// [agents.NAME] resume instead.
		return nil
	}
	if err := wake.ValidSession(p.SessionID); err != nil {
		return err
	}
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	a.noWake = true // this process delivers in place; it starts no resume
	if a.side == nil && !a.monitorOff() {
		a.side = &sideMonitor{} // its waits run the monitor when due; findings go to stderr only with the wake
	}
	return a.later(func(ctx context.Context) error {
		return o.wait(ctx, a, &rewaker{a: a, h: h, who: who, issue: n, session: p.SessionID, owner: wake.ClientPID()})
	})
}

// wait waits, at most --max, as w for what comes back to the agent's
// questions, and wakes the session with it: exit 2 with the inbox text on
// stderr (ExitRewake).
func (o *rewakeOptions) wait(ctx context.Context, a *App, w *rewaker) error {
	ctx, cancel := context.WithTimeout(ctx, o.maxWait)
	defer cancel()
	text, err := w.run(ctx)
	if err != nil || text == "" {
		if errors.Is(err, context.DeadlineExceeded) {
			err = nil // waited its longest: the session's next turn waits again
		}
		return err
	}
	fmt.Fprint(a.stderr, text)
	return &codedError{Code: ExitRewake, Msg: "rewake", Quiet: true}
}

// headless reports whether the client that ran the hook has nobody at its
// prompt: Claude Code says so to its hooks (CLAUDE_CODE_SESSION_ATTENDED=0
// under claude -p and the SDK, whose entry point is sdk-*).
func headless(getenv func(string) string) bool {
	return getenv("CLAUDE_CODE_SESSION_ATTENDED") == "0" || strings.HasPrefix(getenv("CLAUDE_CODE_ENTRYPOINT"), "sdk")
}

// rewaker is one session's live waiter.
type rewaker struct {
	a       *App
	h       *router.Hub
	who     string
	issue   *int
	session string
	owner   int // the client's process, 0: unknown
}

// run waits for what comes back to the agent's questions and returns its
// inbox text, marked delivered; "" when there is nothing to wait for any
// more (see newHookRewakeCmd).
func (w *rewaker) run(ctx context.Context) (string, error) {
	if text, open, err := w.look(ctx); text != "" || len(open) == 0 || err != nil {
		return text, err
	}
	release, err := wake.Waiting(ctx, w.h.Store, w.who, w.session, w.owner)
	if err != nil {
		return "", err
	}
	defer release()
	// the waits end as soon as this waiter is replaced or its session closed
	ended, stop := context.WithCancel(ctx)
	defer stop()
	go w.watch(ended, stop)
	log := eventlog.EventLog{Path: filepath.Join(w.h.Store.Dir(), eventlog.File)}
	for {
		if text, done, err := w.round(ctx, ended, log); done || err != nil {
			return text, err
		}
	}
}

// round is one look and one wait of run's: done once there is text to
// deliver, or nothing more to wait for (the waiter was replaced, the
// session closed, nothing left open).
func (w *rewaker) round(ctx, ended context.Context, log eventlog.EventLog) (text string, done bool, err error) {
	if err := ctx.Err(); err != nil {
		return "", true, err // --max, or a signal
	}
	st, err := wake.Look(w.h.Store, w.who, w.session, w.issue)
	if err != nil {
		return "", true, err
	}
	if !w.mine(st) || ended.Err() != nil {
		return "", true, nil // a newer turn's waiter took over, or the session was closed
	}
	var recs []router.Record
	if !st.Held {
		text, open, err := w.look(ctx)
		if text != "" || len(open) == 0 || err != nil {
			return text, true, err
		}
		recs = open
	} else if recs, err = w.waitingOn(); err != nil {
		return "", true, err
	}
	if err := w.sleep(ended, log, recs); err != nil && ended.Err() == nil {
		return "", true, err
	}
	return "", false, nil
}

// mine reports whether this process still waits for its session: its
// record is there and the session's client runs.
func (w *rewaker) mine(st wake.WaitState) bool {
	return st.Mine && (w.owner <= 0 || wake.Alive(w.owner))
}

// watch calls stop once this waiter is replaced or its session closed,
// looking as often as clarify wait does: from every 50 ms up to every
// second.
func (w *rewaker) watch(ctx context.Context, stop func()) {
	poll := 50 * time.Millisecond
	for {
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if st, err := wake.Look(w.h.Store, w.who, w.session, w.issue); err == nil && !w.mine(st) {
			stop()
			return
		}
		poll = min(poll*2, time.Second)
	}
}

// look delivers what came back to the agent's questions (marking it
// delivered), or else returns what the agent still waits on (none: the
// waiter is done).
func (w *rewaker) look(ctx context.Context) (text string, open []router.Record, err error) {
	res, err := inbox.Check(ctx, w.h.Store, inbox.Options{Agent: w.who, Issue: w.issue, Kinds: stopKinds, Limit: inbox.HookLimit, Via: inbox.ViaRewake})
	if err != nil {
		return "", nil, err
	}
	if len(res.Items) > 0 {
		return inbox.Text(res), nil, nil
	}
	open, err = w.waitingOn()
	return "", open, err
}

// waitingOn are the agent's own questions on which something may still
// come back: waiting for an answer, answered (a further reply, a
// resolution by a person), or with a person (a decision).
func (w *rewaker) waitingOn() ([]router.Record, error) {
	recs, _, err := w.h.List(router.Filter{Issue: w.issue, Agent: w.who,
		Statuses: []ledger.Status{ledger.Pending, ledger.Stale, ledger.Answered, ledger.Escalated}})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(recs, func(r router.Record) bool { return r.From != w.who }), nil
}

// sleep waits for the next change, at most rewakeSlice, on recs (what the
// agent waits on): until the event
// log grows (any process's change here, seen at once), and meanwhile, on
// a question waiting for an answer, as clarify wait does (GitHub, Slack
// and the remote read, the monitor run when due).
func (w *rewaker) sleep(ctx context.Context, log eventlog.EventLog, recs []router.Record) error {
	size, err := log.Size()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(recs, func(r router.Record) bool { return !router.Settled(r.Clarification) })
	if i < 0 {
		w.a.outsideSide(ctx, w.h, true)
		return log.WaitGrowth(ctx, size, rewakeSlice)
	}
	grown, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		if log.WaitGrowth(grown, size, rewakeSlice) == nil {
			stop()
		}
	}()
	_, err = waitAnswer(grown, w.a, w.h, recs[i].ID, rewakeSlice)
	if _, ok := errors.AsType[*router.WaitTimeoutError](err); ok || grown.Err() != nil && ctx.Err() == nil {
		err = nil // the slice passed, or the log grew: look again
	}
	return err
}
