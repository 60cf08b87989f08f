package mcpserver

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentxBinary builds agentx once per test run, alone, as
// go install .../cmd/agentx@latest does: agentx mcp needs nothing beside it.
func agentxBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the agentx binary")
	}
	return testenv.AgentxBinary(t)
}

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinary()
	os.Exit(code)
}

// agentxEnv is a clean environment for the binary: the workspace is root
// and the caller is agent.
func agentxEnv(root, agent string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTX_") {
			env = append(env, kv)
		}
	}
	return append(env, "AGENTX_ROOT="+root, "AGENTX_AGENT="+agent)
}

func run(t *testing.T, bin, root, agent string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	cmd.Env = agentxEnv(root, agent)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "agentx %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// TestRealProcess starts `agentx mcp` as a subprocess, as a client would,
// asks through it, answers from a second agentx process, and receives the
// answer through clarify_wait.
func TestRealProcess(t *testing.T) {
	bin := agentxBinary(t)
	root := t.TempDir()
	run(t, bin, root, "", "init")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := exec.Command(bin, "mcp")
	server.Dir = root
	server.Env = agentxEnv(root, "engineer")
	var stderr bytes.Buffer
	server.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: server}, nil)
	require.NoError(t, err)

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, tools.Tools, len(allTools))
	assert.Equal(t, "agentx", cs.InitializeResult().ServerInfo.Name)

	ask := into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{
		"issue": 42, "to": "architect", "topic": "Cache", "question": "TTL per key or global?",
	}))
	assert.Equal(t, "CLR-42-001", ask.ID)
	assert.Equal(t, OutcomePending, ask.Outcome)

	// a rule violation carries the CLI's code, exit code and hint
	info := errInfo(t, callTool(t, cs, "clarify_ask", map[string]any{"issue": 42, "to": "reviewer", "topic": "t", "question": "q"}))
	assert.Equal(t, ErrorInfo{Code: "rejected", ExitCode: 4, Rule: "scope", Message: info.Message, Hint: info.Hint}, info)
	assert.Contains(t, info.Hint, "ask one of the allowed agents")

	// wait in the server while a second process answers
	type waited struct {
		r   call
		err error
	}
	done := make(chan waited, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "clarify_wait", Arguments: map[string]any{"id": "CLR-42-001", "wait_seconds": 20}})
		done <- waited{call{res}, err}
	}()
	time.Sleep(200 * time.Millisecond)
	run(t, bin, root, "architect", "clarify", "answer", "CLR-42-001", "--body", "Per key, 5 minutes.")
	w := <-done
	require.NoError(t, w.err)
	got := into[AskResult](t, w.r)
	assert.Equal(t, OutcomeAnswered, got.Outcome)
	assert.Equal(t, "Per key, 5 minutes.", got.Answer)
	assert.Equal(t, "architect", got.AnsweredBy)

	// end of input: the server stops cleanly
	require.NoError(t, cs.Close())
	require.NotNil(t, server.ProcessState)
	assert.Equal(t, 0, server.ProcessState.ExitCode(), "stderr: %s", stderr.String())
	assert.NotContains(t, stderr.String(), "jsonrpc", "protocol leaked to stderr")
}

// TestRealProcessSignal: SIGTERM stops a server promptly and cleanly, even
// in the middle of a long clarify_wait and with its input still open.
func TestRealProcessSignal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on windows")
	}
	bin := agentxBinary(t)
	root := t.TempDir()
	run(t, bin, root, "", "init")
	run(t, bin, root, "engineer", "clarify", "ask", "--issue", "1", "--to", "architect", "--topic", "t", "--question", "q?")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := exec.Command(bin, "mcp", "--max-wait", "20s")
	server.Dir = root
	server.Env = agentxEnv(root, "engineer")
	stdin, err := server.StdinPipe()
	require.NoError(t, err)
	stdout, err := server.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, server.Start())
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	require.NoError(t, err)
	called := make(chan struct{})
	go func() {
		close(called)
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "clarify_wait", Arguments: map[string]any{"id": "CLR-1-001"}})
	}()
	<-called
	time.Sleep(300 * time.Millisecond) // the wait is under way

	start := time.Now()
	require.NoError(t, server.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "exit status")
		assert.Less(t, time.Since(start), 4*time.Second)
	case <-time.After(10 * time.Second):
		_ = server.Process.Kill()
		t.Fatal("the server did not stop on SIGTERM")
	}
	_ = stdin.Close()
}
