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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

// interactive starts claude in tmux in the project.
func (c *claude) interactive(t *testing.T, args ...string) *Tmux {
	t.Helper()
	return StartTmux(t, c.dir, c.env, append([]string{c.bin}, args...)...)
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

// TestClaudePrintMCPTool: a project's .mcp.json server (the real agentx
// mcp) is started by claude -p, and its tool, allowed by the project's
// settings, is called without a prompt when the model calls it; the next
// request carries its result.
func TestClaudePrintMCPTool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the agentx binary")
	}
	c := newClaude(t, func(r *Request) Reply {
		if res := r.ToolResults(); len(res) > 0 {
			return Reply{Say("the tool said: " + strings.TrimSpace(res[0].Content.Text()))}
		}
		return Reply{Say("Let me look."), Call("mcp__agentx__clarify_list", nil)}
	})
	agentx := testenv.AgentxBinary(t)
	initCmd := exec.Command(agentx, "init")
	initCmd.Dir, initCmd.Env = c.dir, c.env
	out, err := initCmd.CombinedOutput()
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
		"enabledMcpjsonServers": []string{"agentx"},                               // no approval dialog (interactive)
		"permissions":           map[string]any{"allow": []string{"mcp__agentx"}}, // no permission prompt
	})

	printed := c.print(t, 60*time.Second, "", "list the clarifications")
	assert.Contains(t, printed, `the tool said: {"clarifications":[]}`)

	main := mainRequests(c.api.Requests())
	require.Len(t, main, 2)
	assert.Contains(t, main[0].SystemText()+main[0].Text(), "mcp__agentx__clarify_list",
		"the tool is offered (deferred: listed by name for ToolSearch, yet callable)")
	res := main[1].ToolResults()
	require.Len(t, res, 1)
	assert.True(t, strings.HasPrefix(res[0].ToolUseID, "toolu_"), res[0].ToolUseID)
	assert.False(t, res[0].IsError, res[0].Content.Text())
	assert.Contains(t, main[1].Text(), `{"clarifications":[]}`)
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
	tm := c.interactive(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	require.NoError(t, tm.Submit(ctx, "please say the magic word"))
	r, err := c.api.WaitFor(ctx, carrying("please say the magic word"))
	require.NoError(t, err, tm.Capture())
	assert.Contains(t, r.LastUserText(), "please say the magic word")
	_, err = tm.WaitScreen(ctx, "Scripted reply 4711")
	require.NoError(t, err)
	assert.True(t, tm.Alive())
}

// stopHook is the Stop hook of TestClaudeStopHookRewake: each run records
// its payload, environment and parentage under its pid in dir, then waits
// until dir/wake appears (it takes it: one run wakes per file) and
// exits 2 with WOKEN-TEXT-123 on stderr; or until claude ($CLAUDE_PID) is
// gone, and exits 0. A SIGTERM is recorded.
const stopHook = `#!/bin/sh
d=%q
echo "$$" >> "$d/runs"
cat > "$d/stop-$$.json"
env > "$d/stop-$$.env"
echo "$PPID $(cat /proc/$PPID/comm) $(cut -d' ' -f4 /proc/$PPID/stat)" > "$d/stop-$$.parent"
trap 'echo TERM > "$d/stop-$$.signal"; exit 143' TERM
trap 'echo HUP > "$d/stop-$$.signal"; exit 129' HUP
trap 'echo INT > "$d/stop-$$.signal"; exit 130' INT
while kill -0 "$CLAUDE_PID" 2>/dev/null; do
	if mv "$d/wake" "$d/woken-$$" 2>/dev/null; then
		echo WOKEN-TEXT-123 >&2
		exit 2
	fi
	sleep 0.1
done
echo gone > "$d/stop-$$.signal"
exit 0
`

// sessionEndHook records the SessionEnd hook's payload and environment.
const sessionEndHook = `#!/bin/sh
d=%q
env > "$d/end.env"
cat > "$d/end.json.tmp" && mv "$d/end.json.tmp" "$d/end.json"
`

// stopPayload is the Stop hook's input, as far as a test reads it.
type stopPayload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	StopHookActive bool   `json:"stop_hook_active"`
	LastAssistant  string `json:"last_assistant_message"`
	Reason         string `json:"reason"` // SessionEnd's
}

// TestClaudeStopHookRewake proves the mechanism the wake loop rests on: a
// Stop hook with asyncRewake runs in the background when a turn ends; the
// session stays idle, at its prompt, while it runs; when it exits 2, its
// stderr is sent to the model as a new turn, at once. It runs again at
// the next Stop (with stop_hook_active true): each run must wait for a new
// reason to wake, or the session loops. When the session exits, the hook
// still running gets SIGTERM, and a SessionEnd hook runs with the same
// session_id. The hook's environment names claude's pid (CLAUDE_PID), the
// session (CLAUDE_CODE_SESSION_ID) and the project (CLAUDE_PROJECT_DIR).
func TestClaudeStopHookRewake(t *testing.T) {
	c := newClaude(t, func(r *Request) Reply {
		if strings.Contains(r.LastUserText(), "WOKEN-TEXT-123") {
			return Reply{Say("Woken reply 2")}
		}
		return Reply{Say("First reply 1")}
	})
	hooks := t.TempDir()
	stop := filepath.Join(hooks, "stop.sh")
	end := filepath.Join(hooks, "end.sh")
	require.NoError(t, os.WriteFile(stop, fmt.Appendf(nil, stopHook, hooks), 0o755))
	require.NoError(t, os.WriteFile(end, fmt.Appendf(nil, sessionEndHook, hooks), 0o755))
	c.settings(t, map[string]any{"hooks": map[string]any{
		"Stop":       []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": stop, "asyncRewake": true}}}},
		"SessionEnd": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": end}}}},
	}})
	t.Cleanup(func() { killHooks(t, hooks) })

	tm := c.interactive(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	// The first turn ends; the hook starts and waits.
	require.NoError(t, tm.Submit(ctx, "first prompt"))
	first, err := c.api.WaitFor(ctx, carrying("first prompt"))
	require.NoError(t, err, tm.Capture())
	_, err = tm.WaitScreen(ctx, "First reply 1")
	require.NoError(t, err)
	run1 := waitRun(ctx, t, hooks, 1)
	payload1 := readPayload(t, filepath.Join(hooks, "stop-"+run1+".json"))
	t.Logf("Stop payload, first run: %s", payload1.raw)

	// Idle: no request while the hook waits.
	idle, cancelIdle := context.WithTimeout(ctx, 3*time.Second)
	_, err = c.api.WaitFor(idle, mainAfter(first))
	cancelIdle()
	require.ErrorIs(t, err, context.DeadlineExceeded, "a request came while the hook waited")
	assert.True(t, tm.Alive())

	// The hook wakes the session: a new turn carries its stderr.
	woke := time.Now()
	require.NoError(t, os.WriteFile(filepath.Join(hooks, "wake"), []byte("now"), 0o644))
	soon, cancelSoon := context.WithTimeout(ctx, 10*time.Second)
	woken, err := c.api.WaitFor(soon, carrying("WOKEN-TEXT-123"))
	cancelSoon()
	require.NoError(t, err, tm.Capture())
	t.Logf("woken: the request came %v after the wake file", woken.Received.Sub(woke).Round(time.Millisecond))
	t.Logf("woken request's last user message: %q", woken.LastUserText())
	assert.Equal(t, first.SessionID(), woken.SessionID())
	_, err = tm.WaitScreen(ctx, "Woken reply 2")
	require.NoError(t, err)

	// The Stop of the woken turn runs the hook again, stop_hook_active.
	run2 := waitRun(ctx, t, hooks, 2)
	payload2 := readPayload(t, filepath.Join(hooks, "stop-"+run2+".json"))
	t.Logf("Stop payload, second run: %s", payload2.raw)

	for _, p := range []stopPayload{payload1.stopPayload, payload2.stopPayload} {
		assert.Equal(t, "Stop", p.HookEventName)
		assert.Equal(t, first.SessionID(), p.SessionID)
		assert.Equal(t, c.dir, p.Cwd)
		assert.True(t, strings.HasPrefix(p.TranscriptPath, filepath.Join(c.home, ".claude", "projects")), p.TranscriptPath)
	}
	assert.False(t, payload1.StopHookActive)
	assert.True(t, payload2.StopHookActive)
	assert.Equal(t, "First reply 1", payload1.LastAssistant)
	assert.Equal(t, "Woken reply 2", payload2.LastAssistant)

	// The hook's environment and parentage.
	env := readEnv(t, filepath.Join(hooks, "stop-"+run1+".env"))
	assert.Equal(t, strconv.Itoa(tm.PID()), env["CLAUDE_PID"])
	assert.Equal(t, first.SessionID(), env["CLAUDE_CODE_SESSION_ID"])
	assert.Equal(t, c.dir, env["CLAUDE_PROJECT_DIR"])
	t.Logf("hook environment (CLAUDE*): %v", claudeVars(env))
	parent, err := os.ReadFile(filepath.Join(hooks, "stop-"+run1+".parent"))
	require.NoError(t, err)
	fields := strings.Fields(string(parent)) // ppid, its comm, its ppid
	require.Len(t, fields, 3, string(parent))
	t.Logf("hook's parent: pid %s (%s), whose parent is %s; claude is %d", fields[0], fields[1], fields[2], tm.PID())
	assert.Equal(t, strconv.Itoa(tm.PID()), fields[2], "the hook's parent's parent is claude")

	// Exit: the waiting hook gets SIGTERM; SessionEnd runs.
	exited := time.Now()
	require.NoError(t, tm.Submit(ctx, "/exit"))
	sig, err := waitFile(ctx, filepath.Join(hooks, "stop-"+run2+".signal"))
	require.NoError(t, err, tm.Capture())
	t.Logf("the waiting hook got %s %v after /exit", strings.TrimSpace(string(sig)), time.Since(exited).Round(time.Millisecond))
	assert.Equal(t, "TERM\n", string(sig))
	endData, err := waitFile(ctx, filepath.Join(hooks, "end.json"))
	require.NoError(t, err, tm.Capture())
	t.Logf("SessionEnd payload %v after /exit: %s", time.Since(exited).Round(time.Millisecond), endData)
	var endPayload stopPayload
	require.NoError(t, json.Unmarshal(endData, &endPayload))
	assert.Equal(t, "SessionEnd", endPayload.HookEventName)
	assert.Equal(t, first.SessionID(), endPayload.SessionID)
	assert.Equal(t, "prompt_input_exit", endPayload.Reason)
	_, err = tm.WaitScreen(ctx, "claude --resume "+first.SessionID())
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return !tm.Alive() }, 10*time.Second, 100*time.Millisecond)
	t.Logf("claude exited %v after /exit", time.Since(exited).Round(time.Millisecond))
}

// payload is a hook's input, decoded, and as it came.
type payload struct {
	stopPayload
	raw string
}

// readPayload reads a hook's recorded input.
func readPayload(t *testing.T, path string) payload {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var p payload
	require.NoError(t, json.Unmarshal(data, &p.stopPayload), string(data))
	p.raw = strings.TrimSpace(string(data))
	return p
}

// waitRun waits until the stop hook in hooks has run n times and returns
// the pid of the nth run, once it has recorded its input.
func waitRun(ctx context.Context, t *testing.T, hooks string, n int) string {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		data, _ := os.ReadFile(filepath.Join(hooks, "runs"))
		if runs := strings.Fields(string(data)); len(runs) >= n {
			_, err := waitFile(ctx, filepath.Join(hooks, "stop-"+runs[n-1]+".parent"))
			require.NoError(t, err)
			return runs[n-1]
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("the Stop hook ran %d times, not %d: %v", len(strings.Fields(string(data))), n, ctx.Err())
		}
	}
}

// readEnv reads an env dump: NAME=value lines.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	env := map[string]string{}
	for line := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "="); ok {
			env[k] = v
		}
	}
	return env
}

// claudeVars are the variables of env Claude Code sets.
func claudeVars(env map[string]string) []string {
	var out []string
	for k, v := range env {
		if strings.HasPrefix(k, "CLAUDE") || strings.HasPrefix(k, "AI_AGENT") {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// killHooks kills (SIGKILL) the stop hook runs in hooks still alive: a
// hook whose claude was killed runs on, orphaned, until it sees claude
// gone.
func killHooks(t *testing.T, hooks string) {
	data, _ := os.ReadFile(filepath.Join(hooks, "runs"))
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil || !processAlive(pid) {
			continue
		}
		t.Logf("stop hook %d still runs: killed", pid)
		if p, err := os.FindProcess(pid); err == nil {
			if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Logf("kill %d: %v", pid, err)
			}
		}
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
