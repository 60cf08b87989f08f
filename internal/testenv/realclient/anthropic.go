package realclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Anthropic is a scripted stand-in of the Anthropic Messages API, served
// on loopback for the real Claude Code (ANTHROPIC_BASE_URL=a.URL). It
// answers POST /v1/messages, streamed (server-sent events) or not, with
// the Reply its script gives for each main-loop request, and answers the
// side requests Claude Code makes on its own (a session's title, the auto
// mode's safety check) with a short text. It records every request.
//
// Its methods are safe for concurrent use.
type Anthropic struct {
	// URL is the base URL of the server, http://127.0.0.1:PORT, for
	// ANTHROPIC_BASE_URL.
	URL string

	t      testing.TB
	srv    *httptest.Server
	script func(*Request) Reply

	scriptMu sync.Mutex // held while script runs: one call at a time

	rec     recorder[*Request]
	mu      sync.Mutex // guards toolIDs
	toolIDs int        // tool_use ids handed out so far
}

// SideReplyText is the text Anthropic answers side requests with (see
// Request.IsMain): short, and no tool call, so the side task ends there.
const SideReplyText = "OK"

// NewAnthropic starts an Anthropic on 127.0.0.1 and stops it when t ends.
// script is called, one request at a time, for each main-loop request
// (Request.IsMain) and gives the model's reply; it must not block for
// long, as Claude Code waits for it. Side requests get SideReplyText
// without calling script.
func NewAnthropic(t testing.TB, script func(r *Request) Reply) *Anthropic {
	t.Helper()
	a := &Anthropic{t: t, script: script}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve)) // on 127.0.0.1
	a.URL = a.srv.URL
	t.Cleanup(a.srv.Close)
	return a
}

// Request is one POST /v1/messages request, decoded. Its fields are not
// to be changed.
type Request struct {
	Seq      int         `json:"-"`      // its rank among the requests received, from 0
	Received time.Time   `json:"-"`      // when it arrived
	Header   http.Header `json:"-"`      // its HTTP headers
	Raw      []byte      `json:"-"`      // its body, as sent
	Model    string      `json:"model"`  // claude-opus-5-5, or another for a side request
	System   Blocks      `json:"system"` // the system prompt's blocks
	Messages []Message   `json:"messages"`
	Tools    []Tool      `json:"tools"`
	Stream   bool        `json:"stream"`
}

// Message is one message of a request's conversation. Its role is "user",
// "assistant" or, as Claude Code sends its environment, "system".
type Message struct {
	Role    string `json:"role"`
	Content Blocks `json:"content"`
}

// Block is one content block: text ("text"), a tool call ("tool_use":
// ID, Name, Input), a tool's result ("tool_result": ToolUseID, Content,
// IsError), or another type (thinking, image...) kept by type only.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   Blocks          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// Blocks is a list of content blocks. It decodes the API's short form, a
// plain string, as one text block.
type Blocks []Block

// UnmarshalJSON decodes a string as one text block, or a list of blocks.
func (b *Blocks) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*b = Blocks{{Type: "text", Text: s}}
		return nil
	}
	var list []Block
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("content blocks: %w", err)
	}
	*b = list
	return nil
}

// Tool is one tool a request offers the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Text is the text of bs, one block a line, tool results' contents
// included.
func (bs Blocks) Text() string {
	var sb strings.Builder
	bs.text(&sb)
	return sb.String()
}

// text appends to sb the text of bs, tool results' contents included.
func (bs Blocks) text(sb *strings.Builder) {
	for _, b := range bs {
		if b.Text != "" {
			sb.WriteString(b.Text)
			sb.WriteByte('\n')
		}
		b.Content.text(sb)
	}
}

// Text is all the text of the request's messages, one block a line: the
// prompts, the model's earlier answers, tool results (what an MCP tool
// returned), hook feedback. The system prompt is left out (see
// SystemText): it names every tool and would match too much.
func (r *Request) Text() string {
	var sb strings.Builder
	for _, m := range r.Messages {
		m.Content.text(&sb)
	}
	return sb.String()
}

// LastUserText is the text of the request's last user message: the new
// prompt, a tool's result, or hook feedback, depending on what started
// the request.
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content.Text()
		}
	}
	return ""
}

// SystemText is the text of the request's system prompt.
func (r *Request) SystemText() string { return r.System.Text() }

// IsMain tells a main-loop request (the conversation with the user, which
// offers the model its tools) from a side request: Claude Code 2.1.328
// sends its side requests (a session's title; the auto mode's safety
// check of a tool call, not streamed) with no tools.
func (r *Request) IsMain() bool { return len(r.Tools) > 0 }

// SessionID is the Claude Code session the request belongs to (its
// X-Claude-Code-Session-Id header).
func (r *Request) SessionID() string { return r.Header.Get("X-Claude-Code-Session-Id") }

// ToolResults are the tool_result blocks of the request's last user
// message: what the tools the model called in its previous reply
// returned, when that is what the request follows. (The last message may
// be a "system" one after it: Claude Code tells so the model of the tools
// of an MCP server that connected meanwhile.)
func (r *Request) ToolResults() []Block {
	var out []Block
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role != "user" {
			continue
		}
		for _, b := range r.Messages[i].Content {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
		break
	}
	return out
}

// Reply is the model's answer to one request: its content blocks, in
// order. It stops with "tool_use" when it calls a tool, else "end_turn".
type Reply []ReplyBlock

// ReplyBlock is one content block of a Reply: a tool call when Tool is
// set, else text.
type ReplyBlock struct {
	Text  string         // the text of a text block
	Tool  string         // the name of the tool called (mcp__SERVER__TOOL for MCP)
	Input map[string]any // the tool call's arguments
}

// Say is a text block.
func Say(text string) ReplyBlock { return ReplyBlock{Text: text} }

// Call is a tool call of name with input (nil is {}).
func Call(name string, input map[string]any) ReplyBlock {
	return ReplyBlock{Tool: name, Input: input}
}

// stopReason is why the model's turn ends after rep.
func (rep Reply) stopReason() string {
	for _, b := range rep {
		if b.Tool != "" {
			return "tool_use"
		}
	}
	return "end_turn"
}

// Requests are the requests received so far, in order.
func (a *Anthropic) Requests() []*Request { return a.rec.all() }

// WaitFor returns the first request, received so far or to come, that
// pred accepts; or ctx's error, with how many requests came, when ctx
// ends first.
func (a *Anthropic) WaitFor(ctx context.Context, pred func(*Request) bool) (*Request, error) {
	return a.rec.waitFor(ctx, "anthropic", pred)
}

// serve answers Claude Code: /v1/messages, /v1/messages/count_tokens,
// and 200 with {} for anything else (the HEAD /api/hello connectivity
// probe it sends when nonessential traffic is not turned off), which it
// logs.
func (a *Anthropic) serve(w http.ResponseWriter, hr *http.Request) {
	switch {
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages":
		a.messages(w, hr)
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages/count_tokens":
		writeJSON(w, map[string]any{"input_tokens": 1})
	default:
		answerOther(a.t, "anthropic", w, hr)
	}
}

// messages answers one POST /v1/messages.
func (a *Anthropic) messages(w http.ResponseWriter, hr *http.Request) {
	body, ok := readBody(w, hr, apiError)
	if !ok {
		return
	}
	r := &Request{Received: time.Now(), Header: hr.Header.Clone(), Raw: body}
	if !decodeBody(a.t, "anthropic", w, body, r, apiError) {
		return
	}
	a.rec.add(r, func(n int) { r.Seq = n })

	rep := Reply{Say(SideReplyText)}
	if r.IsMain() {
		rep = a.answer(r)
	}
	ids := make([]string, len(rep))
	a.mu.Lock()
	for i, b := range rep {
		if b.Tool != "" {
			a.toolIDs++
			ids[i] = fmt.Sprintf("toolu_%024d", a.toolIDs)
		}
	}
	a.mu.Unlock()

	msgID := fmt.Sprintf("msg_%024d", r.Seq+1)
	if r.Stream {
		stream(w, msgID, r.Model, rep, ids)
		return
	}
	writeJSON(w, message(msgID, r.Model, rep, ids))
}

// answer calls the script, one request at a time, so that a script needs
// no lock of its own. An empty reply, or a tool call whose input JSON
// cannot encode, fails the test and is answered SideReplyText instead.
func (a *Anthropic) answer(r *Request) Reply {
	a.scriptMu.Lock()
	defer a.scriptMu.Unlock()
	rep := a.script(r)
	if len(rep) == 0 {
		a.t.Errorf("anthropic: the script gave an empty reply to request %d", r.Seq)
		return Reply{Say(SideReplyText)}
	}
	for _, b := range rep {
		if _, err := json.Marshal(b.Input); err != nil {
			a.t.Errorf("anthropic: the script's call of %s: input: %v", b.Tool, err)
			return Reply{Say(SideReplyText)}
		}
	}
	return rep
}

// input is b's tool call arguments, {} for none.
func (b ReplyBlock) input() map[string]any {
	if b.Input == nil {
		return map[string]any{}
	}
	return b.Input
}

// contentBlock is b, with id for a tool call, as the API spells it whole.
func contentBlock(b ReplyBlock, id string) map[string]any {
	if b.Tool == "" {
		return map[string]any{"type": "text", "text": b.Text}
	}
	return map[string]any{"type": "tool_use", "id": id, "name": b.Tool, "input": b.input()}
}

// usage is the token count every reply claims: small, and constant.
func usage() map[string]any {
	return map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

// message is the non-streamed answer: the whole message at once.
func message(id, model string, rep Reply, ids []string) map[string]any {
	content := make([]any, len(rep))
	for i, b := range rep {
		content[i] = contentBlock(b, ids[i])
	}
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": rep.stopReason(), "stop_sequence": nil,
		"usage": usage(),
	}
}

// stream writes rep as the API streams it: message_start; for each block
// content_block_start, one delta (text_delta, or input_json_delta with
// the whole input) and content_block_stop; message_delta with the stop
// reason; message_stop.
func stream(w http.ResponseWriter, id, model string, rep Reply, ids []string) {
	event := newSSE(w).event // plain values, and inputs answer checked
	start := message(id, model, nil, nil)
	start["content"], start["stop_reason"] = []any{}, nil
	event("message_start", map[string]any{"message": start})
	for i, b := range rep {
		var first map[string]any
		var delta map[string]any
		if b.Tool == "" {
			first = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": b.Text}
		} else {
			first = map[string]any{"type": "tool_use", "id": ids[i], "name": b.Tool, "input": map[string]any{}}
			js, _ := json.Marshal(b.input()) // answer checked it encodes
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(js)}
		}
		event("content_block_start", map[string]any{"index": i, "content_block": first})
		event("content_block_delta", map[string]any{"index": i, "delta": delta})
		event("content_block_stop", map[string]any{"index": i})
	}
	event("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": rep.stopReason(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 5},
	})
	event("message_stop", map[string]any{})
}

// apiError answers code with the API's error shape.
func apiError(w http.ResponseWriter, code int, msg string) {
	writeJSONStatus(w, code, map[string]any{
		"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg},
	})
}
