package realclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// OpenAI is a scripted stand-in of the OpenAI Responses API, served on
// loopback for the real Codex (CodexEnv points a custom model provider at
// it). It answers POST /v1/responses, streamed (server-sent events), with
// the CodexReply its script gives for each main request; GET /v1/models
// with CodexModel, and anything else with 200 {} (logged: Codex 0.171
// makes no other request to a custom provider). It records every request.
//
// Its methods are safe for concurrent use.
type OpenAI struct {
	// URL is the base URL of the server, http://127.0.0.1:PORT; the API is
	// under URL+"/v1".
	URL string

	t      testing.TB
	srv    *httptest.Server
	script func(*ResponsesRequest) CodexReply

	scriptMu sync.Mutex // held while script runs: one call at a time

	rec    recorder[*ResponsesRequest]
	mu     sync.Mutex // guards what follows
	others []string   // "METHOD PATH" of the other requests
	ids    int        // item ids handed out so far
}

// CodexSideReplyText is the text OpenAI answers side requests with (see
// ResponsesRequest.IsMain).
const CodexSideReplyText = "OK"

// NewOpenAI starts an OpenAI on 127.0.0.1 and stops it when t ends. script
// is called, one request at a time, for each main request
// (ResponsesRequest.IsMain) and gives the model's reply; it must not block
// for long, as Codex waits for it. Side requests get CodexSideReplyText
// without calling script.
func NewOpenAI(t testing.TB, script func(r *ResponsesRequest) CodexReply) *OpenAI {
	t.Helper()
	o := &OpenAI{t: t, script: script}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("openai: listen on loopback: %v", err)
	}
	o.srv = httptest.NewUnstartedServer(o)
	_ = o.srv.Listener.Close()
	o.srv.Listener = ln
	o.srv.Start()
	o.URL = o.srv.URL
	t.Cleanup(o.srv.Close)
	return o
}

// ResponsesRequest is one POST /v1/responses request, decoded.
type ResponsesRequest struct {
	Seq          int             // its rank among the requests received, from 0
	Received     time.Time       // when it arrived
	Header       http.Header     // its HTTP headers (Session-Id, Thread-Id, Originator, X-Codex-Turn-Metadata...)
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"` // none from Codex 0.171: its system prompt is the input's first developer message
	Input        []ResponsesItem `json:"input"`        // the conversation
	Tools        []CodexTool     `json:"tools"`
	Stream       bool            `json:"stream"`
	CacheKey     string          `json:"prompt_cache_key"` // the Codex session (thread) id
	Raw          []byte          // the body as sent
	reply        CodexReply      // what was answered, for the record
}

// ResponsesItem is one item of a request's input: a message (Type
// "message": Role "user", "developer" or "assistant", Content), a function
// call the model made earlier ("function_call": Namespace, Name,
// Arguments, CallID), its output ("function_call_output": CallID, Output),
// or another type (reasoning...) kept by type only.
type ResponsesItem struct {
	Type      string             `json:"type"`
	Role      string             `json:"role,omitempty"`
	Content   []ResponsesContent `json:"content,omitempty"`
	Name      string             `json:"name,omitempty"`
	Arguments string             `json:"arguments,omitempty"`
	CallID    string             `json:"call_id,omitempty"`
	Output    ResponsesOutput    `json:"output"`
}

// ResponsesContent is one part of a message: input_text, output_text...
type ResponsesContent struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// ResponsesOutput is a function call's output. The API spells it as a string
// or as a list of content parts; Text is the text either way.
type ResponsesOutput struct {
	Text string
}

// UnmarshalJSON decodes a string, or a list of content parts.
func (c *ResponsesOutput) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		c.Text = s
		return nil
	}
	var parts []ResponsesContent
	if err := json.Unmarshal(data, &parts); err != nil {
		return fmt.Errorf("function call output: %w", err)
	}
	var sb strings.Builder
	for _, p := range parts {
		if p.Text != "" {
			sb.WriteString(p.Text)
			sb.WriteByte('\n')
		}
	}
	c.Text = sb.String()
	return nil
}

// CodexTool is one tool a request offers the model: a function (Type
// "function"), a namespace of functions ("namespace": Tools; Codex 0.171
// offers an MCP server's tools as the namespace "mcp__SERVER"), or another
// type (web_search...). Raw is the tool as sent.
type CodexTool struct {
	Type  string      `json:"type"`
	Name  string      `json:"name"`
	Tools []CodexTool `json:"tools"`
	Raw   json.RawMessage
}

// UnmarshalJSON keeps the tool as sent besides its type and name.
func (t *CodexTool) UnmarshalJSON(data []byte) error {
	var v struct {
		Type  string      `json:"type"`
		Name  string      `json:"name"`
		Tools []CodexTool `json:"tools"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("tool: %w", err)
	}
	t.Type, t.Name, t.Tools, t.Raw = v.Type, v.Name, v.Tools, append(json.RawMessage(nil), data...)
	return nil
}

// ToolNames are the names of the functions the request offers, a
// namespace's as NAMESPACE/NAME ("mcp__agentx/clarify_list"), and of its
// other tools by type when they have no name ("web_search").
func (r *ResponsesRequest) ToolNames() []string {
	var names []string
	for _, t := range r.Tools {
		switch {
		case t.Type == "namespace":
			for _, f := range t.Tools {
				names = append(names, t.Name+"/"+f.Name)
			}
		case t.Name != "":
			names = append(names, t.Name)
		default:
			names = append(names, t.Type)
		}
	}
	return names
}

// HasTool tells whether the request offers the function name, or
// NAMESPACE/NAME (see ToolNames).
func (r *ResponsesRequest) HasTool(name string) bool {
	for _, n := range r.ToolNames() {
		if n == name {
			return true
		}
	}
	return false
}

// text appends the text of item to sb.
func (it ResponsesItem) text(sb *strings.Builder) {
	for _, p := range it.Content {
		if p.Text != "" {
			sb.WriteString(p.Text)
			sb.WriteByte('\n')
		}
	}
	if it.Arguments != "" {
		sb.WriteString(it.Arguments)
		sb.WriteByte('\n')
	}
	if it.Output.Text != "" {
		sb.WriteString(it.Output.Text)
		sb.WriteByte('\n')
	}
}

// Text is all the text of the request's input, one part a line: Codex's
// system prompt and the hooks' additional context (developer messages),
// the environment and the prompts (user messages; a Stop hook's reason
// too), the model's earlier answers and calls' arguments, the calls'
// outputs (what an MCP tool returned).
func (r *ResponsesRequest) Text() string {
	var sb strings.Builder
	for _, it := range r.Input {
		it.text(&sb)
	}
	return sb.String()
}

// LastUserText is the text of the input's last user message.
func (r *ResponsesRequest) LastUserText() string {
	for i := len(r.Input) - 1; i >= 0; i-- {
		if it := r.Input[i]; it.Type == "message" && it.Role == "user" {
			var sb strings.Builder
			it.text(&sb)
			return sb.String()
		}
	}
	return ""
}

// UserTexts are the texts of the input's user messages, in order.
func (r *ResponsesRequest) UserTexts() []string {
	var out []string
	for _, it := range r.Input {
		if it.Type == "message" && it.Role == "user" {
			var sb strings.Builder
			it.text(&sb)
			out = append(out, sb.String())
		}
	}
	return out
}

// DeveloperTexts are the texts of the input's developer messages, one a
// part: Codex's system prompt and instructions, and each SessionStart or
// UserPromptSubmit hook's additionalContext, as the hook gave it.
func (r *ResponsesRequest) DeveloperTexts() []string {
	var out []string
	for _, it := range r.Input {
		if it.Type == "message" && it.Role == "developer" {
			for _, p := range it.Content {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// CallOutputs are the function_call_output items of the input, in order.
func (r *ResponsesRequest) CallOutputs() []ResponsesItem {
	var out []ResponsesItem
	for _, it := range r.Input {
		if it.Type == "function_call_output" {
			out = append(out, it)
		}
	}
	return out
}

// CallOutput is the output of the call callID, and whether the input
// holds it.
func (r *ResponsesRequest) CallOutput(callID string) (string, bool) {
	for _, it := range r.Input {
		if it.Type == "function_call_output" && it.CallID == callID {
			return it.Output.Text, true
		}
	}
	return "", false
}

// IsMain tells a main request (a turn of the conversation, which offers
// the model its tools) from a side request, which would come without
// tools (a title, a summary, a compaction). Codex 0.171 has made none in
// these tests: every request is a turn's.
func (r *ResponsesRequest) IsMain() bool { return len(r.Tools) > 0 }

// SessionID is the Codex session (thread) the request belongs to: its
// Session-Id header, else its prompt_cache_key (the same id). It is the
// hooks' session_id, codex exec --json's thread_id, and what codex exec
// resume and codex queue --thread take.
func (r *ResponsesRequest) SessionID() string {
	if id := r.Header.Get("Session-Id"); id != "" {
		return id
	}
	return r.CacheKey
}

// Reply is what the request was answered.
func (r *ResponsesRequest) Reply() CodexReply { return r.reply }

// CodexReply is the model's answer to one request: its output items, in
// order.
type CodexReply []CodexItem

// CodexItem is one output item of a CodexReply: a function call when Tool
// is set, else an assistant message with Text.
type CodexItem struct {
	Text      string         // the text of an assistant message
	Namespace string         // the namespace of the function called, "mcp__SERVER" for an MCP tool
	Tool      string         // the name of the function called (in Namespace)
	Arguments map[string]any // the call's arguments (nil is {})
	CallID    string         // the call's id; "" has OpenAI make one up
}

// CodexSay is an assistant message.
func CodexSay(text string) CodexItem { return CodexItem{Text: text} }

// CodexCall is a call of the function name with args (nil is {}).
func CodexCall(name string, args map[string]any) CodexItem {
	return CodexItem{Tool: name, Arguments: args}
}

// CodexMCPCall is a call of the tool of the MCP server with args (nil is
// {}). Codex 0.171 offers each MCP server's tools as one namespace tool,
// "mcp__SERVER", holding a function per tool, under the tool's own name.
func CodexMCPCall(server, tool string, args map[string]any) CodexItem {
	return CodexItem{Namespace: "mcp__" + server, Tool: tool, Arguments: args}
}

// Requests are the /v1/responses requests received so far, in order.
func (o *OpenAI) Requests() []*ResponsesRequest { return o.rec.all() }

// MainRequests are the main requests received so far, in order.
func (o *OpenAI) MainRequests() []*ResponsesRequest {
	var out []*ResponsesRequest
	for _, r := range o.Requests() {
		if r.IsMain() {
			out = append(out, r)
		}
	}
	return out
}

// Others are the other requests received so far, as "METHOD PATH".
func (o *OpenAI) Others() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.others...)
}

// WaitFor returns the first request, received so far or to come, that
// pred accepts; or ctx's error, with how many requests came, when ctx
// ends first.
func (o *OpenAI) WaitFor(ctx context.Context, pred func(*ResponsesRequest) bool) (*ResponsesRequest, error) {
	return o.rec.waitFor(ctx, "openai", pred)
}

// ServeHTTP answers Codex: POST /v1/responses; GET /v1/models with one
// model; anything else 200 with {}, logged.
func (o *OpenAI) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	switch {
	case hr.Method == http.MethodPost && hr.URL.Path == "/v1/responses":
		o.responses(w, hr)
		return
	case hr.Method == http.MethodGet && hr.URL.Path == "/v1/models":
		writeJSON(w, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": CodexModel, "object": "model", "created": 0, "owned_by": "agentx"},
		}})
	default:
		answerOther(o.t, "openai", w, hr)
	}
	o.mu.Lock()
	o.others = append(o.others, hr.Method+" "+hr.URL.Path)
	o.mu.Unlock()
}

// responses answers one POST /v1/responses.
func (o *OpenAI) responses(w http.ResponseWriter, hr *http.Request) {
	body, ok := readBody(w, hr, openAIError)
	if !ok {
		return
	}
	if enc := hr.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		o.t.Errorf("openai: a request is encoded %q (disable enable_request_compression)", enc)
		openAIError(w, http.StatusBadRequest, "encoded body")
		return
	}
	r := &ResponsesRequest{Received: time.Now(), Header: hr.Header.Clone(), Raw: body}
	if !decodeBody(o.t, "openai", w, body, r, openAIError) {
		return
	}
	var rep CodexReply
	if r.IsMain() {
		rep = o.answer(r)
	} else {
		rep = CodexReply{CodexSay(CodexSideReplyText)}
	}

	o.mu.Lock()
	rep = append(CodexReply(nil), rep...)
	for i := range rep {
		if rep[i].Tool != "" && rep[i].CallID == "" {
			o.ids++
			rep[i].CallID = fmt.Sprintf("call_%024d", o.ids)
		}
	}
	o.mu.Unlock()
	r.reply = rep
	o.rec.add(r, func(n int) { r.Seq = n })

	streamResponse(w, fmt.Sprintf("resp_%024d", r.Seq+1), r.Model, rep)
}

// answer calls the script, one request at a time, in arrival order.
func (o *OpenAI) answer(r *ResponsesRequest) CodexReply {
	o.scriptMu.Lock()
	defer o.scriptMu.Unlock()
	return o.script(r)
}

// outputItem is rep's item i as the API spells it, whole.
func outputItem(it CodexItem, id string) map[string]any {
	if it.Tool == "" {
		return map[string]any{
			"type": "message", "id": id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": it.Text, "annotations": []any{}}},
		}
	}
	args := it.Arguments
	if args == nil {
		args = map[string]any{}
	}
	js, _ := json.Marshal(args) // maps of plain values: cannot fail
	item := map[string]any{
		"type": "function_call", "id": id, "status": "completed",
		"name": it.Tool, "arguments": string(js), "call_id": it.CallID,
	}
	if it.Namespace != "" {
		item["namespace"] = it.Namespace
	}
	return item
}

// streamResponse writes rep as the API streams it: response.created; for
// each item response.output_item.added, the text's (or arguments') delta
// and response.output_item.done; response.completed with the usage.
func streamResponse(w http.ResponseWriter, id, model string, rep CodexReply) {
	s := newSSE(w)
	seq := 0
	event := func(name string, data map[string]any) {
		data["sequence_number"] = seq
		seq++
		s.event(name, data) // maps of plain values: cannot fail
	}
	response := func(status string, output []any) map[string]any {
		return map[string]any{
			"id": id, "object": "response", "created_at": time.Now().Unix(), "model": model,
			"status": status, "output": output,
		}
	}
	event("response.created", map[string]any{"response": response("in_progress", []any{})})
	var output []any
	for i, it := range rep {
		itemID := fmt.Sprintf("%s_item_%d", id, i)
		done := outputItem(it, itemID)
		added := outputItem(it, itemID)
		added["status"] = "in_progress"
		if it.Tool == "" {
			added["content"] = []any{}
		} else {
			added["arguments"] = ""
		}
		event("response.output_item.added", map[string]any{"output_index": i, "item": added})
		if it.Tool == "" {
			event("response.content_part.added", map[string]any{
				"output_index": i, "item_id": itemID, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}},
			})
			event("response.output_text.delta", map[string]any{
				"output_index": i, "item_id": itemID, "content_index": 0, "delta": it.Text,
			})
			event("response.output_text.done", map[string]any{
				"output_index": i, "item_id": itemID, "content_index": 0, "text": it.Text,
			})
			event("response.content_part.done", map[string]any{
				"output_index": i, "item_id": itemID, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": it.Text, "annotations": []any{}},
			})
		} else {
			event("response.function_call_arguments.delta", map[string]any{
				"output_index": i, "item_id": itemID, "delta": done["arguments"],
			})
			event("response.function_call_arguments.done", map[string]any{
				"output_index": i, "item_id": itemID, "arguments": done["arguments"],
			})
		}
		event("response.output_item.done", map[string]any{"output_index": i, "item": done})
		output = append(output, done)
	}
	completed := response("completed", output)
	completed["usage"] = map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": 15,
	}
	event("response.completed", map[string]any{"response": completed})
}

// openAIError answers code with the API's error shape.
func openAIError(w http.ResponseWriter, code int, msg string) {
	writeJSONStatus(w, code, map[string]any{
		"error": map[string]any{"type": "invalid_request_error", "message": msg, "code": nil, "param": nil},
	})
}
