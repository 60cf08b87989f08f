package trust

import (
	"fmt"
	"sync"

	"github.com/agentx-cli/agentx/workflow"
)

// Gate decides, for one process, whether the commands of one workspace may
// run. The status is worked out the first time a command would run, and
// kept for the rest of the process.
type Gate struct {
	Root   string // the workspace root
	Rules  *workflow.Set
	Getenv func(string) string // nil: no AGENTX_TRUST, no configuration directory
	// Warn is told, once per command, what was not run and how to trust it.
	Warn func(line string)

	once   sync.Once
	status Status
	mu     sync.Mutex
	warned map[string]bool
}

// Status is the workspace's status, worked out on first use.
func (g *Gate) Status() Status {
	g.once.Do(func() {
		getenv := g.Getenv
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		root, err := Canonical(g.Root)
		if err != nil {
			g.status = Status{Root: g.Root, State: StateUntrusted, Err: err.Error(), Commands: []Command{}}
			return
		}
		s, err := DefaultStore(getenv)
		if err != nil {
			// no directory to keep trust in: only AGENTX_TRUST can trust
			s = Store{}
		}
		g.status = Examine(s, root, g.Rules, getenv)
	})
	return g.status
}

// Allow reports whether c may run. When it may not, Warn is told once for c.
// A nil Gate allows everything: a hub built for a test with its own runner.
func (g *Gate) Allow(c Command) bool {
	if g == nil {
		return true
	}
	st := g.Status()
	if st.Trusted() {
		return true
	}
	g.mu.Lock()
	first := !g.warned[c.key()]
	if g.warned == nil {
		g.warned = map[string]bool{}
	}
	g.warned[c.key()] = true
	g.mu.Unlock()
	if first && g.Warn != nil {
		g.Warn(NotRun(c, st))
	}
	return false
}

// NotRun is the line that says c was not run, why, and how to trust it.
func NotRun(c Command, st Status) string {
	why := "this workspace's commands are not trusted on this machine"
	switch st.State {
	case StateChanged:
		why = "this workspace's commands changed since they were trusted on this machine"
	case StateInvalid:
		why = "a workflow file does not parse, so what would run is unknown"
	}
	return fmt.Sprintf("not run: %s (%s): %s; a person reviews and trusts them with: agentx trust", c.What(), c.Line(), why)
}
