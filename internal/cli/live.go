package cli

import (
	"fmt"
	"sync"

	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// liveRules is what a process that lives on (agentx mcp, desk, watch)
// reads again as it goes: the workspace's rules, when config.toml or a
// workflow changed, so that an edit (an agent added, a route or a limit
// changed, a command removed) takes effect at the next tool call, action
// or turn, not at the next start.
type liveRules struct {
	mu         sync.Mutex // tool calls run at once
	watch      workflow.Watch
	hub        *router.Hub
	said       string // the last problem told, told once
	warn       func(error)
	warnBroken func(workflow.Errors)
}

// goLive makes p the pass of a long-lived process: trust (the gate's
// stamps) and the rules (liveRules.reload) are looked at again before each
// piece of work (sidePass.turn), and a channel that cannot be opened says
// so once, when it is opened, not at every piece of work.
func (p *sidePass) goLive(ws *workspace.Workspace, h *router.Hub) {
	h.Trust.Live = true
	p.live = &liveRules{watch: workflow.Watch{Dir: ws.Dir}, hub: h, warn: p.warn, warnBroken: p.warnBroken}
	p.live.watch.Changed() // the files as the rules were read
}

// reload reads the rules again when their files changed since the last
// look, and puts them in the hub's hands for the work that follows.
// A config.toml that no longer loads keeps the rules read before, with one
// warning naming the file and line: a half-saved edit never stops a
// long-lived process, nor makes it run without rules; a workflow file that
// does not load is left out, as one-shot commands leave it out. Nothing
// for a one-shot command (nil).
func (l *liveRules) reload() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.watch.Changed() {
		return
	}
	// as a one-shot command reads them: a workflow file that does not load
	// is left out (told once), a config.toml that does not load keeps the
	// rules read before
	rules, err := workflow.LoadPartial(l.watch.Dir)
	if err != nil {
		if msg := err.Error(); msg != l.said {
			l.said = msg
			l.warn(fmt.Errorf("the workspace's rules changed and do not load, so the rules read before stay: %w", err))
		}
		return
	}
	if broken := rules.Broken(); len(broken) > 0 {
		if msg := broken.Error(); msg != l.said {
			l.said = msg
			l.warnBroken(broken)
		}
	} else {
		l.said = ""
	}
	l.hub.SetRules(rules)
}
