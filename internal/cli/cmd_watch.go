package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/wake"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/monitor"
	"github.com/agentx-cli/agentx/router"
)

// defaultWatchInterval is how often agentx watch makes a whole turn.
const defaultWatchInterval = 30 * time.Second

// watchPoll is how often agentx watch looks at the event log's size
// between turns: an answer another process recorded wakes its agent
// within about this long.
const watchPoll = 500 * time.Millisecond

// WatchEvent is one thing agentx watch did: one line of its output, one
// JSON object per line under --json.
type WatchEvent struct {
	At   time.Time  `json:"at"`
	Kind string     `json:"kind"` // woke, undelivered, finding, problem, index
	Woke *wake.Woke `json:"woke,omitempty"`
	// Undelivered is what was done about an answer nobody picked up.
	Undelivered *wake.Overdue    `json:"undelivered,omitempty"`
	Finding     *monitor.Finding `json:"finding,omitempty"`
	Problem     *monitor.Problem `json:"problem,omitempty"`
	Index       string           `json:"index,omitempty"`
}

func newWatchCmd(a *App) *cobra.Command {
	var (
		interval time.Duration
		once     bool
	)
	cmd := &cobra.Command{
		Use:   "watch [--interval 30s] [--once]",
		Short: "Optional: do what commands do on the side, every interval, on a machine where none may run for a while",
		Long: `Every agentx command does some work on the side: it brings the local copies
up to the remote ([remote]), reads GitHub and Slack, runs the monitor (stale
questions, deadlocks, retries that are due), mirrors what changed to GitHub
and Slack, and wakes the agents whose turn has ended ([agents.NAME] resume)
with what came back to their questions. Where agents and people use agentx
all day this needs nothing more. agentx watch does that work every
--interval on a machine where no other agentx command may run for a while,
and between turns follows the event log, so that an answer recorded by a
process that wakes nobody (agentx slack listen, which takes Slack replies
as they are written, or a process killed before it woke the agent) wakes
its agent within a second.

Nothing requires it: without it the same work is done by the next agentx
command, hook or clarify wait. It prints one line per thing it did (an
agent woken: agent, issue, ids; the monitor's findings); warnings (GitHub,
Slack, the remote, a resume command that could not start) go to stderr.
With --json each is one JSON object per line (JSON Lines). It runs until
interrupted (exit 130); --once makes one turn and exits (for cron).
AGENTX_NO_MONITOR leaves the monitor out of its turns.`,
		Example: `  agentx watch                       # until Ctrl-C
  agentx watch --interval 2m --json
  */5 * * * * cd /repo && agentx watch --once   # from cron`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if interval <= 0 {
				return usage(fmt.Errorf("--interval %s: must be above zero", interval))
			}
			ws, h, err := a.hub() // the first open brings the local copies up to the remote
			if err != nil {
				return err
			}
			pass := a.sidePass()
			pass.goLive(ws, h)                 // a long-lived process: trust and rules are looked at again as it goes
			defer func() { a.noWake = true }() // watch wakes and says so itself
			w := newWatcher(a, pass)
			size := logSize(h)
			w.turn(ctx, true)
			if once {
				return nil
			}
			if !a.json {
				a.printf("%s watching %s: a turn every %s, the event log between turns; Ctrl-C stops\n",
					w.stamp(), safetext.Line(ws.Root), interval)
			}
			turn := time.NewTicker(interval)
			defer turn.Stop()
			poll := time.NewTicker(watchPoll)
			defer poll.Stop()
			for {
				select {
				case <-ctx.Done():
					return ctx.Err() // interrupted: exit 130 like any interrupted command
				case <-turn.C:
					size = logSize(h)
					w.turn(ctx, false)
				case <-poll.C:
					if n := logSize(h); n != size {
						size = n
						w.wake(ctx)
					}
				}
			}
		}),
	}
	cmd.Flags().DurationVar(&interval, "interval", defaultWatchInterval, "how often to make a whole turn (remote, GitHub, Slack, monitor, wake)")
	cmd.Flags().BoolVar(&once, "once", false, "make one turn and exit")
	return cmd
}

// watcher is agentx watch's turns, and the desk's every interval: the
// side pass with every step, reported as it goes, one line per thing done
// (one JSON object per line under --json).
type watcher struct {
	pass    *sidePass
	monitor bool // AGENTX_NO_MONITOR leaves the monitor out of the turns
	json    bool
	printf  func(format string, args ...any)
	warn    func(error)
	now     func() time.Time
}

func newWatcher(a *App, p *sidePass) watcher {
	return watcher{pass: p, monitor: !a.monitorOff(), json: a.json, printf: a.printf, warn: func(err error) { a.warnf("%v", err) }, now: a.now}
}

// turn is one turn: the side pass with every step (the rules read again,
// the remote, the channels read, the monitor, agent-status.json, the push,
// the wake, the undelivered). The first turn's remote refresh was made
// when the hub was opened.
func (w watcher) turn(ctx context.Context, first bool) {
	steps := sideSteps{remote: !first, read: true, status: true, push: true, wake: true, undelivered: true}
	if w.monitor {
		steps.monitor = &sideMonitor{}
	}
	res, _ := w.pass.runTurn(ctx, steps, func() error {
		if steps.monitor != nil {
			w.report(steps.monitor.report)
		}
		return nil
	})
	w.woke(res.woke)
	w.undelivered(res.overdue)
}

// wake wakes the agents with something new, between turns.
func (w watcher) wake(ctx context.Context) {
	res, _ := w.pass.runTurn(ctx, sideSteps{wake: true}, nil)
	w.woke(res.woke)
}

// undelivered says what was done about the answers nobody picked up.
func (w watcher) undelivered(overdue []wake.Overdue) {
	for _, o := range overdue {
		w.line(WatchEvent{Kind: "undelivered", Undelivered: &o}, func() string {
			s := fmt.Sprintf("undelivered %s answer (entry %d) to %s: ", o.ID, o.Entry, o.Agent)
			if o.Action == wake.ActionWoke && o.Woke != nil {
				return s + "woke again (" + strings.Join(o.Woke.Argv, " ") + ")"
			}
			if o.Action == wake.ActionWoke {
				return s + "woke again (not started)"
			}
			if o.Action == wake.ActionReemitted {
				return s + "its lost event appended again"
			}
			return s + "notify told"
		})
	}
}

// logSize is the event log's size: when it grows, something was recorded.
func logSize(h *router.Hub) int64 {
	st, err := os.Stat(h.Events.Path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// woke prints the resume commands a wake started.
func (w watcher) woke(woke []wake.Woke) {
	for _, k := range woke {
		w.line(WatchEvent{Kind: "woke", Woke: &k}, func() string {
			return fmt.Sprintf("woke %s: %s, %s (%s)", k.Agent, words.Issue(k.Issue), strings.Join(k.IDs, ", "), strings.Join(k.Argv, " "))
		})
	}
}

// report prints a monitor turn's findings as the side monitor does.
func (w watcher) report(r *monitor.Report) {
	if r == nil || r.Quiet() {
		return
	}
	if !w.json {
		for _, l := range sideLines(r, true) {
			w.printf("%s monitor: %s\n", w.stamp(), l)
		}
		return
	}
	if r.Index != "" {
		w.line(WatchEvent{Kind: "index", Index: r.Index}, nil)
	}
	for _, f := range r.Acted() {
		w.line(WatchEvent{Kind: "finding", Finding: &f}, nil)
	}
	for _, p := range r.Problems {
		w.line(WatchEvent{Kind: "problem", Problem: &p}, nil)
	}
}

// line prints one thing watch did: text's line (neutralised), or under
// --json one compact envelope on a line of its own.
func (w watcher) line(e WatchEvent, text func() string) {
	if !w.json {
		w.printf("%s %s\n", w.stamp(), safetext.Line(text()))
		return
	}
	e.At = w.now().UTC()
	b, err := json.Marshal(envelope{SchemaVersion: schemaVersion, Data: e})
	if err != nil {
		w.warn(err)
		return
	}
	w.printf("%s\n", b)
}

// stamp is the time in front of each line of watch's text output.
func (w watcher) stamp() string { return w.now().UTC().Format(time.TimeOnly) }
