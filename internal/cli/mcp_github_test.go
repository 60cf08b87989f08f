package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror/ghfake"
	"github.com/agentx-cli/agentx/internal/frontends/mcpserver"
)

// lockedBuffer is a buffer written by one goroutine and read by another.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestMCPGitHub: in GitHub mode, the MCP server mirrors what its tool
// calls change with no CLI command run, and its clarify_wait reads
// comments while it waits, so a maintainer's /answer on GitHub reaches it.
// GitHub failing is a warning on stderr, never a failed call.
func TestMCPGitHub(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	fake := ghfake.New("octo-org", "octo-repo")
	t.Cleanup(fake.Close)
	appendConfig(t, dir, fmt.Sprintf("\n[github]\nrepo = \"octo-org/octo-repo\"\napi_url = %q\ninterval = \"0s\"\nmention = [\"@alice\"]\n", fake.APIURL()))
	env := map[string]string{"AGENTX_AGENT": "engineer", "GITHUB_TOKEN": "fake-token", "AGENTX_MCP_MAX_WAIT": "20s"}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stderr := &lockedBuffer{}
	cs, stop := startMCP(t, ctx, env, stderr)
	callTool := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s: %s", name, res.Content[0].(*mcp.TextContent).Text)
		return res
	}

	// a question asked over MCP is on the issue when the call returns
	callTool("ask_human", map[string]any{"issue": 42, "topic": "Retries", "question": "Exponential backoff or a fixed delay?"})
	comments := fake.Comments(42)
	require.Len(t, comments, 1, "the question is mirrored by the call itself")
	assert.Contains(t, comments[0].Body, "**[engineer -> human] Clarification CLR-42-001** · Retries · blocking")
	assert.Contains(t, comments[0].Body, "`/answer CLR-42-001 <your answer>`")
	assert.Equal(t, []string{"clarification:active"}, fake.Labels(42))

	// a maintainer answers on GitHub while clarify_wait waits
	type waited struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan waited, 1)
	start := time.Now()
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "clarify_wait", Arguments: map[string]any{"id": "CLR-42-001", "wait_seconds": 15}})
		done <- waited{res, err}
	}()
	time.Sleep(1500 * time.Millisecond) // the wait has read the comments at least once
	answer := fake.AddComment(42, "maintainer", "User", "MEMBER", "/answer CLR-42-001 Exponential, capped at 30 s.")
	var w waited
	select {
	case w = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("clarify_wait did not return")
	}
	require.NoError(t, w.err)
	require.False(t, w.res.IsError)
	out := w.res.StructuredContent.(map[string]any)
	assert.Equal(t, string(mcpserver.OutcomeAnswered), out["outcome"])
	assert.Equal(t, "Exponential, capped at 30 s.", out["answer"])
	assert.Equal(t, "human", out["answered_by"], "a person (github:maintainer in the ledger)")
	assert.Less(t, time.Since(start), 10*time.Second, "taken while waiting, not at the end of the wait")
	var receipt bool
	for _, c := range fake.Comments(42) {
		if c.ID == answer {
			receipt = len(c.Reactions) == 1 && c.Reactions[0].Content == "+1"
		}
	}
	assert.True(t, receipt, "the /answer got its receipt")

	// GitHub failing: a warning on stderr, the call goes through
	require.Empty(t, stderr.String())
	fake.Fail(3, 502, 0)
	callTool("clarify_list", map[string]any{"issue": 42})
	assert.Contains(t, stderr.String(), "level=WARN msg=github error=")
	assert.Contains(t, stderr.String(), "queued: agentx github status shows what is behind")
	assert.Equal(t, 1, strings.Count(stderr.String(), "level=WARN"), "one warning per call: %s", stderr)

	assert.Equal(t, 0, stop(), "stderr: %s", stderr.String())
}

// TestMCPRemote: in remote mode, the MCP server's clarify_wait watches the
// clarification's ref, so an answer made on another host reaches the
// waiting agent, and each call first brings the local copies up to the
// remote (what another host asked is listed).
func TestMCPRemote(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the remote mode needs git")
	}
	base := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	origin := filepath.Join(base, "origin.git")
	git(base, "init", "--quiet", "--bare", origin)
	hosts := map[string]string{}
	for _, h := range []string{"laptop", "ci"} {
		dir := filepath.Join(base, h)
		require.NoError(t, os.Mkdir(dir, 0o755))
		git(dir, "init", "--quiet")
		git(dir, "remote", "add", "origin", origin)
		for _, args := range [][]string{{"init"}, {"remote", "enable", "origin"}} {
			r := runCmd(t, "", nil, "", append([]string{"--root", dir}, args...)...)
			require.Equal(t, 0, r.code, r.stderr)
		}
		hosts[h] = dir
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stderr := &lockedBuffer{}
	env := map[string]string{"AGENTX_ROOT": hosts["laptop"], "AGENTX_AGENT": "engineer", "AGENTX_MCP_MAX_WAIT": "30s"}
	cs, stop := startMCP(t, ctx, env, stderr)
	callTool := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		text := res.Content[0].(*mcp.TextContent).Text
		require.False(t, res.IsError, "%s: %s", name, text)
		return text
	}
	callTool("clarify_ask", map[string]any{"issue": 7, "to": "architect", "topic": "Cache", "question": "Redis or in-process?"})

	// the architect answers on CI while the engineer's agent waits
	done := make(chan string, 1)
	start := time.Now()
	go func() {
		done <- callTool("clarify_wait", map[string]any{"id": "CLR-7-001", "wait_seconds": 25})
	}()
	time.Sleep(300 * time.Millisecond)
	r := runCmd(t, "", map[string]string{"AGENTX_AGENT": "architect"}, "", "--root", hosts["ci"], "clarify", "answer", "CLR-7-001", "--body", "In-process, with a 5-minute TTL.")
	require.Equal(t, 0, r.code, r.stderr)
	select {
	case text := <-done:
		assert.Contains(t, text, "In-process, with a 5-minute TTL.")
		assert.Less(t, time.Since(start), 20*time.Second, "seen while waiting, not at the timeout")
	case <-ctx.Done():
		t.Fatal("clarify_wait did not return")
	}

	// a question asked on CI is listed by the next call
	r = runCmd(t, "", map[string]string{"AGENTX_AGENT": "engineer"}, "", "--root", hosts["ci"], "clarify", "ask", "--issue", "8", "--to", "architect", "--topic", "Flaky", "--question", "Known flaky test?")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.Remove(filepath.Join(hosts["laptop"], ".agentx", "state", "remote", "fetched.json")))
	assert.Contains(t, callTool("clarify_list", map[string]any{"issue": 8}), "CLR-8-001")
	assert.Equal(t, 0, stop(), "stderr: %s", stderr.String())
}
