package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawServer is `agentx mcp` driven line by line, as a client's stdio
// transport drives it.
type rawServer struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan json.RawMessage // each line the server writes: a message, or a batch's responses
	all   []map[string]any     // every message read so far
}

func startRaw(t *testing.T, bin, root, agent string, args ...string) *rawServer {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Dir = root
	cmd.Env = agentxEnv(root, agent)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	s := &rawServer{t: t, cmd: cmd, in: in, lines: make(chan json.RawMessage, 64)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if !json.Valid(sc.Bytes()) {
				t.Errorf("the server wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			s.lines <- json.RawMessage(bytes.Clone(sc.Bytes()))
		}
	}()
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			assert.NoError(t, err, "the server's exit; stderr: %s", stderr.String())
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("the server did not stop at the end of its input")
		}
	})
	return s
}

func (s *rawServer) send(line string) {
	s.t.Helper()
	_, err := io.WriteString(s.in, line+"\n")
	require.NoError(s.t, err)
}

// nextLine is the next line the server writes, within 10 s.
func (s *rawServer) nextLine() json.RawMessage {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		require.True(s.t, ok, "the server ended the session")
		return line
	case <-time.After(10 * time.Second):
		s.t.Fatal("no message from the server within 10 s")
	}
	return nil
}

// next is the next message the server writes, within 10 s: one message,
// not a batch's responses.
func (s *rawServer) next() map[string]any {
	s.t.Helper()
	line := s.nextLine()
	var m map[string]any
	require.NoError(s.t, json.Unmarshal(line, &m), "one message: %s", line)
	s.all = append(s.all, m)
	return m
}

// call sends a request with id and returns its response, failing on any
// other message first.
func (s *rawServer) call(id int, method string, params any) map[string]any {
	s.t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	require.NoError(s.t, err)
	s.send(string(b))
	m := s.next()
	require.Equal(s.t, float64(id), m["id"], "the response to request %d: %v", id, m)
	return m
}

func (s *rawServer) initialize() map[string]any {
	s.t.Helper()
	return s.initializeAt("2025-06-18")
}

// initializeAt initializes the session speaking version, and checks that
// the server settles on it.
func (s *rawServer) initializeAt(version string) map[string]any {
	s.t.Helper()
	r := s.call(1, "initialize", map[string]any{
		"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"},
	})
	require.Equal(s.t, version, r["result"].(map[string]any)["protocolVersion"], "%v", r)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func errorCode(t *testing.T, m map[string]any) float64 {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	require.True(t, ok, "want an error response, got %v", m)
	assert.NotEmpty(t, e["message"])
	return e["code"].(float64)
}

// TestRawStream drives the real binary over its stdin and stdout as a
// client's transport does, with what clients and people send by mistake:
// every line that is not a message gets its JSON-RPC error and the session
// goes on; a request the client cancelled gets no response; the
// capabilities say what is there.
func TestRawStream(t *testing.T) {
	bin := agentxBinary(t)
	root := t.TempDir()
	run(t, bin, root, "", "init")
	run(t, bin, root, "engineer", "clarify", "ask", "--issue", "1", "--to", "architect", "--topic", "t", "--question", "q?")
	s := startRaw(t, bin, root, "engineer")

	init := s.initialize()
	caps := init["result"].(map[string]any)["capabilities"]
	assert.Equal(t, map[string]any{"tools": map[string]any{}}, caps, "tools, whose list never changes; no logging to the client")

	for _, tt := range []struct {
		line string
		id   any
		code float64
	}{
		{`not json{`, nil, -32700},
		{`{"jsonrpc":"2.0","id":7,"method":"ping"`, nil, -32700}, // cut short
		{`{"id":5}`, float64(5), -32600},
		{`{"jsonrpc":"1.0","id":"six","method":"ping"}`, "six", -32600},
		{`42`, nil, -32600},
		{`[]`, nil, -32600},
		{`[{"jsonrpc":"2.0","id":8,"method":"ping"}]`, nil, -32600},
	} {
		s.send(tt.line)
		m := s.next()
		assert.Equal(t, tt.id, m["id"], "%s: %v", tt.line, m)
		assert.Equal(t, tt.code, errorCode(t, m), tt.line)
		s.call(100, "ping", nil) // the session goes on
	}
	s.send("") // a blank line is skipped: nothing to answer

	// wait_seconds as the Inspector sends it, a string
	res := s.call(2, "tools/call", map[string]any{"name": "clarify_wait", "arguments": map[string]any{"id": "CLR-1-001", "wait_seconds": "0"}})
	result := res["result"].(map[string]any)
	assert.Nil(t, result["isError"], "%v", result)
	assert.Equal(t, "pending", result["structuredContent"].(map[string]any)["outcome"])

	require.NoError(t, s.in.Close())
}

// TestRawStreamCancelled: a request the client cancelled gets no
// response; the session goes on, and the id may be used again.
func TestRawStreamCancelled(t *testing.T) {
	bin := agentxBinary(t)
	root := t.TempDir()
	run(t, bin, root, "", "init")
	run(t, bin, root, "engineer", "clarify", "ask", "--issue", "1", "--to", "architect", "--topic", "t", "--question", "q?")
	s := startRaw(t, bin, root, "engineer")
	s.initialize()
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"clarify_wait","arguments":{"id":"CLR-1-001","wait_seconds":20}}}`)
	time.Sleep(300 * time.Millisecond) // the wait is under way
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"the person pressed Esc"}}`)
	time.Sleep(300 * time.Millisecond) // a response, if any, comes now
	s.call(4, "ping", nil)
	// and an id given again after its request was settled is a new request
	res := s.call(3, "tools/call", map[string]any{"name": "clarify_wait", "arguments": map[string]any{"id": "CLR-1-001", "wait_seconds": 0}})
	assert.Nil(t, res["result"].(map[string]any)["isError"])

	require.NoError(t, s.in.Close())
	for line := range s.lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m), "%s", line)
		s.all = append(s.all, m)
	}
	responses := 0
	for _, m := range s.all {
		if m["id"] == float64(3) {
			responses++
		}
	}
	assert.Equal(t, 1, responses, "request 3 was cancelled, then sent again: one response, to the second")
}

// TestRawStreamLongLine: a line over the limit is answered and skipped;
// the next one is read.
func TestRawStreamLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 16 MiB to a real process")
	}
	bin := agentxBinary(t)
	root := t.TempDir()
	run(t, bin, root, "", "init")
	s := startRaw(t, bin, root, "engineer")
	s.initialize()
	go func() {
		big := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"%s"}}`, strings.Repeat("a", MaxLineLength))
		_, _ = io.WriteString(s.in, big+"\n")
	}()
	m := s.next()
	assert.Equal(t, float64(-32700), errorCode(t, m))
	assert.Contains(t, m["error"].(map[string]any)["message"], "longer than")
	s.call(10, "ping", nil)
}

// TestRawStreamBeforeInitialize: a request before initialize (but ping)
// gets an invalid-request error that says so, not the SDK's error without
// a code; the session goes on, and is initialized as usual.
func TestRawStreamBeforeInitialize(t *testing.T) {
	bin := agentxBinary(t)
	root := t.TempDir()
	run(t, bin, root, "", "init")
	s := startRaw(t, bin, root, "engineer")
	for i, tt := range []struct {
		method string
		params any
		code   float64
	}{
		{"tools/list", nil, -32600},
		{"tools/call", map[string]any{"name": "clarify_list", "arguments": map[string]any{}}, -32600},
		{"resources/list", nil, -32600},
		// a method the server does not have is not found, before initialize too
		{"logging/setLevel", map[string]any{"level": "info"}, -32601},
	} {
		m := s.call(10+i, tt.method, tt.params)
		assert.Equal(t, tt.code, errorCode(t, m), tt.method)
		if tt.code == -32600 {
			assert.Equal(t, fmt.Sprintf("Invalid request: %q before initialize: send initialize first and wait for its response (only ping may come before it)", tt.method),
				m["error"].(map[string]any)["message"])
		}
	}
	assert.NotNil(t, s.call(20, "ping", nil)["result"], "ping may come before initialize")
	s.initialize()
	res := s.call(21, "tools/list", nil)
	assert.Len(t, res["result"].(map[string]any)["tools"], len(allTools))
	require.NoError(t, s.in.Close())
}

// TestRawStreamCapabilities: a request that belongs to a capability is
// answered only if the server declares the capability in its initialize
// result; otherwise it gets "method not found" (-32601), as a method the
// server does not have. At each version that initializes.
func TestRawStreamCapabilities(t *testing.T) {
	bin := agentxBinary(t)
	root := t.TempDir()
	run(t, bin, root, "", "init")
	requests := []struct {
		method     string
		params     any
		capability string
	}{
		{"tools/list", nil, "tools"},
		{"logging/setLevel", map[string]any{"level": "info"}, "logging"},
		{"prompts/list", nil, "prompts"},
		{"prompts/get", map[string]any{"name": "x"}, "prompts"},
		{"resources/list", nil, "resources"},
		{"resources/templates/list", nil, "resources"},
		{"resources/read", map[string]any{"uri": "file:///x"}, "resources"},
		{"resources/subscribe", map[string]any{"uri": "file:///x"}, "resources"},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "x"}, "argument": map[string]any{"name": "a", "value": "b"}}, "completions"},
	}
	for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			s := startRaw(t, bin, root, "engineer")
			caps := s.initializeAt(version)["result"].(map[string]any)["capabilities"].(map[string]any)
			assert.Equal(t, map[string]any{"tools": map[string]any{}}, caps)
			for i, r := range requests {
				m := s.call(10+i, r.method, r.params)
				if _, declared := caps[r.capability]; declared {
					assert.NotNil(t, m["result"], "%s: %v", r.method, m)
					continue
				}
				assert.Equal(t, float64(-32601), errorCode(t, m), "%s: %v", r.method, m)
				assert.Contains(t, m["error"].(map[string]any)["message"], r.method)
			}
			require.NoError(t, s.in.Close())
		})
	}
}
