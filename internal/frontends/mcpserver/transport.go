package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineLength is the longest message the stdio transport reads: the
// SDK's own limit.
const MaxLineLength = mcp.DefaultMaxLineLength

// StdioTransport is MCP's stdio transport as clients expect it: one
// JSON-RPC message per line, and a line that is not one is answered and
// skipped, never the end of the session. The SDK's transport
// (mcp.IOTransport) ends the session on the first malformed line; this one
// sits in front of it:
//
//   - a line that is not JSON gets a parse error (-32700), one that is JSON
//     but not a JSON-RPC message (or is a batch) an invalid-request error
//     (-32600), and a line longer than MaxLineLength a parse error; the
//     session goes on;
//   - a request the client cancelled (notifications/cancelled) before its
//     response was written gets no response, as the protocol asks.
type StdioTransport struct {
	In  io.Reader // the client's messages; closed (if a Closer) when the session ends
	Out io.Writer // the server's messages; never closed
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	out := &lockedWriter{w: t.Out}
	in := &lineFilter{r: bufio.NewReaderSize(t.In, 64<<10), src: t.In, out: out, max: MaxLineLength}
	inner, err := (&mcp.IOTransport{Reader: in, Writer: out}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Connection: inner, inFlight: map[jsonrpc.ID]bool{}}, nil
}

// lockedWriter serialises whole writes: the SDK's messages and the
// filter's error responses never interleave on a line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// lineFilter passes on the lines of r that are JSON-RPC messages, each
// ending in a newline, and answers the others on out. A batch (an array of
// messages) is answered as an invalid request: MCP has none since
// 2025-06-18, and the SDK ends the session on one it does not take.
type lineFilter struct {
	r    *bufio.Reader
	src  io.Reader
	out  io.Writer
	max  int
	next []byte // the rest of the line being passed on
	line bytes.Buffer
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.next) == 0 {
		line, err := f.readLine()
		if line != nil {
			f.next = line
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, f.next)
	f.next = f.next[n:]
	return n, nil
}

// readLine returns the next line that is a message, with its newline, or
// nil after answering a line that is not (or skipping a blank one).
func (f *lineFilter) readLine() ([]byte, error) {
	f.line.Reset()
	tooLong := false
	var err error
	for {
		var chunk []byte
		chunk, err = f.r.ReadSlice('\n')
		if !tooLong {
			f.line.Write(chunk)
			if f.line.Len() > f.max+1 {
				tooLong = true
				f.line.Reset()
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	if tooLong {
		f.reply(jsonrpc.ID{}, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: a message longer than %d bytes; send one JSON-RPC message per line", f.max))
		return nil, err
	}
	msg := bytes.TrimSpace(f.line.Bytes())
	if len(msg) == 0 {
		return nil, err
	}
	if !json.Valid(msg) {
		f.reply(jsonrpc.ID{}, jsonrpc.CodeParseError, "Parse error: the line is not JSON; send one JSON-RPC message per line")
		return nil, err
	}
	switch {
	case msg[0] == '[':
		f.reply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid request: batches are not supported (MCP 2025-06-18 removed them); send one message per line")
		return nil, err
	case msg[0] != '{':
		f.reply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid request: a JSON-RPC message is an object")
		return nil, err
	}
	if _, derr := jsonrpc.DecodeMessage(msg); derr != nil {
		f.reply(idOf(msg), jsonrpc.CodeInvalidRequest, "Invalid request: "+derr.Error())
		return nil, err
	}
	return append(bytes.Clone(msg), '\n'), nil
}

// idOf is the id of a JSON object that is not a valid message, if it has a
// valid one: the error response names the request it answers.
func idOf(msg []byte) jsonrpc.ID {
	var m struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(m.ID)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

// reply writes an error response: to id, or to null (id not valid) when
// the request's id cannot be known.
func (f *lineFilter) reply(id jsonrpc.ID, code int64, msg string) {
	b, err := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", id.Raw(), &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		return
	}
	_, _ = f.out.Write(append(b, '\n'))
}

func (f *lineFilter) Close() error {
	if c, ok := f.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// conn is the SDK's connection, less the responses to cancelled requests.
type conn struct {
	mcp.Connection
	mu       sync.Mutex
	inFlight map[jsonrpc.ID]bool // requests read and not answered: true once cancelled
}

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil {
		c.mu.Lock()
		switch {
		case req.IsCall():
			c.inFlight[req.ID] = false
		case req.Method == "notifications/cancelled":
			var p mcp.CancelledParams
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					if _, ok := c.inFlight[id]; ok {
						c.inFlight[id] = true
					}
				}
			}
		}
		c.mu.Unlock()
	}
	return msg, err
}

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		cancelled := c.inFlight[resp.ID]
		delete(c.inFlight, resp.ID)
		c.mu.Unlock()
		if cancelled {
			return nil
		}
	}
	return c.Connection.Write(ctx, msg)
}
