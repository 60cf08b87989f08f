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

// nextBatch is the next line the server writes, within 10 s, as a batch's
// responses.
func (s *rawServer) nextBatch() []map[string]any {
	s.t.Helper()
	line := s.nextLine()
	var ms []map[string]any
	require.NoError(s.t, json.Unmarshal(line, &ms), "a batch's responses: %s", line)
	s.all = append(s.all, ms...)
	return ms
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

// TestRawStreamBatch: in a session whose initialize settled on
// 2025-03-26, the one protocol version with JSON-RPC batches, a batch's
// requests are answered together, in one array in the batch's order, with
// an error in its place for each element that cannot be taken; a batch of
// notifications gets no response. At the other versions, and before
// initialize, a batch gets one invalid-request error. The session goes on.
func TestRawStreamBatch(t *testing.T) {
	bin := agentxBinary(t)
	root := t.TempDir()
	run(t, bin, root, "", "init")

	t.Run(batchVersion, func(t *testing.T) {
		s := startRaw(t, bin, root, "engineer")
		s.initializeAt(batchVersion)
		s.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},` +
			`{"jsonrpc":"2.0","id":"two","method":"tools/list"},` +
			`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},` +
			`{"id":4},` +
			`42,` +
			`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}},` +
			`{"jsonrpc":"2.0","id":1,"method":"ping"},` +
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"clarify_list","arguments":{}}}]`)
		got := s.nextBatch()
		want := []struct {
			id   any
			code float64 // 0: a result
		}{{float64(1), 0}, {"two", 0}, {float64(4), -32600}, {nil, -32600}, {float64(5), -32600}, {float64(1), -32600}, {float64(7), 0}}
		require.Len(t, got, len(want), "%v", got)
		for i, w := range want {
			assert.Equal(t, w.id, got[i]["id"], "response %d: %v", i, got[i])
			if w.code == 0 {
				assert.NotNil(t, got[i]["result"], "response %d: %v", i, got[i])
			} else {
				assert.Equal(t, w.code, errorCode(t, got[i]), "response %d: %v", i, got[i])
			}
		}
		assert.Len(t, got[1]["result"].(map[string]any)["tools"], len(allTools))
		assert.Contains(t, got[4]["error"].(map[string]any)["message"], "initialize may not be part of a batch")
		assert.Contains(t, got[5]["error"].(map[string]any)["message"], "id 1 is already in use")
		assert.Nil(t, got[6]["result"].(map[string]any)["isError"], "%v", got[6])

		s.send(`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`)
		s.call(8, "ping", nil) // the next line is the ping's: no response to a batch of notifications
		s.send(`[1,{"id":3}]`)
		got = s.nextBatch()
		require.Len(t, got, 2, "%v", got)
		assert.Equal(t, []any{nil, float64(3)}, []any{got[0]["id"], got[1]["id"]})
		s.call(9, "ping", nil)
		require.NoError(t, s.in.Close())
	})

	for _, version := range []string{"", "2025-06-18", "2025-11-25"} {
		name := version
		if name == "" {
			name = "before initialize"
		}
		t.Run(name, func(t *testing.T) {
			s := startRaw(t, bin, root, "engineer")
			settled := "no version is settled yet (initialize first)"
			if version != "" {
				s.initializeAt(version)
				settled = "this session speaks " + version
			}
			s.send(`[{"jsonrpc":"2.0","id":8,"method":"ping"}]`)
			m := s.next()
			assert.Nil(t, m["id"])
			assert.Equal(t, float64(-32600), errorCode(t, m))
			assert.Equal(t, "Invalid request: batches are not supported in this session: only protocol version 2025-03-26 has them, and "+settled+"; send one message per line",
				m["error"].(map[string]any)["message"])
			s.call(9, "ping", nil) // the session goes on
			require.NoError(t, s.in.Close())
		})
	}
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
