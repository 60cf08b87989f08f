package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/frontends/mcpserver"
)

// TestMCPCommand runs `agentx mcp` in-process over pipes and checks that a
// tool error carries exactly what the CLI prints for the same failure: the
// classifier is the CLI's, injected, not a copy.
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
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			require.NoError(t, err)
			require.True(t, res.IsError)
			b, err := json.Marshal(res.Meta[mcpserver.ErrorMetaKey])
			require.NoError(t, err)
			var got mcpserver.ErrorInfo
			require.NoError(t, json.Unmarshal(b, &got))

			r := runCmd(t, "", env, "", append(tt.cli, "--json")...)
			var want errorEnvelope
			require.NoError(t, json.Unmarshal([]byte(r.stderr), &want), r.stderr)
			assert.Equal(t, r.code, got.ExitCode)
			assert.Equal(t, want.Error.Code, got.Code)
			assert.Equal(t, want.Error.ExitCode, got.ExitCode)
			assert.Equal(t, want.Error.Message, got.Message)
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
