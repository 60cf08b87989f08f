//go:build linux

package realclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain removes, after the tests, the agentx binary that
// testenv.AgentxBinary built for them (the package's only TestMain: the
// Codex tests build it too).
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinary()
	os.Exit(code)
}

// claude is the real Claude Code, set up to run in a fresh trusted
// project directory against a stand-in API.
type claude struct {
	bin  string     // the claude executable
	api  *Anthropic // its model
	home string     // its HOME
	env  []string   // its whole environment
	dir  string     // the project directory it runs in
}

// newClaude sets up the real claude against a stand-in API answering with
// script; it skips t when claude is not installed.
func newClaude(t *testing.T, script func(*Request) Reply) *claude {
	t.Helper()
	c := &claude{bin: Binary(t, "claude"), api: NewAnthropic(t, script)}
	c.home, c.env = ClaudeEnv(t, c.api.URL)
	c.dir = t.TempDir()
	require.NoError(t, TrustProject(c.home, c.dir))
	return c
}

// settings writes the project's .claude/settings.json.
func (c *claude) settings(t *testing.T, settings map[string]any) {
	t.Helper()
	require.NoError(t, WriteJSON(filepath.Join(c.dir, ".claude", "settings.json"), settings))
}

// print runs claude -p args in the project, with stdin, within limit, and
// returns its standard output.
func (c *claude) print(t *testing.T, limit time.Duration, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"-p"}, args...)...)
	cmd.Dir, cmd.Env = c.dir, c.env
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = 5 * time.Second // a child left holding its output
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "claude -p %q: %s", args, stderr.String())
	return string(out)
}

// interactive starts claude in tmux in the project and waits until it
// reads keys.
func (c *claude) interactive(ctx context.Context, t *testing.T, args ...string) *Tmux {
	t.Helper()
	tm := StartTmux(t, c.dir, c.env, append([]string{c.bin}, args...)...)
	_, err := tm.WaitScreen(ctx, ClaudeReady)
	require.NoError(t, err)
	return tm
}

// mainAfter accepts the main-loop requests after r.
func mainAfter(r *Request) func(*Request) bool {
	return func(q *Request) bool { return q.IsMain() && q.Seq > r.Seq }
}

// carrying accepts the main-loop requests whose text holds s.
func carrying(s string) func(*Request) bool {
	return func(r *Request) bool { return r.IsMain() && strings.Contains(r.Text(), s) }
}

// waitFile waits until path exists and returns its content. It looks every
// 50 ms: the hooks that write the files tell no one.
func waitFile(ctx context.Context, path string) ([]byte, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		data, err := os.ReadFile(path)
		if err == nil && len(data) > 0 {
			return data, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("no %s: %w", path, ctx.Err())
		}
	}
}

// TestClaudePrint: claude -p prints the text the stand-in API gives, and
// the request carries the prompt.
func TestClaudePrint(t *testing.T) {
	c := newClaude(t, func(r *Request) Reply { return Reply{Say("Hello from the stand-in")} })
	out := c.print(t, 60*time.Second, "", "hello there")
	assert.Equal(t, "Hello from the stand-in\n", out)

	reqs := c.api.Requests()
	require.NotEmpty(t, reqs)
	assert.True(t, reqs[0].IsMain())
	assert.True(t, reqs[0].Stream)
	assert.Contains(t, reqs[0].LastUserText(), "hello there")
	assert.NotEmpty(t, reqs[0].SessionID())
}

// agentxMCP makes the project an agentx workspace (agentx init) whose
// .mcp.json names the real agentx mcp, as the engineer, and whose
// settings enable that server (no approval dialog: interactive claude
// asks before starting a project's .mcp.json server) and allow its tools
// (no permission prompt; claude -p denies a tool not allowed).
func (c *claude) agentxMCP(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the agentx binary")
	}
	agentx := testenv.AgentxBinary(t)
	cmd := exec.Command(agentx, "init")
	cmd.Dir, cmd.Env = c.dir, c.env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "agentx init: %s", out)
	require.NoError(t, WriteJSON(filepath.Join(c.dir, ".mcp.json"), map[string]any{
		"mcpServers": map[string]any{
			"agentx": map[string]any{
				"command": agentx,
				"args":    []string{"mcp"},
				"env":     map[string]string{"AGENTX_AGENT": "engineer"},
			},
		},
	}))
	c.settings(t, map[string]any{
		"enabledMcpjsonServers": []string{"agentx"},
		"permissions":           map[string]any{"allow": []string{"mcp__agentx"}},
	})
}

// listScript is the stand-in model of the MCP tests: it calls agentx's
// clarify_list, then says what it returned.
func listScript(r *Request) Reply {
	if res := r.ToolResults(); len(res) > 0 {
		return Reply{Say("the tool said: " + strings.TrimSpace(res[0].Content.Text()))}
	}
	return Reply{Say("Let me look."), Call("mcp__agentx__clarify_list", nil)}
}

// assertListed asserts that the requests show the model calling
// clarify_list and the next request carrying its result.
func assertListed(t *testing.T, api *Anthropic) {
	t.Helper()
	main := mainRequests(api.Requests())
	require.Len(t, main, 2)
	// The MCP tools are deferred: named for ToolSearch, not in tools, yet
	// callable by name. claude -p names them in the first request's system
	// prompt; the interactive claude, whose server may connect after the
	// first request, in a "system" message of a later one.
	assert.Contains(t, main[0].SystemText()+main[1].Text(), "mcp__agentx__clarify_list")
	res := main[1].ToolResults()
	require.Len(t, res, 1)
	assert.True(t, strings.HasPrefix(res[0].ToolUseID, "toolu_"), res[0].ToolUseID)
	assert.False(t, res[0].IsError, res[0].Content.Text())
	assert.Contains(t, main[1].Text(), `{"clarifications":[]}`)
}

// TestClaudePrintMCPTool: claude -p starts a project's .mcp.json server
// (the real agentx mcp) and, the tool being allowed by the project's
// settings, calls it without a prompt when the model does; the next
// request carries its result.
func TestClaudePrintMCPTool(t *testing.T) {
	c := newClaude(t, listScript)
	c.agentxMCP(t)
	printed := c.print(t, 60*time.Second, "", "list the clarifications")
	assert.Equal(t, "the tool said: {\"clarifications\":[]}\n", printed)
	assertListed(t, c.api)
}

// TestClaudeInteractiveMCPTool: so does the interactive claude, with no
// dialog.
func TestClaudeInteractiveMCPTool(t *testing.T) {
	c := newClaude(t, listScript)
	c.agentxMCP(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	tm := c.interactive(ctx, t)
	require.NoError(t, tm.Submit(ctx, "list the clarifications"))
	_, err := tm.WaitScreen(ctx, `the tool said: {"clarifications":[]}`)
	require.NoError(t, err)
	assertListed(t, c.api)
}

// mainRequests are the main-loop requests of reqs.
func mainRequests(reqs []*Request) []*Request {
	var out []*Request
	for _, r := range reqs {
		if r.IsMain() {
			out = append(out, r)
		}
	}
	return out
}

// TestClaudeInteractive: the interactive claude, in tmux, in a trusted
// project with a seeded HOME, shows no dialog: a prompt typed and entered
// reaches the stand-in API, and its reply shows on the screen.
func TestClaudeInteractive(t *testing.T) {
	c := newClaude(t, func(r *Request) Reply { return Reply{Say("Scripted reply 4711")} })
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	tm := c.interactive(ctx, t)

	require.NoError(t, tm.Submit(ctx, "please say the magic word"))
	r, err := c.api.WaitFor(ctx, carrying("please say the magic word"))
	require.NoError(t, err, tm.Capture())
	assert.Contains(t, r.LastUserText(), "please say the magic word")
	_, err = tm.WaitScreen(ctx, "Scripted reply 4711")
	require.NoError(t, err)
	assert.True(t, tm.Alive())
}

// stopHook is the Stop hook of the hook tests: each run appends its pid to
// dir/runs, records its input (stop-PID.json), environment (stop-PID.env)
// and parentage (stop-PID.parent: its parent's pid and name, and that
// one's parent's pid), then waits until dir/wake appears, takes it (one
// run wakes per file) and exits 2 with WOKEN-TEXT-123 on stderr; or until
// claude ($CLAUDE_PID) is gone, and exits 0 having written "gone" in
// stop-PID.signal. A signal that ends it is written there too. A zombie
// claude is gone: kill -0 would take it for alive, and a killed claude
// stays one until its parent waits for it (tmux may not for a while).
const stopHook = `#!/bin/sh
d=%q
echo "$$" >> "$d/runs"
cat > "$d/stop-$$.json"
env > "$d/stop-$$.env"
echo "$PPID $(cat /proc/$PPID/comm) $(cut -d' ' -f4 /proc/$PPID/stat)" > "$d/stop-$$.parent"
trap 'echo TERM > "$d/stop-$$.signal"; exit 143' TERM
trap 'echo HUP > "$d/stop-$$.signal"; exit 129' HUP
trap 'echo INT > "$d/stop-$$.signal"; exit 130' INT
alive() { # $CLAUDE_PID runs: its state, after "pid (comm) ", is not Z or X
	state=$(sed 's/.*) //' "/proc/$CLAUDE_PID/stat" 2>/dev/null | cut -c1)
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}
while alive; do
	if mv "$d/wake" "$d/woken-$$" 2>/dev/null; then
		echo WOKEN-TEXT-123 >&2
		exit 2
	fi
	sleep 0.1
done
echo gone > "$d/stop-$$.signal"
exit 0
`

// recordHook records a hook's input (NAME.json, written whole at once) and
// environment (NAME.env), NAME being its argument.
const recordHook = `#!/bin/sh
d=%q
env > "$d/$1.env"
cat > "$d/$1.json.tmp" && mv "$d/$1.json.tmp" "$d/$1.json"
`

// hooks is a directory of hook scripts and of what their runs record:
// see stopHook and recordHook.
type hooks string

// installHooks writes the hook scripts in a new directory and the
// project's settings that run them: stopHook as the Stop hook, with
// asyncRewake; recordHook for SessionStart ("start") and SessionEnd
// ("end"). The stop hook's runs still alive when t ends are killed.
func installHooks(t *testing.T, c *claude) hooks {
	t.Helper()
	h := hooks(t.TempDir())
	stop, record := h.path("stop.sh"), h.path("record.sh")
	require.NoError(t, os.WriteFile(stop, fmt.Appendf(nil, stopHook, h), 0o755))
	require.NoError(t, os.WriteFile(record, fmt.Appendf(nil, recordHook, h), 0o755))
	command := func(command string, more map[string]any) []any {
		hook := map[string]any{"type": "command", "command": command}
		for k, v := range more {
			hook[k] = v
		}
		return []any{map[string]any{"hooks": []any{hook}}}
	}
	c.settings(t, map[string]any{"hooks": map[string]any{
		"Stop":         command(stop, map[string]any{"asyncRewake": true}),
		"SessionStart": command(record+" start", nil),
		"SessionEnd":   command(record+" end", nil),
	}})
	t.Cleanup(func() { h.killRuns(t) })
	return h
}

// path is name in h.
func (h hooks) path(name string) string { return filepath.Join(string(h), name) }

// wake lets one waiting stop hook run exit 2.
func (h hooks) wake(t *testing.T) {
	t.Helper()
	require.NoError(t, os.WriteFile(h.path("wake"), []byte("now"), 0o644))
}

// runs are the pids of the stop hook's runs so far, in order.
func (h hooks) runs() []string {
	data, _ := os.ReadFile(h.path("runs")) // none yet: no runs
	return strings.Fields(string(data))
}

// run waits until the stop hook has run n times and returns the nth run's
// pid, once that run has recorded what it records.
func (h hooks) run(ctx context.Context, t *testing.T, n int) string {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if runs := h.runs(); len(runs) >= n {
			_, err := waitFile(ctx, h.path("stop-"+runs[n-1]+".parent"))
			require.NoError(t, err)
			return runs[n-1]
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("the Stop hook ran %d times, not %d: %v", len(h.runs()), n, ctx.Err())
		}
	}
}

// alive tells whether the stop hook's run pid still runs.
func (h hooks) alive(pid string) bool {
	n, err := strconv.Atoi(pid)
	return err == nil && processAlive(n)
}

// killRuns kills (SIGKILL) the stop hook's runs still alive: one whose
// claude was killed runs on, orphaned, until it sees claude gone.
func (h hooks) killRuns(t *testing.T) {
	for _, f := range h.runs() {
		pid, err := strconv.Atoi(f)
		if err != nil || !processAlive(pid) {
			continue
		}
		t.Logf("stop hook run %d still runs: killed", pid)
		if p, err := os.FindProcess(pid); err == nil {
			if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Logf("kill %d: %v", pid, err)
			}
		}
	}
}

// hookInput is a hook's input, as far as the tests read it, and as it came.
type hookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	StopHookActive bool   `json:"stop_hook_active"`       // Stop's
	LastAssistant  string `json:"last_assistant_message"` // Stop's
	Source         string `json:"source"`                 // SessionStart's
	Reason         string `json:"reason"`                 // SessionEnd's
	raw            string
}

// input reads the input a hook recorded in name (stop-PID.json,
// start.json, end.json).
func (h hooks) input(t *testing.T, name string) hookInput {
	t.Helper()
	data, err := os.ReadFile(h.path(name))
	require.NoError(t, err)
	var in hookInput
	require.NoError(t, json.Unmarshal(data, &in), string(data))
	in.raw = strings.TrimSpace(string(data))
	return in
}

// env reads the environment a hook recorded in name (NAME=value lines).
func (h hooks) env(t *testing.T, name string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(h.path(name))
	require.NoError(t, err)
	env := map[string]string{}
	for line := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "="); ok {
			env[k] = v
		}
	}
	return env
}

// claudeVars are env's variables that Claude Code sets, sorted.
func claudeVars(env map[string]string) []string {
	var out []string
	for k, v := range env {
		if strings.HasPrefix(k, "CLAUDE") || k == "AI_AGENT" {
			out = append(out, k+"="+v)
		}
	}
	slices.Sort(out)
	return out
}

// wakeScript is the stand-in model of the hook tests: it answers the
// woken turn (its stop hook's stderr) "Woken reply", and any other
// "Reply to PROMPT".
func wakeScript(r *Request) Reply {
	last := r.LastUserText()
	if strings.Contains(last, "WOKEN-TEXT-123") {
		return Reply{Say("Woken reply")}
	}
	lines := strings.Split(strings.TrimSpace(last), "\n")
	return Reply{Say("Reply to " + lines[len(lines)-1])}
}

// TestClaudeStopHookRewake proves the mechanism the wake loop rests on: a
// Stop hook with asyncRewake runs in the background when a turn ends; the
// session stays idle, at its prompt, while it runs; when it exits 2, its
// stderr goes to the model as a new turn, at once. It runs again at the
// next Stop, with stop_hook_active true: each run must wait for a new
// reason to wake, or the session loops. Its input names the session, its
// transcript and cwd; its environment names claude's pid (CLAUDE_PID),
// the session and the project; its parent is a shell whose parent is
// claude. A SessionStart hook gets the session id too.
func TestClaudeStopHookRewake(t *testing.T) {
	c := newClaude(t, wakeScript)
	h := installHooks(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	tm := c.interactive(ctx, t)

	// The first turn ends; the hook starts and waits.
	require.NoError(t, tm.Submit(ctx, "first prompt"))
	first, err := c.api.WaitFor(ctx, carrying("first prompt"))
	require.NoError(t, err, tm.Capture())
	_, err = tm.WaitScreen(ctx, "Reply to first prompt")
	require.NoError(t, err)
	run1 := h.run(ctx, t, 1)

	// Idle: no request while the hook waits.
	idle, cancelIdle := context.WithTimeout(ctx, 3*time.Second)
	_, err = c.api.WaitFor(idle, mainAfter(first))
	cancelIdle()
	require.ErrorIs(t, err, context.DeadlineExceeded, "a request came while the hook waited")
	assert.True(t, tm.Alive())

	// The hook wakes the session: a new turn carries its stderr.
	woke := time.Now()
	h.wake(t)
	soon, cancelSoon := context.WithTimeout(ctx, 10*time.Second)
	woken, err := c.api.WaitFor(soon, carrying("WOKEN-TEXT-123"))
	cancelSoon()
	require.NoError(t, err, tm.Capture())
	t.Logf("the woken turn's request came %v after the wake file", woken.Received.Sub(woke).Round(time.Millisecond))
	t.Logf("its last user message: %q", woken.LastUserText())
	assert.Equal(t, first.Seq+1, woken.Seq)
	assert.Equal(t, first.SessionID(), woken.SessionID())
	assert.Contains(t, woken.LastUserText(), `Stop hook blocking error from command "Stop": WOKEN-TEXT-123`)
	_, err = tm.WaitScreen(ctx, "Woken reply")
	require.NoError(t, err)

	// The woken turn's Stop runs the hook again, stop_hook_active.
	run2 := h.run(ctx, t, 2)
	in1, in2 := h.input(t, "stop-"+run1+".json"), h.input(t, "stop-"+run2+".json")
	t.Logf("Stop input, first run: %s", in1.raw)
	t.Logf("Stop input, second run: %s", in2.raw)
	for _, in := range []hookInput{in1, in2} {
		assert.Equal(t, "Stop", in.HookEventName)
		assert.Equal(t, first.SessionID(), in.SessionID)
		assert.Equal(t, c.dir, in.Cwd)
		assert.Equal(t, filepath.Join(c.home, ".claude", "projects", projectKey(c.dir), in.SessionID+".jsonl"), in.TranscriptPath)
		assert.FileExists(t, in.TranscriptPath)
	}
	assert.False(t, in1.StopHookActive)
	assert.True(t, in2.StopHookActive)
	assert.Equal(t, "Reply to first prompt", in1.LastAssistant)
	assert.Equal(t, "Woken reply", in2.LastAssistant)

	// The hook's environment and parentage.
	env := h.env(t, "stop-"+run1+".env")
	t.Logf("the Stop hook's environment (CLAUDE*): %q", claudeVars(env))
	assert.Equal(t, strconv.Itoa(tm.PID()), env["CLAUDE_PID"])
	assert.Equal(t, first.SessionID(), env["CLAUDE_CODE_SESSION_ID"])
	assert.Equal(t, c.dir, env["CLAUDE_PROJECT_DIR"])
	assert.Equal(t, "cli", env["CLAUDE_CODE_ENTRYPOINT"])
	assert.Equal(t, "1", env["CLAUDE_CODE_SESSION_ATTENDED"])
	parent, err := os.ReadFile(h.path("stop-" + run1 + ".parent"))
	require.NoError(t, err)
	fields := strings.Fields(string(parent)) // its parent's pid and name, that one's parent
	require.Len(t, fields, 3, string(parent))
	t.Logf("the Stop hook's parent: %s (%s), whose parent is %s; claude is %d", fields[0], fields[1], fields[2], tm.PID())
	assert.Equal(t, "sh", fields[1])
	assert.Equal(t, strconv.Itoa(tm.PID()), fields[2])

	start := h.input(t, "start.json")
	t.Logf("SessionStart input: %s", start.raw)
	assert.Equal(t, "SessionStart", start.HookEventName)
	assert.Equal(t, first.SessionID(), start.SessionID)
	assert.Equal(t, "startup", start.Source)
}

// projectKey is the name of the directory of dir's sessions under
// ~/.claude/projects: dir with each / and . a -.
func projectKey(dir string) string {
	return strings.NewReplacer("/", "-", ".", "-").Replace(dir)
}

// TestClaudeStopHookRunsPileUp: a Stop hook run is not ended when the next
// turn starts: a prompt typed while a run waits starts a second run at its
// Stop, and the first still runs. A run that exits 2 while the model is
// busy wakes it once that turn ends, right after it.
func TestClaudeStopHookRunsPileUp(t *testing.T) {
	release := make(chan struct{})
	c := newClaude(t, func(r *Request) Reply {
		if strings.Contains(r.LastUserText(), "slow prompt") {
			select { // bounded: the test fails first, on its own timeout
			case <-release:
			case <-time.After(30 * time.Second):
			}
		}
		return wakeScript(r)
	})
	h := installHooks(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	tm := c.interactive(ctx, t)

	require.NoError(t, tm.Submit(ctx, "first prompt"))
	run1 := h.run(ctx, t, 1)
	require.NoError(t, tm.Submit(ctx, "second prompt"))
	run2 := h.run(ctx, t, 2)
	assert.True(t, h.alive(run1), "the first run was ended")
	assert.True(t, h.alive(run2))

	require.NoError(t, tm.Submit(ctx, "slow prompt"))
	slow, err := c.api.WaitFor(ctx, carrying("slow prompt"))
	require.NoError(t, err, tm.Capture())
	h.wake(t)
	busy, cancelBusy := context.WithTimeout(ctx, 2*time.Second)
	_, err = c.api.WaitFor(busy, mainAfter(slow))
	cancelBusy()
	require.ErrorIs(t, err, context.DeadlineExceeded, "a request came while the model was busy")
	assert.NoFileExists(t, h.path("wake"), "no run took the wake file")
	close(release)

	woken, err := c.api.WaitFor(ctx, carrying("WOKEN-TEXT-123"))
	require.NoError(t, err, tm.Capture())
	assert.Equal(t, slow.Seq+1, woken.Seq, "the woken turn is not the next")
	_, err = tm.WaitScreen(ctx, "Woken reply")
	require.NoError(t, err)
	run4 := h.run(ctx, t, 4) // the slow turn's Stop, then the woken one's
	var waiting []string
	for _, pid := range h.runs() {
		if h.alive(pid) {
			waiting = append(waiting, pid)
		}
	}
	t.Logf("runs %q; still waiting %q (the last is %s)", h.runs(), waiting, run4)
	assert.Len(t, waiting, 3, "one run woke; the other three wait")
}

// TestClaudeStopHookOnExit: how a session's end reaches its hooks. On
// /exit, Ctrl-C twice, or its terminal hanging up, the Stop hook run still
// waiting gets SIGTERM (Claude Code kills it if it stays) and the
// SessionEnd hook runs with the session id; when claude is killed
// (SIGKILL) neither happens: the run is orphaned and must see claude gone
// by itself ($CLAUDE_PID).
func TestClaudeStopHookOnExit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		exit   func(ctx context.Context, t *testing.T, tm *Tmux)
		signal string // what the waiting run records
		reason string // SessionEnd's, "" for none
	}{
		{"exit command", func(ctx context.Context, t *testing.T, tm *Tmux) {
			require.NoError(t, tm.Submit(ctx, "/exit"))
		}, "TERM", "prompt_input_exit"},
		{"ctrl-c twice", func(ctx context.Context, t *testing.T, tm *Tmux) {
			require.NoError(t, tm.SendKeys("C-c"))
			_, err := tm.WaitScreen(ctx, "again to exit")
			require.NoError(t, err)
			require.NoError(t, tm.SendKeys("C-c"))
		}, "TERM", "prompt_input_exit"},
		{"hangup", func(ctx context.Context, t *testing.T, tm *Tmux) {
			tm.Kill()
		}, "TERM", "other"},
		{"killed", func(ctx context.Context, t *testing.T, tm *Tmux) {
			p, err := os.FindProcess(tm.PID())
			require.NoError(t, err)
			require.NoError(t, p.Kill())
		}, "gone", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClaude(t, wakeScript)
			h := installHooks(t, c)
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			tm := c.interactive(ctx, t)
			require.NoError(t, tm.Submit(ctx, "first prompt"))
			run := h.run(ctx, t, 1)
			session := h.input(t, "stop-"+run+".json").SessionID

			exited := time.Now()
			tc.exit(ctx, t, tm)
			sig, err := waitFile(ctx, h.path("stop-"+run+".signal"))
			require.NoError(t, err, tm.Capture())
			t.Logf("the waiting run recorded %q %v after the exit", strings.TrimSpace(string(sig)), time.Since(exited).Round(time.Millisecond))
			assert.Equal(t, tc.signal+"\n", string(sig))
			if tc.reason == "" {
				time.Sleep(2 * time.Second) // time for a SessionEnd that should not come
				assert.NoFileExists(t, h.path("end.json"))
				return
			}
			_, err = waitFile(ctx, h.path("end.json"))
			require.NoError(t, err, tm.Capture())
			end := h.input(t, "end.json")
			t.Logf("SessionEnd input %v after the exit: %s", time.Since(exited).Round(time.Millisecond), end.raw)
			assert.Equal(t, "SessionEnd", end.HookEventName)
			assert.Equal(t, session, end.SessionID)
			assert.Equal(t, tc.reason, end.Reason)
			assert.Equal(t, strconv.Itoa(tm.PID()), h.env(t, "end.env")["CLAUDE_PID"])
			assert.Eventually(t, func() bool { return !processAlive(tm.PID()) }, 10*time.Second, 50*time.Millisecond)
			t.Logf("claude ended %v after the exit", time.Since(exited).Round(time.Millisecond))
		})
	}
}

// TestClaudePrintWaitsForAsyncStopHook: claude -p does not exit, nor
// print its result, while an asyncRewake Stop hook runs: it is woken like
// an interactive session, and runs the hook again. A hook that must not
// hold claude -p can tell it from the interactive claude by its
// environment: CLAUDE_CODE_ENTRYPOINT=sdk-cli and
// CLAUDE_CODE_SESSION_ATTENDED=0 (cli and 1 interactive).
func TestClaudePrintWaitsForAsyncStopHook(t *testing.T) {
	c := newClaude(t, wakeScript)
	h := installHooks(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, "-p", "first prompt")
	cmd.Dir, cmd.Env = c.dir, c.env
	cmd.WaitDelay = 5 * time.Second
	stdout, err := os.Create(filepath.Join(t.TempDir(), "stdout")) // read while claude runs
	require.NoError(t, err)
	defer stdout.Close()
	printed := func() string {
		data, err := os.ReadFile(stdout.Name())
		require.NoError(t, err)
		return string(data)
	}
	cmd.Stdout = stdout
	require.NoError(t, cmd.Start())
	exited := make(chan struct{}) // closed once cmd is waited for, with waitErr
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })

	run1 := h.run(ctx, t, 1)
	env := h.env(t, "stop-"+run1+".env")
	t.Logf("the Stop hook's environment under claude -p (CLAUDE*): %q", claudeVars(env))
	assert.Equal(t, "sdk-cli", env["CLAUDE_CODE_ENTRYPOINT"])
	assert.Equal(t, "0", env["CLAUDE_CODE_SESSION_ATTENDED"])
	select {
	case <-exited:
		t.Fatalf("claude -p exited (%v) while its Stop hook ran; it printed %q", waitErr, printed())
	case <-time.After(3 * time.Second):
	}
	assert.Empty(t, printed(), "claude -p printed its result while its Stop hook ran")
	h.wake(t)
	_, err = c.api.WaitFor(ctx, carrying("WOKEN-TEXT-123"))
	require.NoError(t, err)
	h.run(ctx, t, 2)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	select {
	case <-exited:
		t.Logf("claude -p ended on SIGINT (%v), having printed %q", waitErr, printed())
	case <-ctx.Done():
		t.Fatal("claude -p still runs after SIGINT")
	}
}

// TestClaudePrintResume: claude -p --resume SESSION continues the session,
// with the new prompt as an argument or on stdin: the request carries the
// earlier messages, then the new one, under the same session id.
func TestClaudePrintResume(t *testing.T) {
	n := 0
	c := newClaude(t, func(r *Request) Reply {
		n++
		return Reply{Say(fmt.Sprintf("answer %d", n))}
	})
	out := c.print(t, 60*time.Second, "", "--output-format", "json", "first prompt AAA")
	var result struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &result), out)
	assert.Equal(t, "answer 1", result.Result)
	require.NotEmpty(t, result.SessionID)

	assert.Equal(t, "answer 2\n", c.print(t, 60*time.Second, "", "--resume", result.SessionID, "second prompt BBB"))
	assert.Equal(t, "answer 3\n", c.print(t, 60*time.Second, "third prompt CCC\n", "--resume", result.SessionID))

	main := mainRequests(c.api.Requests())
	require.Len(t, main, 3)
	for _, r := range main {
		assert.Equal(t, result.SessionID, r.SessionID())
	}
	assertInOrder(t, main[1].Text(), "first prompt AAA", "answer 1", "second prompt BBB")
	assertInOrder(t, main[2].Text(), "first prompt AAA", "answer 1", "second prompt BBB", "answer 2", "third prompt CCC")
	assert.Contains(t, main[2].LastUserText(), "third prompt CCC")
}

// assertInOrder asserts that text holds each of parts, in order.
func assertInOrder(t *testing.T, text string, parts ...string) {
	t.Helper()
	rest := text
	for _, p := range parts {
		i := strings.Index(rest, p)
		if !assert.GreaterOrEqual(t, i, 0, "%q is not after the earlier parts in:\n%s", p, text) {
			return
		}
		rest = rest[i+len(p):]
	}
}
