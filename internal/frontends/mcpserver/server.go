package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// DefaultMaxWait is the longest a tool call waits for an answer unless
// configured otherwise: under the 60 s many MCP clients allow a call.
const DefaultMaxWait = 45 * time.Second

// ErrorMetaKey is the _meta key under which a tool error carries its
// details (ErrorInfo), for clients that read more than the text.
const ErrorMetaKey = "agentx/error"

// Instructions is what the server tells a connecting client about itself;
// clients may show it to the model.
const Instructions = `agentx records clarifying questions between coding agents (engineer -> architect -> product-manager) and humans, one ledger per issue.
Ask (clarify_ask, or ask_human for a person) only when a wrong guess would be costly to undo; otherwise proceed and record your assumption with clarify_assume.
Asking returns at once: end your turn or go on with work that does not depend on the answer. The answer reaches you in a later turn (the agentx inbox hook) or through clarify_wait.
Answer questions addressed to you with clarify_answer; close your own once settled with clarify_resolve.
When something keeps getting in your way (a missing skill, a broken tool, a workflow gap), propose an enhancement with proposal_create; only a person approves or rejects it.`

// Options configures a server.
type Options struct {
	// Agent is the caller's identity (AGENTX_AGENT): every call acts as
	// it, and a call's "from" naming anyone else is refused. Without one, a
	// call names its agent in "from". The server never acts as a person.
	Agent string
	// Issue is the default issue for ask_human (AGENTX_ISSUE); nil: 0, no issue.
	Issue *int
	// MaxWait caps every wait_seconds; 0 means DefaultMaxWait.
	MaxWait time.Duration
	// Classify maps an error to the CLI's exit code and code name, so that
	// a tool error is classed as the same failure is on the command line.
	// Nil: every error is 1, "failure". The hint the server words itself
	// (Hint), in its own terms.
	Classify func(error) (code int, name string)
	// Version is reported to clients.
	Version string
	// Logger receives the server's log (never stdout); nil discards it.
	Logger *slog.Logger
	// Side, when set, gives each tool call its work outside the hub (the
	// command line's side pass: the remote and GitHub read before it;
	// agent-status.json, the push and the wake after it): nil for none.
	Side func() Side
	// Session is when the client's session began: a client starts its MCP
	// servers with each session, so the server's start is a fair stand-in.
	// max_questions counts the agent's questions in the session (see
	// router.AskRequest.Session). Nil: per hook run, as the CLI counts.
	Session *time.Time
}

// Side is work a tool call does outside the hub, such as GitHub mode:
// Read before the call (new answers from elsewhere first), Push after it
// (what follows a change: mirror it, derive the status files, wake), and
// Wait in place of the hub's while the call waits for an answer. It reports its own failures (never on stdout):
// they never fail a call.
type Side interface {
	Read(ctx context.Context)
	Push(ctx context.Context)
	Wait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error)
}

type sideKey struct{}

// sideOf is the Side of the call whose context ctx is, or nil.
func sideOf(ctx context.Context) Side {
	s, _ := ctx.Value(sideKey{}).(Side)
	return s
}

// ErrorInfo is a tool error's details: the CLI's JSON error body.
type ErrorInfo struct {
	Code     string `json:"code"`
	ExitCode int    `json:"exit_code"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
	Rule     string `json:"rule,omitempty"` // for code rejected: scope, blocking, cap or party
}

type server struct {
	hub    *router.Hub
	opts   Options
	caller *router.Caller // who the calls act as
	log    *slog.Logger
	mcp    *mcp.Server
	life   context.Context // nil, or the server's lifetime: its end cancels calls in flight
	// stateKey signs the request states of forms (see seal): made for
	// each run, never written.
	stateKey []byte
}

// New returns an MCP server with the clarification tools over hub h, to be
// connected to a transport (Run serves one on stdio).
func New(h *router.Hub, opts Options) *mcp.Server {
	return newServer(h, opts, nil).mcp
}

// Run serves the tools over transport t until the client ends its input or
// ctx is done. The end of ctx (a signal) also cancels the calls in flight,
// so a call waiting for an answer returns at once instead of holding the
// shutdown for up to MaxWait. It returns ctx's error if ctx ended it.
//
// Responders run detached from the tool calls (see router.Hub.Detach): a
// clarify_ask returns as soon as the question is recorded, or after its
// wait, however slow the responder. When Run returns, responders still
// running are stopped (their process groups killed) and waited for; their
// questions stay pending in the ledger for the monitor's stale retry.
func Run(ctx context.Context, h *router.Hub, opts Options, t mcp.Transport) error {
	work, stop := context.WithCancel(context.WithoutCancel(ctx))
	var running sync.WaitGroup
	h.Detach = func(run func(ctx context.Context)) {
		running.Go(func() { run(work) })
	}
	err := newServer(h, opts, ctx).mcp.Run(ctx, t)
	stop()
	running.Wait()
	return err
}

func newServer(h *router.Hub, opts Options, life context.Context) *server {
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.Classify == nil {
		opts.Classify = defaultClassify
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &server{hub: h, opts: opts, log: log, life: life, stateKey: newStateKey(),
		caller: &router.Caller{Agent: opts.Agent, AgentsOnly: true, Via: "the MCP server"}}
	caps := capabilities()
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "agentx", Title: "agentx clarifications", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: Instructions,
		Logger:       log,
		Capabilities: caps,
	})
	s.mcp.AddReceivingMiddleware(declaredOnly(caps))
	s.mcp.AddSendingMiddleware(keepFormResponse)
	s.addTools()
	return s
}

// capabilities is what the server declares: tools, whose list never
// changes. No logging (the server logs to stderr, never to the client),
// no resources, no prompts, no completions.
func capabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
}

// gatedMethod names the capability a request belongs to, as the
// initialize result names it, for the requests that belong to one (a
// switch: nothing is built while the package initialises). The SDK answers them
// whatever the server declares (an empty list, a level set for nothing);
// the protocol has a server that does not declare a capability answer
// them as methods it does not have.
func gatedMethod(method string) (capability string, ok bool) {
	switch method {
	case "logging/setLevel":
		return "logging", true
	case "prompts/list", "prompts/get":
		return "prompts", true
	case "resources/list", "resources/templates/list", "resources/read":
		return "resources", true
	case "resources/subscribe", "resources/unsubscribe":
		return "resources.subscribe", true
	case "completion/complete":
		return "completions", true
	}
	return "", false
}

// declaredOnly answers a request that belongs to a capability caps does
// not declare with "method not found" (-32601), as for any method the
// server does not have (the SDK writes the message, naming the method).
func declaredOnly(caps *mcp.ServerCapabilities) mcp.Middleware {
	declared := declaredNames(caps)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if name, ok := gatedMethod(method); ok && !declared[name] {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
			}
			return next(ctx, method, req)
		}
	}
}

// declaredNames are the capabilities caps declares, named as in the
// initialize result that carries them ("resources.subscribe" for
// resources with subscriptions).
func declaredNames(caps *mcp.ServerCapabilities) map[string]bool {
	b, err := json.Marshal(caps)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: capabilities: %v", err)) // plain structs
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(fmt.Sprintf("mcpserver: capabilities: %v", err))
	}
	names := map[string]bool{}
	for name, v := range m {
		names[name] = true
		var sub struct {
			Subscribe bool `json:"subscribe"`
		}
		if json.Unmarshal(v, &sub) == nil && sub.Subscribe {
			names[name+".subscribe"] = true
		}
	}
	return names
}

// bound returns a call's context, also cancelled when the server's
// lifetime ends: the SDK keeps a call's context alive through a shutdown.
func (s *server) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.life == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.life, func() { cancel(context.Cause(s.life)) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

func defaultClassify(error) (int, string) { return 1, "failure" }

// typeSchemas are the JSON schemas of types whose JSON is not what their Go
// shape says; made when the server builds its tools, not at every start of
// agentx.
func typeSchemas() map[reflect.Type]*jsonschema.Schema {
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[ledger.Time]():   {Type: "string", Description: "RFC 3339 time, UTC"},
		reflect.TypeFor[ledger.Status](): {Type: "string", Enum: enum(ledger.Statuses)},
		reflect.TypeFor[Outcome](): {Type: "string", Enum: enum([]Outcome{
			OutcomeAnswered, OutcomePending, OutcomeTimedOut, OutcomeEscalated, OutcomeResolved, OutcomeAbandoned,
		})},
		reflect.TypeFor[proposal.Status](): {Type: "string", Enum: enum(proposal.Statuses)},
		reflect.TypeFor[ProposalType]():    {Type: "string", Enum: enum(proposal.Types)},
		reflect.TypeFor[Level]():           {Type: "string", Enum: enum(proposal.Levels)},
	}
}

// enum is a closed set of values, for a schema.
func enum[S ~string](vals []S) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}

func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas()})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema for %T: %v", *new(T), err))
	}
	return s
}

// inputSchema is the input schema of a tool whose input is In, plain (see
// plainInput), and resolved for validation.
func inputSchema[In any]() (*jsonschema.Schema, *jsonschema.Resolved) {
	in := plainInput(schemaFor[In]())
	resolved, err := in.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema for %T: %v", *new(In), err))
	}
	return in, resolved
}

// handler is a tool's body: it returns the structured result and its text
// rendering, or an error.
type handler[In, Out any] func(ctx context.Context, in In) (Out, string, error)

// addTool registers a tool whose schemas come from In and Out. It does what
// mcp.AddTool does (validate the arguments against the input schema, decode
// them, fill in the structured result) except on failure: an error result
// carries its text and ErrorInfo, never a zero output passed off as
// structured content, which would not even match the output schema.
func addTool[In, Out any](s *server, t *mcp.Tool, h handler[In, Out]) {
	in, resolved := inputSchema[In]()
	t.InputSchema = in
	t.OutputSchema = schemaFor[Out]()
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := decodeArgs[In](req.Params.Arguments, in, resolved)
		if err != nil {
			return s.toolError(t.Name, err), nil
		}
		ctx, done := s.bound(ctx)
		defer done()
		if s.opts.Side != nil {
			if side := s.opts.Side(); side != nil {
				side.Read(ctx)
				defer func(ctx context.Context) {
					if ctx.Err() == nil { // not at a shutdown: the next call mirrors it
						side.Push(ctx)
					}
				}(ctx)
				ctx = context.WithValue(ctx, sideKey{}, side)
			}
		}
		if fc := s.formCallOf(req); fc != nil {
			ctx = context.WithValue(ctx, formCallKey{}, fc)
		}
		out, text, err := h(router.WithCaller(ctx, s.caller), args)
		var input *inputRequired
		if errors.As(err, &input) {
			return input.result(), nil
		}
		if err != nil {
			return s.toolError(t.Name, err), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: out}, nil
	})
}

// decodeArgs checks raw arguments against the input schema (see
// normalizeArgs), validates them and decodes them. A mismatch is an
// *ledger.InputError: a usage error, as a bad flag is on the command line.
func decodeArgs[In any](raw json.RawMessage, s *jsonschema.Schema, resolved *jsonschema.Resolved) (In, error) {
	var in In
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return in, &ledger.InputError{Field: "arguments", Value: string(raw), Msg: "are not a JSON object: " + err.Error()}
	}
	if err := normalizeArgs(m, s); err != nil {
		return in, err
	}
	if err := resolved.Validate(m); err != nil {
		return in, &ledger.InputError{Field: "arguments", Value: string(raw), Msg: "do not match the tool's input schema: " + err.Error()}
	}
	b, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(b, &in)
	}
	if err != nil {
		return in, &ledger.InputError{Field: "arguments", Value: string(raw), Msg: "cannot be decoded: " + err.Error()}
	}
	return in, nil
}

// toolError is the result of a failed call: the same code name and exit
// code the CLI gives, and the hint in the server's terms (Hint), as text
// for the model and ErrorInfo in _meta.
func (s *server) toolError(tool string, err error) *mcp.CallToolResult {
	code, name := s.opts.Classify(err)
	hint := Hint(err)
	info := ErrorInfo{Code: name, ExitCode: code, Message: err.Error(), Hint: hint}
	var re *router.RuleError
	if errors.As(err, &re) {
		info.Rule = string(re.Kind)
	}
	text := renderError(name, code, err, hint)
	s.log.Info("tool error", "tool", tool, "code", name, "error", err)
	return &mcp.CallToolResult{
		Meta:    mcp.Meta{ErrorMetaKey: info},
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
		IsError: true,
	}
}

// from is who acts: the server's agent; without one, the call's from (""
// leaves the default to the hub). A from naming anyone else, or human, is
// refused.
func (s *server) from(given string) (string, error) {
	return s.caller.Claim("from", given)
}

// asker is who asks: like from, but someone must be named.
func (s *server) asker(given string) (string, error) {
	who, err := s.from(given)
	if err != nil {
		return "", err
	}
	if who == "" {
		return "", &ledger.InputError{Field: "from", Value: "", Msg: "is empty: set AGENTX_AGENT in the MCP server's environment, or pass from"}
	}
	return who, nil
}

// wait turns wait_seconds into a duration within [0, MaxWait]; def applies
// when it is absent.
func (s *server) wait(seconds *float64, def time.Duration) time.Duration {
	if seconds == nil {
		return min(def, s.opts.MaxWait)
	}
	v := *seconds
	if math.IsNaN(v) || v <= 0 {
		return 0
	}
	if v >= s.opts.MaxWait.Seconds() {
		return s.opts.MaxWait
	}
	return time.Duration(v * float64(time.Second))
}
