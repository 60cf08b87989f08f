//go:build linux

package realclient

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
)

// loop is the real Claude Code wired to agentx by agentx setup claude
// alone (plus what a person grants once: the project's MCP server and its
// tools), in a workspace whose engineer may be resumed.
type loop struct {
	*claude
	agentx string
	env    []string // agentx and claude on PATH, the same HOME as claude
}

// askScript is the stand-in model of the loop: asked to start on an issue,
// it asks the architect over MCP (blocking) and ends its turn; given what
// came back, it says it goes on with it.
func askScript(r *Request) Reply {
	text := r.LastUserText()
	switch {
	case len(r.ToolResults()) > 0:
		return Reply{Say("Asked; I end my turn until the answer comes.")}
	case strings.Contains(text, "Start on issue"):
		n := 7
		fmt.Sscanf(text[strings.Index(text, "Start on issue")+len("Start on issue "):], "%d", &n)
		return Reply{Call("mcp__agentx__clarify_ask", map[string]any{"issue": n, "to": "architect", "topic": "Design", "question": "Which pattern for the adapter?"})}
	}
	return Reply{Say("Carrying on with what came back.")}
}

func newLoop(t *testing.T, script func(*Request) Reply, hold string) *loop {
	t.Helper()
	c := newClaude(t, script)
	bin := testenv.AgentxBinary(t)
	l := &loop{claude: c, agentx: bin, env: withPath(c.env, filepath.Dir(bin), filepath.Dir(c.bin))}
	c.env = l.env // the hooks and the MCP server find agentx on PATH, as a user's do
	loopAgentx(t, bin, c.dir, l.env, "init")
	cfg := filepath.Join(c.dir, ".agentx", "config.toml")
	require.NoError(t, os.WriteFile(cfg, append(mustRead(t, cfg),
		[]byte("\n[agents.engineer]\nresume = [\"claude\", \"-p\", \"--resume\", \"{session}\"]\n\n[humans]\nconfirm = false\n")...), 0o644))
	loopAgentx(t, bin, c.dir, l.env, "trust", "--yes")
	out := loopAgentx(t, bin, c.dir, l.env, "setup", "claude", "--agent", "engineer", "--hold", hold)
	require.Contains(t, out, "agentx hook rewake on Stop")
	require.Contains(t, out, "Wake: in place (agentx hook rewake)")
	// what a person grants once in Claude Code: the project's server, its tools
	path := filepath.Join(c.dir, ".claude", "settings.json")
	var settings map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, path), &settings))
	settings["enabledMcpjsonServers"] = []string{"agentx"}
	settings["permissions"] = map[string]any{"allow": []string{"mcp__agentx"}}
	require.NoError(t, WriteJSON(path, settings))
	return l
}

// as runs agentx as who (a person: "human") in the workspace.
func (l *loop) as(t *testing.T, who string, args ...string) string {
	t.Helper()
	env := append(l.env[:len(l.env):len(l.env)], "AGENTX_AGENT="+who)
	if who == "human" {
		env = append(env[:len(env)-1], "AGENTX_AGENT=")
	}
	return loopAgentx(t, l.agentx, l.dir, env, args...)
}

// wakeState is the engineer's wake state file.
func (l *loop) wakeState() string {
	return filepath.Join(l.dir, ".agentx", "state", "wake", "engineer.json")
}

// resumes counts the resume commands started for the engineer (their log).
func (l *loop) resumes() int {
	b, _ := os.ReadFile(filepath.Join(l.dir, ".agentx", "state", "wake", "engineer.log"))
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "--- ") { // wake.Detach's line before each command
			n++
		}
	}
	return n
}

// waitNoWaiter waits until the wake state names no live waiter.
func (l *loop) waitNoWaiter(ctx context.Context, t *testing.T) {
	t.Helper()
	for {
		var st struct {
			Waiters map[string]struct{ PID int } `json:"waiters"`
		}
		b, _ := os.ReadFile(l.wakeState())
		_ = json.Unmarshal(b, &st)
		live := false
		for _, w := range st.Waiters {
			live = live || processAlive(w.PID)
		}
		if !live {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("a waiter outlived its session: %s", b)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestLoopClaudeInteractive is the loop the way most people run Claude
// Code: in a terminal. The model asks and ends its turn; the hold runs
// out; the session sits idle. An answer 5 s later wakes that same session
// in place (agentx hook rewake), and no second process is started; a
// person's further reply wakes it again; once the person has closed the
// session, a later reply goes to resume (claude -p --resume) instead, once.
func TestLoopClaudeInteractive(t *testing.T) {
	l := newLoop(t, askScript, "2s")
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	tm := l.interactive(ctx, t)
	require.NoError(t, tm.Submit(ctx, "Start on issue 7."))
	asked, err := l.api.WaitFor(ctx, func(r *Request) bool { return r.IsMain() && len(r.ToolResults()) > 0 })
	require.NoError(t, err, "the model's ask never came back:\n%s", tm.Capture())
	session := asked.SessionID()
	require.Contains(t, asked.Text(), "CLR-7-001")
	require.NoError(t, waitContains(ctx, l.wakeState(), `"waiters"`), "no live waiter:\n%s", tm.Capture())
	before := len(l.api.Requests())
	time.Sleep(5 * time.Second) // the hold (2s) ran out long ago: the session is idle
	require.Len(t, l.api.Requests(), before, "the idle session made requests")

	start := time.Now()
	l.as(t, "architect", "clarify", "answer", "CLR-7-001", "--body", "Repository pattern")
	answered := time.Now()
	r, err := l.api.WaitFor(ctx, carrying("Repository pattern"))
	require.NoError(t, err, "the idle session was not woken:\n%s", tm.Capture())
	took := r.Received.Sub(answered)
	t.Logf("answer -> the session's request to the model: %v after the answering command exited (%v after it started)", took.Round(time.Millisecond), r.Received.Sub(start).Round(time.Millisecond))
	assert.Less(t, took, 2*time.Second)
	assert.Equal(t, session, r.SessionID(), "the same session, woken in place")
	assert.Zero(t, l.resumes(), "no second process started")

	// a person's further reply wakes it again: the woken turn's Stop
	// starts a new waiter
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	err = waitContains(wctx, l.wakeState(), `"waiters"`)
	wcancel()
	if err != nil {
		var st struct {
			Sessions map[string]struct{ Transcript string }
		}
		_ = json.Unmarshal(mustRead(t, l.wakeState()), &st)
		tr, _ := os.ReadFile(st.Sessions["0"].Transcript)
		t.Fatalf("no waiter after the woken turn: %v\n%s\ntranscript:\n%s", err, tm.Capture(), tr)
	}
	l.as(t, "human", "clarify", "answer", "CLR-7-001", "--from", "human", "--as", "pat", "--body", "And a unit of work around it")
	r2, err := l.api.WaitFor(ctx, carrying("unit of work around it"))
	require.NoError(t, err, "the second reply did not wake the session:\n%s\nwake state: %s\n%s", tm.Capture(), mustRead(t, l.wakeState()), l.as(t, "engineer", "clarify", "show", "CLR-7-001", "--json"))
	assert.Equal(t, session, r2.SessionID())
	assert.Zero(t, l.resumes())
	n := 0
	for _, q := range l.api.Requests() {
		if q.IsMain() && strings.Contains(q.LastUserText(), "Repository pattern") {
			n++
		}
	}
	assert.Equal(t, 1, n, "the first answer was delivered once")

	// the person closes the session: its waiter goes with it, and a later
	// reply resumes the session in a second process, once
	time.Sleep(2 * time.Second)
	tm.Kill()
	l.waitNoWaiter(ctx, t)
	l.as(t, "human", "clarify", "answer", "CLR-7-001", "--from", "human", "--as", "pat", "--body", "Last: name it OrderRepository")
	r3, err := l.api.WaitFor(ctx, carrying("name it OrderRepository"))
	require.NoError(t, err, "the closed session was not resumed")
	assert.Equal(t, session, r3.SessionID(), "claude -p --resume of the same session")
	time.Sleep(2 * time.Second)
	assert.Equal(t, 1, l.resumes(), "resumed once")
}

// TestLoopClaudePrint is the loop with headless Claude Code (claude -p):
// an answer that lands while the Stop hook holds the turn reaches the same
// run; one that lands after the run ended resumes the session once, and
// the resumed run's request carries it. The async rewake hook never keeps
// a headless run waiting.
func TestLoopClaudePrint(t *testing.T) {
	l := newLoop(t, askScript, "8s")
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()

	// 1. answered during the hold
	var wg sync.WaitGroup
	wg.Add(1)
	var out string
	go func() {
		defer wg.Done()
		out = l.print(t, 90*time.Second, "", "Start on issue 7.")
	}()
	require.NoError(t, waitContains(ctx, l.wakeState(), `"holds"`), "the Stop hook never held the turn")
	l.as(t, "architect", "clarify", "answer", "CLR-7-001", "--body", "Repository pattern")
	wg.Wait()
	assert.Contains(t, out, "Carrying on with what came back.")
	r, err := l.api.WaitFor(ctx, carrying("Repository pattern"))
	require.NoError(t, err)
	assert.Zero(t, l.resumes())

	// 2. the run is over: a later answer resumes it once
	start := time.Now()
	l.print(t, 90*time.Second, "", "Start on issue 8.")
	assert.Less(t, time.Since(start), 40*time.Second, "the rewake hook kept claude -p waiting")
	var asked string
	for _, q := range l.api.Requests() {
		if q.IsMain() && strings.Contains(q.Text(), "Start on issue 8") {
			asked = q.SessionID()
		}
	}
	require.NotEmpty(t, asked)
	require.NotEqual(t, r.SessionID(), asked)
	l.as(t, "architect", "clarify", "answer", "CLR-8-001", "--body", "No cache")
	r2, err := l.api.WaitFor(ctx, carrying("No cache"))
	require.NoError(t, err, "not resumed")
	assert.Equal(t, asked, r2.SessionID(), "the session that asked, resumed")
	time.Sleep(2 * time.Second)
	assert.Equal(t, 1, l.resumes(), "resumed once")
}

// TestLoopClaudeCap: max_questions counts per session. A Claude Code
// session that asked three questions is refused a fourth, told that a new
// session may ask again; a new session may.
func TestLoopClaudeCap(t *testing.T) {
	script := func(r *Request) Reply {
		n := 0
		for _, m := range r.Messages {
			for _, b := range m.Content {
				if b.Type == "tool_result" {
					n++
				}
			}
		}
		if strings.Contains(r.Text(), "Ask once more") && n == 0 || strings.Contains(r.Text(), "Ask four") && n < 4 {
			return Reply{Call("mcp__agentx__clarify_ask", map[string]any{"issue": 9, "to": "architect", "topic": fmt.Sprintf("Topic %d", n+1),
				"question": fmt.Sprintf("Question number %d?", n+1), "blocking": false})}
		}
		return Reply{Say("Done asking.")}
	}
	l := newLoop(t, script, "0s")
	l.print(t, 90*time.Second, "", "Ask four questions.")
	var results []string
	for _, r := range l.api.Requests() {
		for _, b := range r.ToolResults() {
			results = append(results, b.Content.Text())
		}
	}
	require.NotEmpty(t, results)
	last := results[len(results)-1]
	assert.Contains(t, last, "max_questions = 3")
	assert.Contains(t, last, "a new session")
	before := len(l.api.Requests())
	l.print(t, 90*time.Second, "", "Ask once more.")
	var got string
	for _, r := range l.api.Requests()[before:] {
		for _, b := range r.ToolResults() {
			got = b.Content.Text()
		}
	}
	assert.Contains(t, got, "CLR-9-004", "a new session may ask again")
}
