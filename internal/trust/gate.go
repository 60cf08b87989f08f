package trust

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// Gate decides, for one process, whether the commands of one workspace may
// run. The status is worked out the first time a command would run; a
// one-shot command keeps it for the rest of the process, a long-lived one
// (Live) looks again before each use.
type Gate struct {
	Root   string // the workspace root
	Rules  *workflow.Set
	Getenv func(string) string // nil: no AGENTX_TRUST, no configuration directory
	// Warn is told, once per command, what was not run and how to trust it.
	Warn func(line string)
	// Live is set by a process that lives on (the MCP server, the desk,
	// watch): before each use the gate compares the stamps (size, time,
	// inode) of the files the status was worked out from, the trust record
	// and each file a command names, and works the status out again when
	// one changed. So a revoke, a script changed after it was trusted, or a
	// trust given meanwhile takes effect at the next command, not at the
	// next process.
	Live bool

	mu      sync.Mutex // guards what follows
	done    bool
	stamped string // the stamps the status was worked out with (Live)
	status  Status
	warned  map[string]bool
}

// SetRules makes the gate judge rules from now on: a long-lived process
// read the workspace's files again. A nil Gate ignores it.
func (g *Gate) SetRules(rules *workflow.Set) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.Rules, g.done, g.stamped = rules, false, ""
}

// Status is the workspace's status, worked out on first use (and, Live,
// again whenever a file it depends on changed).
func (g *Gate) Status() Status {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done && !g.Live {
		return g.status
	}
	getenv := g.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	root, err := Canonical(g.Root)
	if err != nil {
		g.status, g.done = Status{Root: g.Root, State: StateUntrusted, Err: err.Error(), Commands: []Command{}}, true
		return g.status
	}
	s, err := DefaultStore(getenv)
	if err != nil {
		// no directory to keep trust in: only AGENTX_TRUST can trust
		s = Store{}
	}
	stamp := ""
	if g.Live {
		// taken before the status is worked out: a change made meanwhile
		// is seen at the next look
		stamp = stamps(s.path(root), root, g.status.Commands)
		if g.done && stamp == g.stamped {
			return g.status
		}
	}
	g.status, g.done = Examine(s, root, g.Rules, getenv), true
	if g.Live {
		// the files the new status names are stamped too
		g.stamped = stamps(s.path(root), root, g.status.Commands)
		if stamp != g.stamped {
			g.stamped = "" // something changed while it was examined: look again next time
		}
	}
	return g.status
}

// stamps identifies the trust record's file and the files cmds name (as
// Command.Files has them) as they are now: inode, size and modification
// time of each (ledger.StampOf), nothing for one that is not there.
func stamps(record, root string, cmds []Command) string {
	var b strings.Builder
	stamp := func(p string) {
		b.WriteString(p)
		if fi, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, ":%+v", ledger.StampOf(fi))
		}
		b.WriteByte(0)
	}
	if record != "" {
		stamp(record)
	}
	for _, c := range cmds {
		for arg := range c.Files {
			if !filepath.IsAbs(arg) {
				arg = filepath.Join(root, arg)
			}
			stamp(arg)
		}
	}
	return b.String()
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

// Permits reports, without a warning, whether what the workspace names may
// be used: its commands run, its api_url receives a token. A nil Gate
// permits everything.
func (g *Gate) Permits() bool { return g == nil || g.Status().Trusted() }

// SendToken reports whether channel ("github", "slack") may send its token
// to apiURL: always to the public API (public), to another address only
// when the workspace is trusted. The error says which address was given no
// token, why, and how to trust it.
func (g *Gate) SendToken(channel, apiURL, public string) error {
	if apiURL == public || g.Permits() {
		return nil
	}
	return errors.New(NotRun(Endpoint(channel, apiURL), g.Status()))
}

// NotRun is the line that says c was not run (an endpoint: given no
// token), why, and how to trust it.
func NotRun(c Command, st Status) string {
	why := "this workspace's commands are not trusted on this machine"
	switch st.State {
	case StateChanged:
		why = "this workspace's commands changed since they were trusted on this machine"
	case StateInvalid:
		why = "a workflow file does not parse, so what would run is unknown"
	}
	if c.Kind == KindEndpoint {
		mode := map[string]string{"github": "GitHub mode", "slack": "Slack mode"}[c.Name]
		return fmt.Sprintf("no token sent to %s (%s): %s; %s runs as if no token were set until a person reviews and trusts it with: agentx trust", c.Line(), c.What(), why, mode)
	}
	return fmt.Sprintf("not run: %s (%s): %s; a person reviews and trusts them with: agentx trust", c.What(), c.Line(), why)
}
