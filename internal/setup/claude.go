package setup

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Server is agentx's MCP server for one agent: `agentx mcp` with the
// agent's name (and issue) in its environment.
type Server struct {
	Agent string // AGENTX_AGENT
	Issue int    // AGENTX_ISSUE; 0: none
}

// Claude is what agentx setup claude writes for one agent: the MCP server
// in .mcp.json and Claude Code's hooks in its settings.
type Claude struct {
	Server
	Hold        time.Duration // hook stop's --hold, written when HoldSet
	HoldSet     bool
	StopTimeout int  // seconds: the Stop hook's timeout (see StopTimeout)
	Scope       bool // the agent's step has a write scope: the PreToolUse hook checks it
}

// ScopeMatcher is the PreToolUse matcher of the scope check: the tools
// that write files.
const ScopeMatcher = "Write|Edit|MultiEdit|NotebookEdit"

// rootArg is how every hook names the workspace: the project Claude Code
// runs in, whatever directory the hook starts in.
const rootArg = `--root "$CLAUDE_PROJECT_DIR"`

// Hook is one Claude Code hook agentx manages: on Event (with Matcher),
// Command, run with Timeout seconds (0: Claude Code's default).
type Hook struct {
	Event   string
	Matcher string
	Command string // "": agentx has no hook there (a step with no scope), and removes its own
	Timeout int
	// AsyncRewake: Claude Code runs the command in the background and, when
	// it exits 2, wakes the idle session with its stderr (hook rewake).
	AsyncRewake bool
	sub         []string // the agentx subcommand that marks agentx's own entry on Event
}

// Hooks are the hooks agentx manages, in the order they are added to a
// settings file that has none.
func (c Claude) Hooks() []Hook {
	agent := " " + rootArg + " --agent " + c.Agent
	inbox := "agentx inbox" + agent + " --format claude-hook"
	stop := stopCommand(agent, c.Issue, c.Hold, c.HoldSet)
	rewake := "agentx hook rewake" + agent
	if c.Issue > 0 {
		rewake += " --issue " + strconv.Itoa(c.Issue)
	}
	scope := ""
	if c.Scope {
		scope = "agentx scope check" + agent
	}
	return []Hook{
		{Event: "UserPromptSubmit", Command: inbox, sub: []string{"inbox"}},
		{Event: "SessionStart", Command: inbox + " --hook-event SessionStart", sub: []string{"inbox"}},
		{Event: "PreToolUse", Matcher: ScopeMatcher, Command: scope, sub: []string{"scope", "check"}},
		{Event: "Stop", Command: stop, Timeout: c.StopTimeout, sub: []string{"hook", "stop"}},
		{Event: "Stop", Command: rewake, Timeout: RewakeTimeout, AsyncRewake: true, sub: []string{"hook", "rewake"}},
	}
}

// stopCommand is hook stop's command line: agent is its --agent (and
// --root) arguments, with --issue when issue is set and --hold when given.
func stopCommand(agent string, issue int, hold time.Duration, holdSet bool) string {
	stop := "agentx hook stop" + agent
	if issue > 0 {
		stop += " --issue " + strconv.Itoa(issue)
	}
	if holdSet {
		stop += " --hold " + ShortDuration(hold)
	}
	return stop
}

// RewakeTimeout is the rewake hook's timeout, in seconds: a minute above
// the longest hook rewake waits (12h, its --max).
const RewakeTimeout = 12*60*60 + 60

// StopTimeout is the Stop hook's timeout, in seconds: a minute above the
// longer of the hold (waiting for an answer) and the checks the gate runs
// when nothing is open (the sum of their timeouts); the two never happen
// in one stop.
func StopTimeout(hold, checks time.Duration) int {
	d := max(hold, checks) + time.Minute
	return int((d + time.Second - 1) / time.Second)
}

// ShortDuration writes d as Go parses it, without zero units: 5m, 1h30m, 90s → 1m30s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ours says whether a hook command is agentx's own entry for sub: its
// program is agentx (by any path) and its first words are sub.
func ours(command string, sub []string) bool {
	f := strings.Fields(command)
	return len(f) > len(sub) && path.Base(f[0]) == "agentx" && slices.Equal(f[1:1+len(sub)], sub)
}

// MergeMCPJSON puts agentx's MCP server for s into a Claude Code .mcp.json
// (empty data: a new file): mcpServers.agentx runs `agentx mcp` with
// AGENTX_AGENT (and AGENTX_ISSUE). An agentx entry already there is
// updated where it is: its args are kept when they start with "mcp" (a
// --max-wait), and its other variables and keys stay. Everything else in
// the file stays as it was, in its order.
func MergeMCPJSON(data []byte, s Server) ([]byte, error) {
	return editJSON(data, func(root *node) error {
		servers := root.get("mcpServers")
		if servers == nil {
			servers = newObject()
			root.set("mcpServers", servers)
		} else if !servers.isObject() {
			return wrongKind(data, servers, "mcpServers", "an object")
		}
		entry := servers.get("agentx")
		if !entry.isObject() {
			entry = newObject()
			servers.set("agentx", entry)
		}
		entry.set("command", str("agentx"))
		if args := entry.get("args"); !args.isArray() || len(args.vals) == 0 || !isText(args.vals[0], "mcp") {
			entry.set("args", newArray(str("mcp")))
		}
		env := entry.get("env")
		if !env.isObject() {
			env = newObject()
			entry.set("env", env)
		}
		env.set("AGENTX_AGENT", str(s.Agent))
		if s.Issue > 0 {
			env.set("AGENTX_ISSUE", str(strconv.Itoa(s.Issue)))
		} else {
			env.del("AGENTX_ISSUE")
		}
		return nil
	})
}

// MergeClaudeSettings puts agentx's hooks for c into a Claude Code
// settings file (empty data: a new file). On each event of c.Hooks, an
// entry whose command is agentx's (the same subcommand, any agent) is
// updated where it is, when its group has the matcher agentx uses: its
// command replaced, its other keys kept, a timeout only ever raised. Other
// entries of agentx's on that event are removed, with their groups when
// nothing else is left in them; with none left in place, agentx's group is
// added last. A hook agentx does not want (no scope) is removed. Other
// hooks, events, matchers and keys stay as they were, in their order.
func MergeClaudeSettings(data []byte, c Claude) ([]byte, error) {
	return mergeHooks(data, c.Hooks())
}

// mergeHooks puts hooks into a hooks file of Claude Code's shape (Codex's
// hooks.json has the same): see MergeClaudeSettings.
func mergeHooks(data []byte, want []Hook) ([]byte, error) {
	return editJSON(data, func(root *node) error {
		hooks := root.get("hooks")
		if hooks == nil {
			hooks = newObject()
			root.set("hooks", hooks)
		} else if !hooks.isObject() {
			return wrongKind(data, hooks, "hooks", "an object")
		}
		for _, h := range want {
			if err := mergeHook(data, hooks, h); err != nil {
				return err
			}
		}
		return nil
	})
}

// editJSON parses data, lets edit change it and formats the result in
// data's indentation; when edit changed nothing, data is returned as it
// was.
func editJSON(data []byte, edit func(root *node) error) ([]byte, error) {
	root, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	indent := indentOf(data)
	before := root.format(indent)
	if err := edit(root); err != nil {
		return nil, err
	}
	after := root.format(indent)
	if string(after) == string(before) && len(data) > 0 {
		return data, nil
	}
	return after, nil
}

func mergeHook(data []byte, hooks *node, h Hook) error {
	ev := hooks.get(h.Event)
	if ev != nil && !ev.isArray() {
		return wrongKind(data, ev, "hooks."+h.Event, "an array")
	}
	var groups []*node
	if ev != nil {
		groups = ev.vals
	}
	var found []*node // agentx's entries, in order
	var in []*node    // the group of each
	for _, g := range groups {
		if list := g.get("hooks"); list.isArray() {
			for _, e := range list.vals {
				if cmd, ok := e.get("command").text(); ok && ours(cmd, h.sub) {
					found = append(found, e)
					in = append(in, g)
				}
			}
		}
	}
	placed := false
	if h.Command != "" && len(found) > 0 && sameMatcher(in[0], h.Matcher) {
		e := found[0]
		e.set("type", str("command"))
		e.set("command", str(h.Command))
		if t, ok := e.get("timeout").number(); h.Timeout > 0 && (!ok || t < int64(h.Timeout)) {
			e.set("timeout", num(int64(h.Timeout)))
		}
		if h.AsyncRewake {
			e.set("asyncRewake", boolean(true))
		}
		found, placed = found[1:], true
	}
	var kept []*node
	for _, g := range groups {
		if list := g.get("hooks"); list.isArray() && len(found) > 0 {
			n := len(list.vals)
			list.vals = slices.DeleteFunc(list.vals, func(e *node) bool { return slices.Contains(found, e) })
			if len(list.vals) == 0 && n > 0 {
				continue // the group held only agentx's entries
			}
		}
		kept = append(kept, g)
	}
	if h.Command != "" && !placed {
		kept = append(kept, hookGroup(h))
	}
	switch {
	case ev == nil && len(kept) > 0:
		hooks.set(h.Event, newArray(kept...))
	case ev != nil && len(kept) == 0 && len(groups) > 0:
		hooks.del(h.Event) // agentx's entries were all there was
	case ev != nil:
		ev.vals = kept
	}
	return nil
}

// hookGroup is a new matcher group holding h alone.
func hookGroup(h Hook) *node {
	entry := newObject()
	entry.set("type", str("command"))
	entry.set("command", str(h.Command))
	if h.Timeout > 0 {
		entry.set("timeout", num(int64(h.Timeout)))
	}
	if h.AsyncRewake {
		entry.set("asyncRewake", boolean(true))
	}
	g := newObject()
	if h.Matcher != "" {
		g.set("matcher", str(h.Matcher))
	}
	g.set("hooks", newArray(entry))
	return g
}

// sameMatcher says whether group g matches what matcher does: no matcher
// and "*" both match every tool or source.
func sameMatcher(g *node, matcher string) bool {
	m, _ := g.get("matcher").text()
	if matcher == "" {
		return m == "" || m == "*"
	}
	return m == matcher
}

func isText(n *node, s string) bool {
	t, ok := n.text()
	return ok && t == s
}

// wrongKind is a value of the wrong kind where agentx's entry goes.
func wrongKind(data []byte, n *node, name, want string) error {
	line, col := n.position(data)
	return &DataError{Line: line, Col: col, Msg: name + " is " + n.kindName() + ", want " + want}
}
