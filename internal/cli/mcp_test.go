package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/frontends/mcpserver"
	"github.com/agentx-cli/agentx/ledger"
)

// TestMCPCommand runs `agentx mcp` in-process over pipes and checks that a
// tool error carries the code, exit code and message the CLI prints for the
// same failure (the classifier is the CLI's, injected, not a copy), and its
// hint where the hint names no command line's words.
func TestMCPCommand(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	env := map[string]string{"AGENTX_AGENT": "engineer", "AGENTX_MCP_MAX_WAIT": "300ms"}
	require.Equal(t, 0, runCmd(t, "", env, "", "clarify", "ask", "--issue", "42", "--to", "architect", "--topic", "t", "--question", "q?").code)
	require.Equal(t, 0, runCmd(t, "", env, "", "clarify", "ask", "--issue", "42", "--to", "architect", "--topic", "t", "--question", "q2?").code)
	require.Equal(t, 0, runCmd(t, "", env, "", "clarify", "cancel", "CLR-42-002").code)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cs, stop := startMCP(t, ctx, env, &stderr)

	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		cli     []string
		ownHint bool // a refusal of who acts: each front end words its own hint
	}{
		{"scope violation", "clarify_ask", map[string]any{"issue": 42, "to": "reviewer", "topic": "t", "question": "q"},
			[]string{"clarify", "ask", "--issue", "42", "--to", "reviewer", "--topic", "t", "--question", "q"}, false},
		{"unknown id", "clarify_show", map[string]any{"id": "CLR-42-099"}, []string{"clarify", "show", "CLR-42-099"}, false},
		{"invalid transition", "clarify_followup", map[string]any{"id": "CLR-42-002", "body": "more?"},
			[]string{"clarify", "followup", "CLR-42-002", "--body", "more?"}, false},
		{"not a party", "clarify_answer", map[string]any{"id": "CLR-42-001", "body": "mine"},
			[]string{"clarify", "answer", "CLR-42-001", "--body", "mine"}, true},
		{"identity mismatch", "clarify_resolve", map[string]any{"id": "CLR-42-001", "from": "architect"},
			[]string{"clarify", "resolve", "CLR-42-001", "--from", "architect"}, true},
		{"acting as a person", "clarify_resolve", map[string]any{"id": "CLR-42-001", "from": "human"},
			[]string{"clarify", "resolve", "CLR-42-001", "--from", "human"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolError(t, ctx, cs, tt.tool, tt.args)
			r := runCmd(t, "", env, "", append(tt.cli, "--json")...)
			want := sameError(t, r, got)
			if !tt.ownHint {
				assert.Equal(t, want.Error.Hint, got.Hint)
				return
			}
			assert.NotEmpty(t, got.Hint)
			assert.NotEqual(t, want.Error.Hint, got.Hint, "the server words its own hint")
			assert.NotContains(t, got.Hint, "--", "no command-line flags in a tool's hint")
		})
	}

	// AGENTX_MCP_MAX_WAIT caps the wait
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "clarify_wait", Arguments: map[string]any{"id": "CLR-42-001", "wait_seconds": 30}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "timed out")
	assert.Less(t, time.Since(start), 10*time.Second)

	// the end of the client's input stops the server: exit 0
	assert.Equal(t, 0, stop(), "stderr: %s", stderr.String())
}

// toolError calls tool, which must fail, and returns its error's details.
func toolError(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) mcpserver.ErrorInfo {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	require.True(t, res.IsError, "%s %v must fail", tool, args)
	b, err := json.Marshal(res.Meta[mcpserver.ErrorMetaKey])
	require.NoError(t, err)
	var got mcpserver.ErrorInfo
	require.NoError(t, json.Unmarshal(b, &got))
	return got
}

// sameError checks that a tool's error got is the one the command line
// printed in r (--json): the same code, exit code and message.
func sameError(t *testing.T, r result, got mcpserver.ErrorInfo) errorEnvelope {
	t.Helper()
	var want errorEnvelope
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &want), r.stderr)
	assert.Equal(t, r.code, got.ExitCode)
	assert.Equal(t, want.Error.Code, got.Code)
	assert.Equal(t, want.Error.ExitCode, got.ExitCode)
	assert.Equal(t, want.Error.Message, got.Message)
	return want
}

// startMCP runs `agentx mcp` in-process over pipes, with env, its stderr
// to stderr, and returns a client session to it and a stop that ends the
// client's input and returns the command's exit code.
func startMCP(t *testing.T, ctx context.Context, env map[string]string, stderr io.Writer) (*mcp.ClientSession, func() int) {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	a := &App{stdin: serverIn, stdout: serverOut, stderr: stderr, getenv: testGetenv(env)}
	exit := make(chan int, 1)
	go func() { exit <- run(ctx, a, []string{"mcp"}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	require.NoError(t, err)
	return cs, func() int {
		t.Helper()
		require.NoError(t, cs.Close())
		require.NoError(t, clientOut.Close())
		select {
		case code := <-exit:
			return code
		case <-ctx.Done():
			t.Fatal("agentx mcp did not stop at the end of its input")
			return -1
		}
	}
}

// TestMCPRefusesRenumbered: an id this host printed while the remote was
// out of reach, for a question since delivered under another id, is
// refused by every MCP tool that names it, as the CLI refuses the same id
// (exit 6, superseded, naming the new id; the hint in each one's terms):
// never another host's question read, answered or resolved in its place.
func TestMCPRefusesRenumbered(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the remote mode needs git")
	}
	root := t.TempDir()
	gitIn := func(dir string, args ...string) {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	bare := filepath.Join(root, "origin.git")
	gitIn(root, "init", "--quiet", "--bare", bare)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, h := range []string{a, b} {
		gitIn(root, "init", "--quiet", h)
		gitIn(h, "remote", "add", "origin", bare)
		require.Equal(t, 0, runCmd(t, h, nil, "", "init").code)
		r := runCmd(t, h, nil, "", "remote", "enable", "origin")
		require.Equal(t, 0, r.code, r.stderr)
	}
	engineer := map[string]string{"AGENTX_AGENT": "engineer", "AGENTX_MCP_MAX_WAIT": "300ms"}
	ask := func(dir string, topic string, extra ...string) result {
		t.Helper()
		r := runCmd(t, dir, engineer, "", append([]string{"clarify", "ask", "--issue", "50", "--to", "architect", "--topic", topic, "--question", topic + "?", "--non-blocking"}, extra...)...)
		require.Equal(t, 0, r.code, r.stderr)
		return r
	}
	assert.Equal(t, "CLR-50-001", strings.TrimSpace(ask(a, "Schema", "--offline").stdout), "a provisional id")
	assert.Equal(t, "CLR-50-001", strings.TrimSpace(ask(b, "Legacy").stdout))
	r := runCmd(t, a, nil, "", "sync")
	require.Equal(t, 0, r.code, r.stderr)
	r = runCmd(t, a, nil, "", "sync", "--status")
	require.Contains(t, r.stdout, "CLR-50-001: delivered as CLR-50-002")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cs, stop := startMCP(t, ctx, engineer, &stderr)
	tests := []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"clarify_show", map[string]any{"id": "CLR-50-001"}, []string{"clarify", "show", "CLR-50-001"}},
		{"clarify_wait", map[string]any{"id": "CLR-50-001", "wait_seconds": 0}, []string{"clarify", "wait", "CLR-50-001", "--timeout", "1s"}},
		{"clarify_resolve", map[string]any{"id": "CLR-50-001", "body": "done"}, []string{"clarify", "resolve", "CLR-50-001", "--body", "done"}},
		{"clarify_followup", map[string]any{"id": "CLR-50-001", "body": "and the index?"}, []string{"clarify", "followup", "CLR-50-001", "--body", "and the index?"}},
		{"clarify_assume", map[string]any{"id": "CLR-50-001", "assumption": "no"}, []string{"clarify", "assume", "CLR-50-001", "--assumption", "no"}},
		{"clarify_answer", map[string]any{"id": "CLR-50-001", "body": "No.", "from": "engineer"}, []string{"clarify", "answer", "CLR-50-001", "--body", "No."}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			got := toolError(t, ctx, cs, tt.tool, tt.args)
			assert.Equal(t, "superseded", got.Code)
			assert.Equal(t, 6, got.ExitCode)
			assert.Contains(t, got.Message, "CLR-50-002", "names the new id")
			want := sameError(t, runCmd(t, a, engineer, "", append(tt.cli, "--json")...), got)
			assert.Contains(t, want.Error.Hint, "agentx clarify show --issue 50", "the command line names its command")
			assert.Contains(t, got.Hint, `clarify_show {"id":"CLR-50-002"}`, "the server names its tool")
			assert.NotContains(t, got.Hint, "agentx ")
		})
	}
	// B's question, CLR-50-001 everywhere else, is untouched: still pending,
	// no answer, no follow-up, no assumption.
	out, err := exec.Command("git", "-C", bare, "cat-file", "blob", "refs/agentx/clarifications/issue-50:issue-50.json").Output()
	require.NoError(t, err)
	l, err := ledger.Decode("origin issue-50", out)
	require.NoError(t, err)
	assert.Equal(t, ledger.Pending, l.Find("CLR-50-001").Status)
	assert.Len(t, l.Find("CLR-50-001").Thread, 1)
	assert.Equal(t, 0, stop(), "stderr: %s", stderr.String())
}

// TestMCPMessageLimit: the MCP tools hold every message to the limit the
// command line does (ledger.MaxMessageLen): past it, a usage error (exit
// 2) naming the size and the limit, with a hint, and nothing written.
func TestMCPMessageLimit(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	engineer := map[string]string{"AGENTX_AGENT": "engineer", "AGENTX_MCP_MAX_WAIT": "300ms"}
	architect := map[string]string{"AGENTX_AGENT": "architect", "AGENTX_MCP_MAX_WAIT": "300ms"}
	require.Equal(t, 0, runCmd(t, "", engineer, "", "clarify", "ask", "--issue", "42", "--to", "architect", "--topic", "t", "--question", "q?").code)
	require.Equal(t, 0, runCmd(t, "", architect, "", "clarify", "answer", "CLR-42-001", "--body", "a.").code)
	require.Equal(t, 0, runCmd(t, "", engineer, "", "clarify", "ask", "--issue", "42", "--to", "architect", "--topic", "t", "--question", "q2?").code)
	ledgerFile := filepath.Join(dir, ".agentx", "state", "clarifications", "issue-42.json")
	before := readFile(t, ledgerFile)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	asEngineer, stopEngineer := startMCP(t, ctx, engineer, &stderr)
	asArchitect, stopArchitect := startMCP(t, ctx, architect, &stderr)
	big := strings.Repeat("x", 20_000)
	tests := []struct {
		cs    *mcp.ClientSession
		tool  string
		args  map[string]any
		field string
	}{
		{asEngineer, "clarify_ask", map[string]any{"issue": 42, "to": "architect", "topic": "t", "question": big}, "question"},
		{asEngineer, "ask_human", map[string]any{"question": big}, "question"},
		{asArchitect, "clarify_answer", map[string]any{"id": "CLR-42-002", "body": big}, "answer"},
		{asEngineer, "clarify_followup", map[string]any{"id": "CLR-42-001", "body": big}, "follow-up"},
		{asEngineer, "clarify_resolve", map[string]any{"id": "CLR-42-001", "body": big}, "resolution"},
		{asEngineer, "clarify_assume", map[string]any{"id": "CLR-42-002", "assumption": big}, "assumption"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			got := toolError(t, ctx, tt.cs, tt.tool, tt.args)
			assert.Equal(t, "usage", got.Code)
			assert.Equal(t, 2, got.ExitCode)
			assert.Equal(t, fmt.Sprintf("%s %q is 20000 bytes; the limit is %d bytes", tt.field, strings.Repeat("x", 40)+"...", ledger.MaxMessageLen), got.Message)
			assert.Contains(t, got.Hint, fmt.Sprintf("shorten it to %d bytes or fewer", ledger.MaxMessageLen))
		})
	}
	assert.Equal(t, 0, stopEngineer(), "stderr: %s", stderr.String())
	assert.Equal(t, 0, stopArchitect(), "stderr: %s", stderr.String())
	assert.Equal(t, before, readFile(t, ledgerFile), "nothing written")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
