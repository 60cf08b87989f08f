package cli

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/channels/slackmode"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/frontends/wake"
	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// channel is one outside channel the side work reads before a change and
// pushes after it. A new channel is one entry in channels: nothing else
// names them.
type channel struct {
	name string
	// open opens the channel over h: a nil mode when it is not configured.
	// mode makes its relay.Mode for one piece of work, its failures going
	// to warn; err is why it could not be opened (no token), said by the
	// mode at its first use.
	open func(ctx context.Context, h *router.Hub, getenv func(string) string, warn func(error)) (mode func(err error, warn func(error)) *relay.Mode, err error)
}

// channels are the outside channels, in the order the side work reads and
// pushes them.
var channels = []channel{
	{"github", func(ctx context.Context, h *router.Hub, getenv func(string) string, warn func(error)) (func(error, func(error)) *relay.Mode, error) {
		m, err := ghmirror.Open(ctx, h, getenv, warn)
		if m == nil && err == nil {
			return nil, nil
		}
		return func(err error, warn func(error)) *relay.Mode {
			return (&ghmirror.Side{Mirror: m, Err: err, Warn: warn}).Mode()
		}, err
	}},
	{"slack", func(_ context.Context, h *router.Hub, getenv func(string) string, warn func(error)) (func(error, func(error)) *relay.Mode, error) {
		m, err := slackmode.Open(h, getenv, warn)
		if m == nil && err == nil {
			return nil, nil
		}
		return func(err error, warn func(error)) *relay.Mode { return slackmode.Side(m, err, warn) }, err
	}},
}

// openChannel is a channel opened for this process.
type openChannel struct {
	name string
	mode func(err error, warn func(error)) *relay.Mode
	err  error // nil once said (a long-lived process says it when it opens)
}

// sideSteps are the steps of a side pass, each switched on or off, in the
// order they run. In, before a change: the remote's refresh, then the
// channels read. Out, after it: the monitor, agent-status.json, the
// channels pushed, agent-status.json again, the wake, the undelivered.
type sideSteps struct {
	remote      bool         // bring the local copies up to the remote (at most once per [remote] interval)
	read        bool         // read what people wrote on the channels (at most once per interval)
	monitor     *sideMonitor // run the monitor as it asks, and keep its report there; nil: no monitor
	status      bool         // derive agent-status.json when something changed
	push        bool         // mirror what changed to the channels
	wake        bool         // wake the agents with something new (an [agents.NAME] resume)
	undelivered bool         // act on the answers nobody picked up in time
}

// in is s's steps before a change (an MCP tool call's Read).
func (s sideSteps) in() sideSteps { return sideSteps{remote: s.remote, read: s.read} }

// out is s's steps after a change (an MCP tool call's Push).
func (s sideSteps) out() sideSteps {
	s.remote, s.read = false, false
	return s
}

// sideResult is what a pass did that a surface reports (agentx watch).
type sideResult struct {
	woke    []wake.Woke
	overdue []wake.Overdue
}

// sidePass is the side work around a change, for every surface: a one-shot
// command runs it once after its body, the MCP server around each tool
// call, the desk after each action and every interval, agentx watch every
// turn. One per process; each piece of work is a sideTurn of it.
type sidePass struct {
	hub      func() *router.Hub // the command's hub: nil until it is opened
	getenv   func(string) string
	warn     func(error)                      // the pass's own failures: warnings
	warnAs   func(channel string) func(error) // a channel's failures
	refresh  func(ctx context.Context)        // the remote's refresh
	wait     func(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error)
	wakeStep []string // this program as a resume command's first step (wake.Waker.Step)
	// warnBroken tells of the workflow files that do not load (App.warnBroken)
	warnBroken func(workflow.Errors)
	pulled     *atomic.Bool // set when the remote brought changes: agent-status.json is derived again
	live       *liveRules   // a long-lived process: the rules, read again before each piece of work

	channelsOff bool // the MCP server with AGENTX_NO_MONITOR: no channel is opened
	openOnce    sync.Once
	opened      []openChannel

	statusMu sync.Mutex // tool calls at once
	statusAt int64      // the hub's change count when agent-status.json was last derived

	cmd *sideTurn // the command's own piece of work
}

// command is the piece of work of the command itself: its body's waits,
// its reads and pushes, and the pass after its body share its channels.
func (p *sidePass) command() *sideTurn {
	if p.cmd == nil {
		p.cmd = &sideTurn{sidePass: p}
	}
	return p.cmd
}

// turn starts a piece of work of a long-lived process (a tool call, a
// desk action, a watch turn): the rules as they are now, and channels
// that each say their failures once in it and try again in the next.
func (p *sidePass) turn() *sideTurn {
	p.live.reload()
	return &sideTurn{sidePass: p}
}

// runTurn runs the steps s as a piece of work of its own (turn).
func (p *sidePass) runTurn(ctx context.Context, s sideSteps, view func() error) (sideResult, error) {
	return p.turn().run(ctx, s, view)
}

// openChannels opens each configured channel, once per process; a
// long-lived process tells now why one could not be opened, once, rather
// than at every piece of work; a one-shot command at its first use.
func (p *sidePass) openChannels(ctx context.Context, h *router.Hub) []openChannel {
	p.openOnce.Do(func() {
		if p.channelsOff {
			return
		}
		for _, c := range channels {
			mode, err := c.open(ctx, h, p.getenv, p.warnAs(c.name))
			if mode == nil {
				continue
			}
			if err != nil && p.live != nil {
				p.warnAs(c.name)(err)
				err = nil
			}
			p.opened = append(p.opened, openChannel{c.name, mode, err})
		}
	})
	return p.opened
}

// status derives agent-status.json again when something changed since it
// was last derived (a question, an answer, a hook, the monitor's moves,
// changes pulled from the remote). Outside every issue's lock: it reads
// all of them. The file is advisory, so a failure is a warning.
func (p *sidePass) status(ctx context.Context, h *router.Hub) {
	p.statusMu.Lock()
	defer p.statusMu.Unlock()
	n := h.Changes()
	if n == p.statusAt && !p.pulled.Swap(false) {
		return
	}
	p.statusAt = n
	if err := h.SyncAgentStatus(context.WithoutCancel(ctx)); err != nil {
		p.warn(err)
	}
}

// waker wakes agents over h, running only the resume commands this
// machine trusts (h.Trust).
func (p *sidePass) waker(h *router.Hub) wake.Waker {
	agents := h.Rules().Config.Agents
	return wake.Waker{Store: h.Store, Agents: agents, Root: h.Dir, Step: p.wakeStep, Warn: p.warn,
		Allow: func(agent string) bool { return h.Trust.Allow(trust.Resume(agent, agents[agent].Resume)) }}
}

// undelivered acts, once each, on the answers nobody picked up (their
// receipts are overdue): their askers are woken once more, or [notify] is
// told (kind "undelivered"). At most once a minute per workspace, and
// only where [notify] is configured or some agent has a resume command;
// otherwise, and when it is not due, it costs a stat (wake.Waker.Undelivered).
func (p *sidePass) undelivered(ctx context.Context, h *router.Hub) []wake.Overdue {
	w := p.waker(h)
	var notify wake.NotifyFunc
	if n := h.Notifier(); n != nil {
		notify = func(ctx context.Context, issue int, c *ledger.Clarification, r inbox.Receipt) error {
			payload := struct {
				Kind string `json:"kind"`
				router.Record
				Receipt inbox.Receipt `json:"receipt"`
			}{"undelivered", router.Record{IssueNumber: issue, Clarification: c}, r}
			return router.Notify(ctx, n.Command, h.Dir, payload, n.Timeout.Duration)
		}
	}
	return w.Undelivered(context.WithoutCancel(ctx), notify)
}

// monitorRun runs the monitor over h as s asks and keeps its report in s.
func monitorRun(ctx context.Context, h *router.Hub, s *sideMonitor) {
	m := newMonitor(h)
	m.SkipQuiet = !s.whole // nothing due and nothing changed since a quiet scan: no scan
	m.DryRun = s.dryRun
	switch {
	case s.whole:
		m.Budget = 0 // asked for by name: each retry may run up to its timeout
	case s.budget > 0:
		m.Budget = s.budget
	}
	s.ran = true
	s.report = m.Run(ctx, s.hook)
}

// sideTurn is one piece of work's side pass: a command, an MCP tool call
// (mcpserver.Side), a desk action, a watch turn. Its channel modes are its
// own: a channel's failure is said once in it, and the next piece of work
// tries again.
type sideTurn struct {
	*sidePass
	steps sideSteps // the MCP server's, for Read and Push
	modes relay.Modes
	made  bool
}

// channels are the turn's channel modes, made on first use.
func (t *sideTurn) channels(ctx context.Context, h *router.Hub) relay.Modes {
	if !t.made {
		t.made = true
		for _, c := range t.openChannels(ctx, h) {
			t.modes = append(t.modes, c.mode(c.err, t.warnAs(c.name)))
		}
	}
	return t.modes
}

// run runs the steps s, in order; view runs between the steps that leave
// the state (the monitor, agent-status.json) and the push: a command's view
// and its printing, which read what the monitor left. Only the view runs
// while the command has not opened the hub. The view's error is returned.
func (t *sideTurn) run(ctx context.Context, s sideSteps, view func() error) (sideResult, error) {
	if h := t.hub(); h != nil {
		t.before(ctx, h, s)
	}
	var err error
	if view != nil {
		err = view()
	}
	h := t.hub()
	if h == nil {
		return sideResult{}, err
	}
	return t.after(ctx, h, s), err
}

// before is run's steps up to the view.
func (t *sideTurn) before(ctx context.Context, h *router.Hub, s sideSteps) {
	if s.remote {
		t.refresh(ctx)
	}
	if s.read {
		t.channels(ctx, h).Read(ctx)
	}
	if s.monitor != nil {
		monitorRun(ctx, h, s.monitor)
	}
	if s.status {
		t.status(ctx, h)
	}
}

// after is run's steps after the view.
func (t *sideTurn) after(ctx context.Context, h *router.Hub, s sideSteps) sideResult {
	var res sideResult
	if s.push {
		t.channels(ctx, h).Push(ctx)
	}
	if s.status {
		t.status(ctx, h)
	}
	if s.wake {
		w := t.waker(h)
		res.woke = w.Run(context.WithoutCancel(ctx))
	}
	if s.undelivered {
		res.overdue = t.undelivered(ctx, h)
	}
	return res
}

// Read is the MCP server's call's in steps.
func (t *sideTurn) Read(ctx context.Context) { _, _ = t.run(ctx, t.steps.in(), nil) }

// Push is the MCP server's call's out steps.
func (t *sideTurn) Push(ctx context.Context) { _, _ = t.run(ctx, t.steps.out(), nil) }

// Wait is h.Wait that reads each channel every interval while it waits, so
// that an answer given on GitHub or in Slack reaches the waiting asker, and
// with a [remote] watches the clarification's ref.
func (t *sideTurn) Wait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	return t.channels(ctx, h).WaitWith(ctx, func(ctx context.Context, id string, d time.Duration) (router.Record, error) {
		return t.wait(ctx, h, id, d)
	}, id, timeout)
}

// resumes reports whether some agent has a resume command: only then can
// an answer recorded here wake one.
func resumes(h *router.Hub) bool {
	for _, c := range h.Rules().Config.Agents {
		if len(c.Resume) > 0 {
			return true
		}
	}
	return false
}
