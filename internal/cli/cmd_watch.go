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
	"github.com/agentx-cli/agentx/internal/workspace"
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
			a.goLive(ws, h)                    // a long-lived process: trust and rules are looked at again as it goes
			defer func() { a.noWake = true }() // watch wakes and says so itself
			size := logSize(h)
			a.watchTurn(ctx, ws, h, true)
			if once {
				return nil
			}
			if !a.json {
				a.printf("%s watching %s: a turn every %s, the event log between turns; Ctrl-C stops\n",
					a.watchStamp(), safetext.Line(ws.Root), interval)
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
					a.watchTurn(ctx, ws, h, false)
				case <-poll.C:
					if n := logSize(h); n != size {
						size = n
						a.watchWoke(a.wakeAgents(ctx))
					}
				}
			}
		}),
	}
	cmd.Flags().DurationVar(&interval, "interval", defaultWatchInterval, "how often to make a whole turn (remote, GitHub, Slack, monitor, wake)")
	cmd.Flags().BoolVar(&once, "once", false, "make one turn and exit")
	return cmd
}

// watchTurn is one turn of agentx watch: the side work of a command's
// lifecycle (remoteSide, the monitor's turn with the outside modes' read,
// the push, wakeAgents), reported as it goes. The first turn's remote
// refresh was made when the hub was opened.
func (a *App) watchTurn(ctx context.Context, ws *workspace.Workspace, h *router.Hub, first bool) {
	a.reloadRules()
	if !first {
		a.remoteSide(ctx, ws)
	}
	if a.monitorOff() {
		a.outsideSide(ctx, h, true)
	} else {
		a.watchReport(a.monitorTurn(ctx, h, &sideMonitor{}))
	}
	a.outsideSide(ctx, h, false)
	a.syncStatus(ctx)
	a.watchWoke(a.wakeAgents(ctx))
	a.watchUndelivered(ctx)
}

// watchUndelivered acts on the answers nobody picked up, and says so.
func (a *App) watchUndelivered(ctx context.Context) {
	for _, o := range a.undelivered(ctx) {
		a.watchLine(WatchEvent{Kind: "undelivered", Undelivered: &o}, func() string {
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

// watchWoke prints the resume commands a wake started.
func (a *App) watchWoke(woke []wake.Woke) {
	for _, w := range woke {
		a.watchLine(WatchEvent{Kind: "woke", Woke: &w}, func() string {
			return fmt.Sprintf("woke %s: %s, %s (%s)", w.Agent, words.Issue(w.Issue), strings.Join(w.IDs, ", "), strings.Join(w.Argv, " "))
		})
	}
}

// watchReport prints a monitor turn's findings as the side monitor does.
func (a *App) watchReport(r *monitor.Report) {
	if r == nil || r.Quiet() {
		return
	}
	if !a.json {
		for _, l := range sideLines(r, true) {
			a.printf("%s monitor: %s\n", a.watchStamp(), l)
		}
		return
	}
	if r.Index != "" {
		a.watchLine(WatchEvent{Kind: "index", Index: r.Index}, nil)
	}
	for _, f := range r.Acted() {
		a.watchLine(WatchEvent{Kind: "finding", Finding: &f}, nil)
	}
	for _, p := range r.Problems {
		a.watchLine(WatchEvent{Kind: "problem", Problem: &p}, nil)
	}
}

// watchLine prints one thing watch did: text's line (neutralised), or
// under --json one compact envelope on a line of its own.
func (a *App) watchLine(e WatchEvent, text func() string) {
	if !a.json {
		a.printf("%s %s\n", a.watchStamp(), safetext.Line(text()))
		return
	}
	e.At = a.now().UTC()
	b, err := json.Marshal(envelope{SchemaVersion: schemaVersion, Data: e})
	if err != nil {
		a.warnf("%v", err)
		return
	}
	a.printf("%s\n", b)
}

// watchStamp is the time in front of each line of watch's text output.
func (a *App) watchStamp() string { return a.now().UTC().Format(time.TimeOnly) }
