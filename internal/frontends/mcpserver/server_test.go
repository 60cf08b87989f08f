package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

// testClassify mirrors the CLI's table for the errors these tests provoke
// (the CLI's own classifier is injected by cmd/agentx and tested there).
func testClassify(err error) (int, string) {
	var (
		input *ledger.InputError
		who   *router.IdentityError
		rule  *router.RuleError
		tr    *ledger.TransitionError
		opt   *router.OptionError
	)
	switch {
	case errors.As(err, &input), errors.As(err, &opt):
		return 2, "usage"
	case errors.As(err, &who):
		return 4, "identity_mismatch"
	case errors.As(err, &rule):
		return 4, "rejected"
	case errors.As(err, &tr):
		return 6, "invalid_transition"
	case errors.Is(err, ledger.ErrNotFound):
		return 3, "not_found"
	}
	return 1, "failure"
}

// newHub builds a hub over a fresh workspace with the default workflows.
func newHub(t *testing.T) *router.Hub {
	t.Helper()
	dir, rules := testenv.Workspace(t, "")
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, nil)
	h := router.New(store, rules, dir)
	h.Warn = func(err error) { t.Errorf("unexpected warning: %v", err) }
	return h
}

// connect serves New(h, opts) over an in-memory transport and returns a
// client session to it.
func connect(t *testing.T, h *router.Hub, opts Options) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := New(h, opts).Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

type call struct {
	res *mcp.CallToolResult
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) call {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, "%s: protocol error", name)
	return call{res}
}

func (c call) text() string {
	var b strings.Builder
	for _, ct := range c.res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// into decodes the structured result, failing on an error result.
func into[T any](t *testing.T, c call) T {
	t.Helper()
	require.False(t, c.res.IsError, "unexpected tool error: %s", c.text())
	require.NotNil(t, c.res.StructuredContent, "no structured content")
	b, err := json.Marshal(c.res.StructuredContent)
	require.NoError(t, err)
	var v T
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&v), "structured content: %s", b)
	// and it matches the tool's output schema, as strict clients check
	resolved, err := schemaFor[T]().Resolve(nil)
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(b, &doc))
	require.NoError(t, resolved.Validate(doc), "structured content does not match the output schema: %s", b)
	return v
}

// errInfo returns a tool error's details from _meta.
func errInfo(t *testing.T, c call) ErrorInfo {
	t.Helper()
	require.True(t, c.res.IsError, "want a tool error, got: %s", c.text())
	assert.Nil(t, c.res.StructuredContent, "an error carries no structured output")
	b, err := json.Marshal(c.res.Meta[ErrorMetaKey])
	require.NoError(t, err)
	var info ErrorInfo
	require.NoError(t, json.Unmarshal(b, &info), "meta: %s", b)
	return info
}

var allTools = []string{
	"ask_human", "clarify_answer", "clarify_ask", "clarify_assume", "clarify_followup",
	"clarify_list", "clarify_resolve", "clarify_show", "clarify_wait",
	"proposal_create", "proposal_list", "proposal_show",
}

// TestDeclaredNames: the capabilities a request may need are read from
// what the initialize result says, so that what is answered and what is
// declared stay one.
func TestDeclaredNames(t *testing.T) {
	for _, tt := range []struct {
		caps string
		want []string
	}{
		{`{"tools":{}}`, []string{"tools"}},
		{`{"tools":{"listChanged":true},"logging":{},"prompts":{}}`, []string{"logging", "prompts", "tools"}},
		{`{"resources":{}}`, []string{"resources"}},
		{`{"resources":{"subscribe":true},"completions":{}}`, []string{"completions", "resources", "resources.subscribe"}},
	} {
		var caps mcp.ServerCapabilities
		require.NoError(t, json.Unmarshal([]byte(tt.caps), &caps))
		assert.Equal(t, tt.want, slices.Sorted(maps.Keys(declaredNames(&caps))), tt.caps)
	}
	assert.Equal(t, map[string]bool{"tools": true}, declaredNames(capabilities()))
}

func TestListTools(t *testing.T) {
	cs := connect(t, newHub(t), Options{Agent: "engineer", Classify: testClassify})
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		assert.NotEmpty(t, tool.Description, tool.Name)
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		assert.Contains(t, string(in), `"type":"object"`, tool.Name)
		assert.Contains(t, string(out), `"type":"object"`, tool.Name)
	}
	slices.Sort(names)
	assert.Equal(t, allTools, names)

	// the schemas say what is required and what is optional
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	required := func(name string) []string {
		b, _ := json.Marshal(byName[name].InputSchema)
		var s struct{ Required []string }
		require.NoError(t, json.Unmarshal(b, &s))
		slices.Sort(s.Required)
		return s.Required
	}
	assert.Equal(t, []string{"issue", "question", "to", "topic"}, required("clarify_ask"))
	assert.Equal(t, []string{"question"}, required("ask_human"))
	assert.Equal(t, []string{"id"}, required("clarify_wait"))
	assert.Equal(t, []string{"id"}, required("clarify_answer"), "body, or option")
	assert.Equal(t, []string{"id"}, required("clarify_assume"), "assumption, or reuse")
	assert.Empty(t, required("clarify_list"))
	assert.Equal(t, []string{"action", "rationale", "title", "type"}, required("proposal_create"))
	assert.Equal(t, []string{"id"}, required("proposal_show"))
	assert.Empty(t, required("proposal_list"))
}

// TestEveryTool walks one question through every tool, as an engineer's
// client would, with the architect answering through the same server.
func TestEveryTool(t *testing.T) {
	h := newHub(t)
	cs := connect(t, h, Options{Agent: "engineer", Classify: testClassify, MaxWait: 5 * time.Second})

	// ask-and-suspend: returns at once, pending, with guidance
	ask := into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{
		"issue": 42, "to": "architect", "topic": "Cache", "question": "TTL per key or global?",
	}))
	assert.Equal(t, AskResult{
		ID: "CLR-42-001", Issue: 42, Outcome: OutcomePending, Status: ledger.Pending, Round: 1, To: "architect",
		Guidance: ask.Guidance,
	}, ask)
	assert.Contains(t, ask.Guidance, "end your turn")
	assert.Contains(t, ask.Guidance, `clarify_wait {"id":"CLR-42-001"}`)

	// the text rendering names the id, the state and the next step
	got := callTool(t, cs, "clarify_wait", map[string]any{"id": "CLR-42-001", "wait_seconds": 0})
	assert.Equal(t, OutcomePending, into[AskResult](t, got).Outcome)
	assert.Contains(t, got.text(), "CLR-42-001 (issue #42, round 1): pending: waiting for architect.")

	// a wait that runs out: timed_out, with the guidance to assume
	start := time.Now()
	to := into[AskResult](t, callTool(t, cs, "clarify_wait", map[string]any{"id": "CLR-42-001", "wait_seconds": 0.2}))
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Equal(t, OutcomeTimedOut, to.Outcome)
	assert.Contains(t, to.Guidance, "proceed on your best judgment and record your assumption with clarify_assume")

	as := into[RecordResult](t, callTool(t, cs, "clarify_assume", map[string]any{"id": "CLR-42-001", "assumption": "Global, 5 minutes."}))
	assert.Equal(t, ledger.Pending, as.Status)
	assert.Contains(t, as.Guidance, "late")

	// the architect answers, through its own server
	arch := connect(t, h, Options{Agent: "architect"})
	ans := into[RecordResult](t, callTool(t, arch, "clarify_answer", map[string]any{"id": "CLR-42-001", "body": "Per key."}))
	assert.Equal(t, RecordResult{ID: "CLR-42-001", Issue: 42, Status: ledger.Answered, Round: 1, From: "engineer", To: "architect", Topic: "Cache", Guidance: ans.Guidance}, ans)

	w := callTool(t, cs, "clarify_wait", map[string]any{"id": "CLR-42-001"})
	wr := into[AskResult](t, w)
	assert.Equal(t, OutcomeAnswered, wr.Outcome)
	assert.Equal(t, "Per key.", wr.Answer)
	assert.Equal(t, "architect", wr.AnsweredBy)
	assert.Contains(t, w.text(), "answered by architect:\n  Per key.")

	fu := into[AskResult](t, callTool(t, cs, "clarify_followup", map[string]any{"id": "CLR-42-001", "body": "Which keys expire first?"}))
	assert.Equal(t, OutcomePending, fu.Outcome)
	assert.Equal(t, 2, fu.Round)

	// an answer that arrives while clarify_ask's own wait runs
	go func() {
		time.Sleep(100 * time.Millisecond)
		if _, err := h.Answer(context.Background(), "CLR-42-001", "architect", "Oldest first."); err != nil {
			t.Errorf("answer: %v", err)
		}
	}()
	w2 := into[AskResult](t, callTool(t, cs, "clarify_wait", map[string]any{"id": "CLR-42-001", "wait_seconds": 10}))
	assert.Equal(t, OutcomeAnswered, w2.Outcome)
	assert.Equal(t, "Oldest first.", w2.Answer)

	res := into[RecordResult](t, callTool(t, cs, "clarify_resolve", map[string]any{"id": "CLR-42-001"}))
	assert.Equal(t, ledger.Resolved, res.Status)

	show := callTool(t, cs, "clarify_show", map[string]any{"id": "CLR-42-001"})
	rec := into[ShowResult](t, show).Clarification
	assert.Equal(t, 42, rec.IssueNumber)
	assert.Equal(t, ledger.Resolved, rec.Status)
	assert.Len(t, rec.Thread, 5) // Q, A, Q, A, resolution
	require.NotNil(t, rec.X)
	require.Len(t, rec.X.Assumptions, 1)
	assert.Equal(t, "Global, 5 minutes.", rec.X.Assumptions[0].Body)
	assert.Contains(t, show.text(), "ASSUMED")

	// ask_human stores and shows the options; the topic comes from the question
	hu := callTool(t, cs, "ask_human", map[string]any{"question": "Ship behind a flag?\nIt touches billing.", "issue": 42, "options": []string{"yes, default off", "no"}})
	hr := into[AskResult](t, hu)
	assert.Equal(t, "CLR-42-002", hr.ID)
	assert.Equal(t, "human", hr.To)
	assert.Equal(t, []string{"yes, default off", "no"}, hr.Options)
	assert.Contains(t, hu.text(), "Options offered: yes, default off | no")
	c, err := h.Store.Get("CLR-42-002")
	require.NoError(t, err)
	assert.Equal(t, "Ship behind a flag?", c.Topic)
	assert.Equal(t, []string{"yes, default off", "no"}, c.X.Options)

	tests := []struct {
		name string
		args map[string]any
		ids  []string
	}{
		{"open ones by default", map[string]any{}, []string{"CLR-42-002"}},
		{"all", map[string]any{"all": true}, []string{"CLR-42-001", "CLR-42-002"}},
		{"by status", map[string]any{"status": "resolved"}, []string{"CLR-42-001"}},
		{"by agent", map[string]any{"agent": "architect", "all": true}, []string{"CLR-42-001"}},
		{"by issue", map[string]any{"issue": 7, "all": true}, nil},
	}
	for _, tt := range tests {
		t.Run("clarify_list "+tt.name, func(t *testing.T) {
			l := into[ListResult](t, callTool(t, cs, "clarify_list", tt.args))
			var ids []string
			for _, c := range l.Clarifications {
				ids = append(ids, c.ID)
			}
			assert.Equal(t, tt.ids, ids)
		})
	}
}

func TestAskWaitsForAResponderAnswer(t *testing.T) {
	h := newHub(t)
	cs := connect(t, h, Options{Agent: "engineer", Classify: testClassify})
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		// answer as soon as the question lands
		for i := 0; i < 200; i++ {
			if _, err := h.Answer(context.Background(), "CLR-1-001", "architect", "Yes."); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("the question never landed")
	}()
	r := into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{
		"issue": 1, "to": "architect", "topic": "t", "question": "q?", "wait_seconds": 10,
	}))
	assert.Equal(t, OutcomeAnswered, r.Outcome)
	assert.Equal(t, "Yes.", r.Answer)
	<-answered // its event is in the log too
	// the answer reached the asker here: its inbox does not deliver it again
	res, err := inbox.Check(context.Background(), h.Store, inbox.Options{Agent: "engineer"})
	require.NoError(t, err)
	assert.Empty(t, res.Items)
}

func TestWaitIsClamped(t *testing.T) {
	h := newHub(t)
	cs := connect(t, h, Options{Agent: "engineer", Classify: testClassify, MaxWait: 300 * time.Millisecond})
	into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{"issue": 1, "to": "architect", "topic": "t", "question": "q?", "blocking": false}))
	start := time.Now()
	r := into[AskResult](t, callTool(t, cs, "clarify_wait", map[string]any{"id": "CLR-1-001", "wait_seconds": 3600}))
	assert.Equal(t, OutcomeTimedOut, r.Outcome)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, r.Guidance, "No answer within 0s") // 300ms rounds to 0s
}

func TestToolErrors(t *testing.T) {
	h := newHub(t)
	cs := connect(t, h, Options{Agent: "engineer", Classify: testClassify})
	into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{"issue": 42, "to": "architect", "topic": "t", "question": "q?"}))
	into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{"issue": 42, "to": "architect", "topic": "t2", "question": "q2?"}))
	_, err := h.Answer(context.Background(), "CLR-42-002", "architect", "a")
	require.NoError(t, err)
	_, err = h.Resolve(context.Background(), "CLR-42-002", "engineer", "")
	require.NoError(t, err)

	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		code     string
		exit     int
		rule     string
		msg      string
		hint     string
		noWrites bool
	}{
		{"scope violation", "clarify_ask", map[string]any{"issue": 42, "to": "reviewer", "topic": "t", "question": "q"},
			"rejected", 4, "scope", `engineer may not ask reviewer in step "implement"`, "ask one of the allowed agents", true},
		{"scope violation, from given", "clarify_ask", map[string]any{"issue": 42, "to": "reviewer", "topic": "t", "question": "q", "from": "engineer"},
			"rejected", 4, "scope", "engineer may not ask reviewer", "", true},
		{"unknown id", "clarify_show", map[string]any{"id": "CLR-42-099"}, "not_found", 3, "", "CLR-42-099: not found", "", false},
		{"unknown id to wait on", "clarify_wait", map[string]any{"id": "CLR-42-099", "wait_seconds": 1}, "not_found", 3, "", "not found", "", false},
		{"malformed id", "clarify_answer", map[string]any{"id": "42", "body": "x"}, "usage", 2, "", "is not a clarification id", "", false},
		{"invalid transition", "clarify_answer", map[string]any{"id": "CLR-42-002", "body": "again", "as": "architect"},
			"invalid_transition", 6, "", "CLR-42-002 is resolved, which is final", "", false},
		{"follow-up on a pending question", "clarify_followup", map[string]any{"id": "CLR-42-001", "body": "more?"},
			"invalid_transition", 6, "", "CLR-42-001 is pending: it cannot become pending", "", false},
		{"not a party", "clarify_answer", map[string]any{"id": "CLR-42-001", "body": "mine"},
			"rejected", 4, "party", "engineer may not answer CLR-42-001: only architect or human may", "it is for architect to do, in its own session; a person does it", false},
		{"assume someone else's question", "clarify_assume", map[string]any{"id": "CLR-42-001", "assumption": "x", "from": "architect"},
			"identity_mismatch", 4, "", `from "architect": this process is agent engineer`, "You act as engineer", false},
		{"ask a mistyped agent: the known ones and the one meant", "clarify_ask", map[string]any{"issue": 42, "to": "architekt", "topic": "t", "question": "q"},
			"usage", 2, "", `to "architekt" is not an agent of this workspace (its agents: architect, `, "did you mean architect?", true},
		{"ask oneself: named by the tool's argument, not a flag", "clarify_ask", map[string]any{"issue": 42, "to": "engineer", "topic": "t", "question": "q"},
			"usage", 2, "", `to "engineer" is the asker`, "", true},
		{"empty answer", "clarify_answer", map[string]any{"id": "CLR-42-001", "body": " ", "as": "architect"}, "usage", 2, "", `answer " " is empty`, "", false},
		{"bad status", "clarify_list", map[string]any{"status": "done"}, "usage", 2, "", `argument "status" is the string "done", want one of "pending", "answered"`, "", false},
		{"unknown argument", "clarify_show", map[string]any{"id": "CLR-42-001", "verbose": true}, "usage", 2, "", `argument "verbose" is not an argument of this tool; it takes id`, "", false},
		{"missing argument", "clarify_ask", map[string]any{"issue": 42, "to": "architect", "topic": "t"}, "usage", 2, "", `argument "question" is missing: it is required, want a string`, "", true},
		{"wrong type", "clarify_ask", map[string]any{"issue": "forty-two", "to": "architect", "topic": "t", "question": "q"}, "usage", 2, "", `argument "issue" is the string "forty-two", want an integer`, "", true},
		{"null for a required argument", "clarify_ask", map[string]any{"issue": 42, "to": "architect", "topic": nil, "question": "q"}, "usage", 2, "", `argument "topic" is null: it is required, want a string`, "", true},
		{"not an integer", "ask_human", map[string]any{"question": "q", "issue": 1.5}, "usage", 2, "", `argument "issue" is the number 1.5, want an integer`, "", true},
		{"an option not a string", "ask_human", map[string]any{"question": "q", "options": []any{"a", nil}}, "usage", 2, "", `argument "options[1]" is null, want a string`, "", true},
		{"bad ref: named by the tool's argument", "clarify_ask", map[string]any{"issue": 42, "to": "architect", "topic": "t", "question": "q", "refs": []any{"docs/a.md:9-3"}},
			"usage", 2, "", `refs "docs/a.md:9-3" has lines "9-3"`, "PATH:LINES", true},
		{"bad ref to a person", "ask_human", map[string]any{"question": "q", "refs": []any{"docs/a.md:"}}, "usage", 2, "", `refs "docs/a.md:" ends with ':'`, "", true},
		{"bad proposal type", "proposal_create", map[string]any{"type": "skill", "title": "t", "rationale": "r", "action": "a"}, "usage", 2, "", `argument "type" is the string "skill", want one of "new_skill", "tool_fix", "config_change", "workflow_improvement"`, "", true},
	}
	// "as" picks the server: one launched as that agent
	architect := connect(t, h, Options{Agent: "architect", Classify: testClassify})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := h.Store.Read(42)
			require.NoError(t, err)
			server, args := cs, tt.args
			if as, ok := args["as"]; ok {
				require.Equal(t, "architect", as)
				server, args = architect, maps.Clone(args)
				delete(args, "as")
			}
			c := callTool(t, server, tt.tool, args)
			info := errInfo(t, c)
			assert.Equal(t, tt.code, info.Code)
			assert.Equal(t, tt.exit, info.ExitCode)
			assert.Equal(t, tt.rule, info.Rule)
			assert.Contains(t, info.Message, tt.msg)
			assert.NotContains(t, info.Message, "--", "a tool's error names fields, never the command line's flags")
			assert.Contains(t, info.Hint, tt.hint)
			assert.True(t, strings.HasPrefix(c.text(), "error "+tt.code+" ("), c.text())
			if info.Hint != "" {
				assert.Contains(t, c.text(), "\nhint: "+info.Hint)
			}
			if tt.noWrites {
				after, err := h.Store.Read(42)
				require.NoError(t, err)
				assert.Len(t, after.Clarifications, len(before.Clarifications))
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	tests := []struct {
		name  string
		agent string
		args  map[string]any
		code  string
	}{
		{"from the server's environment", "engineer", map[string]any{}, ""},
		{"from repeats the server's agent", "engineer", map[string]any{"from": "engineer"}, ""},
		{"from names another agent", "engineer", map[string]any{"from": "reviewer"}, "identity_mismatch"},
		{"from names human", "engineer", map[string]any{"from": "human"}, "identity_mismatch"},
		{"from names the hub", "engineer", map[string]any{"from": "agentx"}, "identity_mismatch"},
		{"launched as human", "human", map[string]any{}, "identity_mismatch"},
		{"no identity: from names the agent", "", map[string]any{"from": "engineer"}, ""},
		{"no identity: from names human", "", map[string]any{"from": "human"}, "identity_mismatch"},
		{"no identity at all", "", map[string]any{}, "usage"},
		{"not an agent name", "", map[string]any{"from": "Engineer"}, "usage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHub(t)
			cs := connect(t, h, Options{Agent: tt.agent, Classify: testClassify})
			args := map[string]any{"issue": 5, "to": "architect", "topic": "t", "question": "q"}
			for k, v := range tt.args {
				args[k] = v
			}
			c := callTool(t, cs, "clarify_ask", args)
			if tt.code != "" {
				info := errInfo(t, c)
				assert.Equal(t, tt.code, info.Code)
				assert.Equal(t, 4-2*boolInt(tt.code == "usage"), info.ExitCode)
				l, err := h.Store.Read(5)
				require.NoError(t, err)
				assert.Empty(t, l.Clarifications, "nothing recorded")
				return
			}
			r := into[AskResult](t, c)
			assert.Equal(t, "CLR-5-001", r.ID)
			rec, err := h.Get(r.ID)
			require.NoError(t, err)
			assert.Equal(t, "engineer", rec.From)
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestNeverActsAsAnother: an agent cannot close its own escalation as
// human, nor answer for the one it asked, whatever "from" says; the server
// never acts as a person even when launched without an agent; and no
// refusal suggests acting as someone else.
func TestNeverActsAsAnother(t *testing.T) {
	tests := []struct {
		name   string
		agent  string // the server's AGENTX_AGENT
		tool   string
		args   map[string]any
		code   string
		kind   router.IdentityKind // "" for a party rule
		hint   string
		target string // which clarification it acts on: "escalated" or "human"
	}{
		{"resolve an escalation as human", "engineer", "clarify_resolve", map[string]any{"from": "human", "body": "decision: mine"},
			"identity_mismatch", router.IdentityAgentAsPerson, "Only a person acts as human", "escalated"},
		{"resolve an escalation as the architect", "engineer", "clarify_resolve", map[string]any{"from": "architect", "body": "decision: mine"},
			"identity_mismatch", router.IdentityOtherAgent, "You act as engineer", "escalated"},
		{"resolve an escalation as itself", "engineer", "clarify_resolve", map[string]any{"body": "decision: mine"},
			"rejected", "", "a person does it in a session of their own", "escalated"},
		{"answer for the architect", "engineer", "clarify_answer", map[string]any{"from": "architect", "body": "yes"},
			"identity_mismatch", router.IdentityOtherAgent, "You act as engineer", "escalated"},
		{"no agent: resolve as human", "", "clarify_resolve", map[string]any{"from": "human", "body": "decision: mine"},
			"identity_mismatch", router.IdentityAgentsOnly, "Only a person acts as human", "escalated"},
		{"no agent: answer a question to human", "", "clarify_answer", map[string]any{"body": "yes"},
			"identity_mismatch", router.IdentityAgentsOnly, "Only a person acts as human", "human"},
		{"no agent: answer as human", "", "clarify_answer", map[string]any{"from": "human", "body": "yes"},
			"identity_mismatch", router.IdentityAgentsOnly, "Only a person acts as human", "human"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHub(t)
			ctx := context.Background()
			_, err := h.Ask(ctx, router.AskRequest{Issue: 63, From: "engineer", To: "architect", Topic: "Cache", Question: "Redis?"})
			require.NoError(t, err)
			_, err = h.Escalate(ctx, "CLR-63-001", "by hand")
			require.NoError(t, err)
			_, err = h.Ask(ctx, router.AskRequest{Issue: 63, From: "engineer", To: "human", Topic: "Flag", Question: "On?"})
			require.NoError(t, err)
			id := map[string]string{"escalated": "CLR-63-001", "human": "CLR-63-002"}[tt.target]
			before, err := h.Store.Read(63)
			require.NoError(t, err)

			cs := connect(t, h, Options{Agent: tt.agent, Classify: testClassify})
			args := map[string]any{"id": id}
			for k, v := range tt.args {
				args[k] = v
			}
			c := callTool(t, cs, tt.tool, args)
			info := errInfo(t, c)
			assert.Equal(t, tt.code, info.Code)
			assert.Equal(t, 4, info.ExitCode)
			if tt.kind != "" {
				assert.Contains(t, info.Message, `from "`)
				assert.Empty(t, info.Rule)
			} else {
				assert.Equal(t, "party", info.Rule)
			}
			assert.Contains(t, info.Hint, tt.hint)
			for _, s := range []string{"pass from", "from: human", `"from":"human"`, "--from", "AGENTX_AGENT="} {
				assert.NotContains(t, c.text(), s, "the refusal suggests no impersonation")
			}
			after, err := h.Store.Read(63)
			require.NoError(t, err)
			assert.Equal(t, before, after, "nothing changed")
		})
	}
}

func TestDefaultClassify(t *testing.T) {
	cs := connect(t, newHub(t), Options{Agent: "engineer"})
	info := errInfo(t, callTool(t, cs, "clarify_show", map[string]any{"id": "CLR-1-001"}))
	assert.Equal(t, ErrorInfo{Code: "failure", ExitCode: 1, Message: "clarification CLR-1-001: not found"}, info)
}

func TestTopicOf(t *testing.T) {
	tests := []struct{ q, want string }{
		{"Ship it?", "Ship it?"},
		{"  First line\nsecond", "First line"},
		{strings.Repeat("é", 100), strings.Repeat("é", 79) + "…"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, topicOf(tt.q))
	}
}

func TestWaitDuration(t *testing.T) {
	s := &server{opts: Options{MaxWait: 45 * time.Second}}
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		in   *float64
		def  time.Duration
		want time.Duration
	}{
		{nil, 0, 0},
		{nil, time.Hour, 45 * time.Second},
		{f(-1), 0, 0},
		{f(0.5), 0, 500 * time.Millisecond},
		{f(45), 0, 45 * time.Second},
		{f(1e12), 0, 45 * time.Second},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, s.wait(tt.in, tt.def))
	}
}

// recordSide records what a tool call asked of its Side.
type recordSide struct {
	mu  *sync.Mutex
	log *[]string
}

func (s recordSide) add(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.log = append(*s.log, what)
}

func (s recordSide) Read(context.Context) { s.add("read") }
func (s recordSide) Push(context.Context) { s.add("push") }
func (s recordSide) Wait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	s.add("wait " + id)
	return h.Wait(ctx, id, timeout)
}

// TestSide: each tool call reads before its work and pushes after it,
// with a Side of its own, and a wait goes through the Side's Wait.
func TestSide(t *testing.T) {
	h := newHub(t)
	var mu sync.Mutex
	var log []string
	sides := 0
	cs := connect(t, h, Options{Agent: "engineer", Classify: testClassify, Side: func() Side {
		mu.Lock()
		sides++
		mu.Unlock()
		return recordSide{&mu, &log}
	}})
	ctx := context.Background()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		return res
	}
	require.False(t, call("clarify_ask", map[string]any{"issue": 42, "to": "architect", "topic": "t", "question": "q?"}).IsError)
	require.False(t, call("clarify_wait", map[string]any{"id": "CLR-42-001", "wait_seconds": 0.2}).IsError)
	require.True(t, call("clarify_show", map[string]any{"id": "CLR-42-099"}).IsError)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"read", "push", "read", "wait CLR-42-001", "push", "read", "push"}, log, "a failed call too")
	assert.Equal(t, 3, sides, "a Side per call")
}

// TestToolHints: the hint of a refusal the core leaves to its front ends
// is worded in the server's terms (tools and their arguments).
func TestToolHints(t *testing.T) {
	h := newHub(t)
	h.Rules().Config.DefaultWorkflow = "bug" // its steps allow only non-blocking questions
	h.Rules().Config.MaxQuestions = 1
	cs := connect(t, h, Options{Agent: "engineer", Classify: testClassify})
	tests := []struct {
		name string
		tool string
		args map[string]any
		rule string
		hint string
	}{
		{"blocking not allowed", "clarify_ask", map[string]any{"issue": 7, "to": "architect", "topic": "t", "question": "q"},
			"blocking", "call clarify_ask again with blocking false"},
		{"blocking not allowed, to a person", "ask_human", map[string]any{"issue": 7, "question": "q"},
			"blocking", "call ask_human again with blocking false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := errInfo(t, callTool(t, cs, tt.tool, tt.args))
			assert.Equal(t, "rejected", info.Code)
			assert.Equal(t, tt.rule, info.Rule)
			assert.Contains(t, info.Hint, tt.hint)
			assert.NotContains(t, info.Hint, "--")
			assert.NotContains(t, info.Hint, "agentx clarify")
		})
	}
	into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{"issue": 7, "to": "architect", "topic": "t", "question": "q", "blocking": false}))
	info := errInfo(t, callTool(t, cs, "clarify_ask", map[string]any{"issue": 7, "to": "architect", "topic": "t", "question": "q2", "blocking": false}))
	assert.Equal(t, "cap", info.Rule)
	assert.Contains(t, info.Hint, "record your assumption with clarify_assume")
	assert.NotContains(t, info.Hint, "--")
}

// TestAskRefs: clarify_ask's refs reach the one asked as its question's
// context, recorded in the ledger; a file outside the repository is a note.
func TestAskRefs(t *testing.T) {
	h := newHub(t)
	require.NoError(t, os.MkdirAll(filepath.Join(h.Dir, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(h.Dir, "docs", "a.md"), []byte("one\ntwo\nthree\n"), 0o644))
	cs := connect(t, h, Options{Agent: "engineer", Classify: testClassify})
	res := into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{"issue": 42, "to": "architect", "topic": "t", "question": "q?",
		"refs": []any{"docs/a.md:2", "../x"}}))
	rec, err := h.Get(res.ID)
	require.NoError(t, err)
	require.NotNil(t, rec.X.Context)
	require.Len(t, rec.X.Context.Refs, 1)
	assert.Equal(t, ledger.ContextRef{Kind: "ref", Path: "docs/a.md", SHA256: rec.X.Context.Refs[0].SHA256}, rec.X.Context.Refs[0], "lines 1-3: the whole file")
	assert.Equal(t, []string{"../x: outside the repository: not read"}, rec.X.Context.Omitted)

	res = into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"issue": 42, "question": "Which?", "options": []any{"a", "b (default)"}, "refs": []any{"docs/a.md:3"}}))
	rec, err = h.Get(res.ID)
	require.NoError(t, err)
	require.Len(t, rec.X.Context.Refs, 1)
	card := h.Card(rec).Render(brief.Text, brief.Options{})
	assert.Contains(t, card, "  2. b (default) [default: engineer's proposal]\n")
	assert.Contains(t, card, "    3 | three\n")
}
