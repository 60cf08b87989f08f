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
//     but not a JSON-RPC message an invalid-request error (-32600), and a
//     line longer than MaxLineLength a parse error; the session goes on;
//   - a batch (an array of messages) is taken in a session whose
//     initialize settled on protocol version 2025-03-26, the one version
//     that has batches (see batchVersion): its requests are answered
//     together, in one array in the batch's order; in any other session
//     (and before initialize) a batch gets an invalid-request error;
//   - a request sent before initialize was answered (other than ping) gets
//     an invalid-request error (-32600) that says so: the SDK's refusal
//     carries no error code;
//   - a request the client cancelled (notifications/cancelled) before its
//     response was written gets no response, as the protocol asks;
//   - a form the server closes (an elicitation it cancels) says why in
//     the cancellation (see closeReason), not "context canceled".
type StdioTransport struct {
	In  io.Reader // the client's messages; closed (if a Closer) when the session ends
	Out io.Writer // the server's messages; never closed
}

// batchVersion is the one protocol version with JSON-RPC batches: they
// came in 2025-03-26, and 2025-06-18 removed them.
const batchVersion = "2025-03-26"

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	out := &lockedWriter{w: t.Out}
	sess := &session{out: out, calls: map[jsonrpc.ID]*pending{}}
	in := &lineFilter{r: bufio.NewReaderSize(t.In, 64<<10), src: t.In, sess: sess, max: MaxLineLength}
	inner, err := (&mcp.IOTransport{Reader: in, Writer: out}).Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("stdio transport: %w", err)
	}
	return &conn{Connection: inner, sess: sess}, nil
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
// ending in a newline, and answers the others on the session's output. A
// batch's messages pass on one a line (see batch).
type lineFilter struct {
	r    *bufio.Reader
	src  io.Reader
	sess *session
	max  int
	next []byte // the rest of what is being passed on
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

// readLine returns what the next line passes on, each message with its
// newline, or nil after answering a line that is not a message (or
// skipping a blank one).
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
		f.sess.reply(jsonrpc.ID{}, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: a message longer than %d bytes; send one JSON-RPC message per line", f.max))
		return nil, err
	}
	msg := bytes.TrimSpace(f.line.Bytes())
	if len(msg) == 0 {
		return nil, err
	}
	if !json.Valid(msg) {
		f.sess.reply(jsonrpc.ID{}, jsonrpc.CodeParseError, "Parse error: the line is not JSON; send one JSON-RPC message per line")
		return nil, err
	}
	if msg[0] == '[' {
		if pass := f.batch(msg); pass != nil {
			return pass, nil
		}
		return nil, err
	}
	m, code, why := decode(msg)
	if m == nil {
		f.sess.reply(idOf(msg), code, why)
		return nil, err
	}
	f.sess.passing(m, nil)
	return append(bytes.Clone(msg), '\n'), nil
}

// decode is msg as a JSON-RPC message, or the error code and message
// that answer it.
func decode(msg []byte) (jsonrpc.Message, int64, string) {
	if len(msg) == 0 || msg[0] != '{' {
		return nil, jsonrpc.CodeInvalidRequest, "Invalid request: a JSON-RPC message is an object"
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, jsonrpc.CodeInvalidRequest, "Invalid request: " + err.Error()
	}
	return m, 0, ""
}

// batch passes on the messages of a batch, one a line, in a session at
// batchVersion, and has the session gather the responses to its requests
// into one array, with an error in its place for each element that is not
// a message (or is initialize, which no batch may hold, or reuses an id
// in use). Elsewhere the batch gets one invalid-request error.
func (f *lineFilter) batch(msg []byte) []byte {
	var elems []json.RawMessage
	if json.Unmarshal(msg, &elems) != nil || len(elems) == 0 {
		f.sess.reply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid request: an empty batch")
		return nil
	}
	if v := f.sess.protocolVersion(); v != batchVersion {
		settled := "no version is settled yet (initialize first)"
		if v != "" {
			settled = "this session speaks " + v
		}
		f.sess.reply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid request: batches are not supported in this session: only protocol version %s has them, and %s; send one message per line", batchVersion, settled))
		return nil
	}
	b := &batch{}
	var pass []byte
	for _, raw := range elems {
		raw = bytes.TrimSpace(raw)
		m, code, why := decode(raw)
		if m == nil {
			b.add(errorLine(idOf(raw), code, why))
			continue
		}
		if req, ok := m.(*jsonrpc.Request); ok && req.Method == "initialize" {
			b.add(errorLine(req.ID, jsonrpc.CodeInvalidRequest, "Invalid request: initialize may not be part of a batch"))
			continue
		}
		if !f.sess.passing(m, b) {
			req := m.(*jsonrpc.Request)
			b.add(errorLine(req.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid request: id %v is already in use", req.ID.Raw())))
			continue
		}
		pass = append(append(pass, raw...), '\n')
	}
	f.sess.gathered(b)
	return pass
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

// errorLine is an error response: to id, or to null (id not valid) when
// the request's id cannot be known.
func errorLine(id jsonrpc.ID, code int64, msg string) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", id.Raw(), &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: error response: %v", err)) // an id, a number and a string
	}
	return b
}

func (f *lineFilter) Close() error {
	if c, ok := f.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// session is what the transport knows of its session: the requests
// passed on and not answered yet, and the protocol version initialize
// settled on. The filter registers what it passes on, the connection what
// it reads and writes.
type session struct {
	out     io.Writer // the server's messages, whole writes
	mu      sync.Mutex
	calls   map[jsonrpc.ID]*pending
	version string // "" until initialize is answered
}

// pending is a request passed on to the server, until its response is
// written.
type pending struct {
	method    string
	early     bool   // sent before initialize was answered, by a client that settles the version with it
	cancelled bool   // the client cancelled it: no response
	batch     *batch // the batch it came in, if any
	slot      int    // its response's place in the batch
}

// batch is the responses to a batch, in its order, gathered until every
// request in it is answered; a request cancelled has none.
type batch struct {
	responses [][]byte
	waiting   int
}

func (b *batch) add(resp []byte) { b.responses = append(b.responses, resp) }

// reply writes an error response.
func (s *session) reply(id jsonrpc.ID, code int64, msg string) {
	_, _ = s.out.Write(append(errorLine(id, code, msg), '\n'))
}

func (s *session) protocolVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// passing registers m, a message about to be passed on, part of b if not
// nil; false for a request of b whose id is in use (by an earlier request
// of b, or one not yet answered). A single request reusing an id is
// passed on unregistered: the SDK refuses it.
func (s *session) passing(m jsonrpc.Message, b *batch) bool {
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, used := s.calls[req.ID]; used {
		return b == nil
	}
	c := &pending{method: req.Method, early: s.version == "" && !perRequestVersion(req)}
	if b != nil {
		c.batch, c.slot = b, len(b.responses)
		b.add(nil)
		b.waiting++
	}
	s.calls[req.ID] = c
	return true
}

// perRequestVersion reports whether req carries its protocol version
// itself (2026-07-28 and later), as a client that never sends initialize
// does.
func perRequestVersion(req *jsonrpc.Request) bool {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return false
	}
	v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= multiRoundTripVersion
}

// gathered writes b's responses if none is awaited: a batch of
// notifications gets none, one whose elements were all refused its
// errors.
func (s *session) gathered(b *batch) {
	s.mu.Lock()
	done := b.waiting == 0
	s.mu.Unlock()
	if done {
		s.flush(b)
	}
}

// flush writes a batch's responses as one array; nothing if there are
// none.
func (s *session) flush(b *batch) {
	var out []byte
	for _, r := range b.responses {
		if r == nil {
			continue
		}
		if out == nil {
			out = append(out, '[')
		} else {
			out = append(out, ',')
		}
		out = append(out, r...)
	}
	if out != nil {
		_, _ = s.out.Write(append(out, ']', '\n'))
	}
}

// cancelled marks the request id as cancelled by the client, if it waits
// for its response.
func (s *session) cancelled(id jsonrpc.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.calls[id]; ok {
		c.cancelled = true
	}
}

// answered takes the request resp answers off the session: nil if resp
// answers none passed on. The response to initialize settles the
// protocol version, before it is written.
func (s *session) answered(resp *jsonrpc.Response) *pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.calls[resp.ID]
	if !ok {
		return nil
	}
	delete(s.calls, resp.ID)
	if c.method == "initialize" && resp.Error == nil && !c.cancelled {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &r) == nil {
			s.version = r.ProtocolVersion
		}
	}
	return c
}

// inBatch puts resp (nil: none) in its place in c's batch, and writes the
// batch once it is complete.
func (s *session) inBatch(c *pending, resp []byte) {
	s.mu.Lock()
	c.batch.responses[c.slot] = resp
	c.batch.waiting--
	done := c.batch.waiting == 0
	s.mu.Unlock()
	if done {
		s.flush(c.batch)
	}
}

// conn is the SDK's connection over the filter, with what the session
// does to the messages written (see StdioTransport).
type conn struct {
	mcp.Connection
	sess *session
}

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.Method == "notifications/cancelled" {
		var p mcp.CancelledParams
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				c.sess.cancelled(id)
			}
		}
	}
	return msg, err
}

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/cancelled" {
		if why := closeReasonOf(ctx); why != "" {
			msg = withReason(req, why)
		}
	}
	if m, ok := msg.(*jsonrpc.Response); ok {
		p := c.sess.answered(m)
		if p == nil {
			return c.Connection.Write(ctx, msg)
		}
		if p.early && p.method != "initialize" && codeless(m.Error) {
			m = &jsonrpc.Response{ID: m.ID, Extra: m.Extra, Error: &jsonrpc.Error{
				Code:    jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("Invalid request: %q before initialize: send initialize first and wait for its response (only ping may come before it)", p.method),
			}}
			msg = m
		}
		if p.batch != nil {
			var b []byte
			if !p.cancelled {
				var err error
				if b, err = jsonrpc.EncodeMessage(m); err != nil {
					b = errorLine(m.ID, jsonrpc.CodeInternalError, "Internal error: the response cannot be encoded")
				}
			}
			c.sess.inBatch(p, b)
			return nil
		}
		if p.cancelled {
			return nil
		}
	}
	return c.Connection.Write(ctx, msg)
}

// codeless reports whether err, a response's error, has no JSON-RPC code
// of its own: it would go out as code 0, which names no error.
func codeless(err error) bool {
	var rpc *jsonrpc.Error
	return err != nil && !errors.As(err, &rpc)
}

// withReason is the cancellation req with the reason why.
func withReason(req *jsonrpc.Request, why string) *jsonrpc.Request {
	var p map[string]any
	if json.Unmarshal(req.Params, &p) != nil || p == nil {
		return req
	}
	p["reason"] = why
	b, err := json.Marshal(p)
	if err != nil {
		return req
	}
	return &jsonrpc.Request{ID: req.ID, Method: req.Method, Params: b, Extra: req.Extra}
}
