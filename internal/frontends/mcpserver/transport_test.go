package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// filter runs input through a lineFilter and returns what it passes on
// and what it answers.
func filter(t testing.TB, input string, max int) (passed, answered string) {
	return filterAt(t, input, max, "")
}

// filterAt is filter in a session whose initialize settled on version.
func filterAt(t testing.TB, input string, max int, version string) (passed, answered string) {
	var out bytes.Buffer
	sess := &session{out: &out, calls: map[jsonrpc.ID]*pending{}, version: version}
	f := &lineFilter{r: bufio.NewReaderSize(strings.NewReader(input), 16), src: strings.NewReader(""), sess: sess, max: max}
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return string(b), out.String()
}

func TestLineFilter(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	tests := []struct {
		name, input, passed string
		answers             []string // the error responses, in order
	}{
		{"messages pass, one a line", ping + "\n" + ping + "\r\n", ping + "\n" + ping + "\n", nil},
		{"the last line needs no newline", ping, ping + "\n", nil},
		{"blank lines are skipped", "\n  \n" + ping + "\n\n", ping + "\n", nil},
		{"not JSON", "oops\n" + ping + "\n", ping + "\n", []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not JSON; send one JSON-RPC message per line"}}`}},
		{"a message cut in two lines", "{\"jsonrpc\":\"2.0\",\n\"id\":1,\"method\":\"ping\"}\n", "", []string{`"code":-32700`, `"code":-32700`}},
		{"no version", `{"id":4,"method":"ping"}` + "\n", "", []string{`"id":4,"error":{"code":-32600`}},
		{"an id of the wrong kind", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n", "", []string{`"id":null,"error":{"code":-32600`}},
		{"a batch", "[" + ping + "]\n", "", []string{`"id":null,"error":{"code":-32600,"message":"Invalid request: batches are not supported`}},
		{"a string", `"ping"` + "\n", "", []string{`"code":-32600,"message":"Invalid request: a JSON-RPC message is an object"`}},
		{"too long", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("y", 100) + `"}}` + "\n" + ping + "\n", ping + "\n", []string{`"code":-32700,"message":"Parse error: a message longer than 80 bytes`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			passed, answered := filter(t, tt.input, 80)
			assert.Equal(t, tt.passed, passed)
			lines := strings.Split(strings.TrimSuffix(answered, "\n"), "\n")
			if answered == "" {
				lines = nil
			}
			require.Len(t, lines, len(tt.answers), answered)
			for i, want := range tt.answers {
				assert.Contains(t, lines[i], want)
				assert.NoError(t, errorResponse(lines[i]))
			}
		})
	}
}

// TestLineFilterBatch: in a session at batchVersion, a batch's messages
// pass on one a line; the elements that cannot be taken are answered
// together, in one array, once no request of the batch waits (here, when
// the batch has none).
func TestLineFilterBatch(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	note := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	tests := []struct {
		name, input, passed string
		answers             []string // the error responses in the one array, in order
	}{
		{"a batch", "[" + ping + ", " + note + "]\n", ping + "\n" + note + "\n", nil},
		{"notifications only", "[" + note + "," + note + "]\n", note + "\n" + note + "\n", nil},
		{"nothing to take", `[1,{"id":2},[],{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}]` + "\n", "", []string{
			`"id":null,"error":{"code":-32600,"message":"Invalid request: a JSON-RPC message is an object"}`,
			`"id":2,"error":{"code":-32600`,
			`"id":null,"error":{"code":-32600,"message":"Invalid request: a JSON-RPC message is an object"}`,
			`"id":3,"error":{"code":-32600,"message":"Invalid request: initialize may not be part of a batch"}`,
		}},
		{"an id used twice", "[" + ping + "," + ping + "]\n", ping + "\n", nil}, // the second's error waits for the first's response
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			passed, answered := filterAt(t, tt.input, 1024, batchVersion)
			assert.Equal(t, tt.passed, passed)
			if tt.answers == nil {
				assert.Empty(t, answered)
				return
			}
			var got []json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(answered), &got), answered)
			require.Len(t, got, len(tt.answers), answered)
			for i, want := range tt.answers {
				assert.Contains(t, string(got[i]), want)
				assert.NoError(t, errorResponse(string(got[i])))
			}
		})
	}
}

// FuzzLineFilter: whatever a client sends, every line passed on is one
// JSON-RPC message, every answer is one JSON-RPC error response (or, in a
// session with batches, an array of them), and nothing panics.
func FuzzLineFilter(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"{}\n[]\n\n42\nnull\n",
		`{"jsonrpc":"2.0","id":"x","result":{}}` + "\r\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		"\xff\xfe{\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"id":2},3]`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, input string, batches bool) {
		version := "2025-06-18"
		if batches {
			version = batchVersion
		}
		passed, answered := filterAt(t, input, 256, version)
		for line := range strings.Lines(passed) {
			if !strings.HasSuffix(line, "\n") {
				t.Fatalf("a passed line without its newline: %q", line)
			}
			if _, err := jsonrpc.DecodeMessage([]byte(line)); err != nil {
				t.Fatalf("passed on %q, not a message: %v", line, err)
			}
		}
		for line := range strings.Lines(answered) {
			var batch []json.RawMessage
			if batches && json.Unmarshal([]byte(line), &batch) == nil {
				for _, resp := range batch {
					if err := errorResponse(string(resp)); err != nil {
						t.Fatal(err)
					}
				}
				continue
			}
			if err := errorResponse(line); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// errorResponse checks that line is a JSON-RPC error response (the SDK's
// decoder refuses the null id of one that answers no known request).
func errorResponse(line string) error {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    *int64 `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil || m.JSONRPC != "2.0" || m.ID == nil || m.Error == nil || m.Error.Code == nil || m.Error.Message == "" {
		return fmt.Errorf("%q is not a JSON-RPC error response (%v)", line, err)
	}
	return nil
}
