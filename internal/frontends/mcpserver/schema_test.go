package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// listsValues matches a description that names a closed set of values in
// prose ("low, medium (default) or high"): such a set belongs in an enum,
// where a client can offer it.
var listsValues = regexp.MustCompile(`\b[a-z_]+( \([a-z ]+\))?, [a-z_]+( \([a-z ]+\))?,? or [a-z_]+\b`)

// TestSchemasAsClientsExpect walks every tool's schemas as a client lists
// them: an input property has one plain type (an optional one is not a
// ["null", T] union, which the MCP Inspector cannot fill and sends as a
// string), and a closed set of values is an enum, never prose.
func TestSchemasAsClientsExpect(t *testing.T) {
	cs := connect(t, newHub(t), Options{Agent: "engineer"})
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, len(allTools))
	for _, tool := range tools.Tools {
		for kind, schema := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			b, err := json.Marshal(schema)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(b, &doc))
			walkSchema(doc, tool.Name+" "+kind, func(path string, s map[string]any) {
				if kind == "input" {
					typ, plain := s["type"].(string)
					assert.True(t, plain, "%s: type %v: an input has one plain type", path, s["type"])
					assert.NotEqual(t, "null", typ, "%s", path)
				}
				desc, _ := s["description"].(string)
				if _, ok := s["enum"]; !ok && listsValues.MatchString(desc) {
					t.Errorf("%s: %q lists its values in prose: make them an enum", path, desc)
				}
			})
		}
		in := tool.InputSchema.(map[string]any)
		for name, p := range in["properties"].(map[string]any) {
			desc, _ := p.(map[string]any)["description"].(string)
			assert.NotEmpty(t, desc, "%s: argument %s has no description", tool.Name, name)
		}
	}
}

// walkSchema calls fn with every schema under s (s's properties and
// items, recursively), named by its path.
func walkSchema(s map[string]any, path string, fn func(path string, s map[string]any)) {
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok {
				fn(path+"."+name, ps)
				walkSchema(ps, path+"."+name, fn)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		fn(path+"[]", items)
		walkSchema(items, path+"[]", fn)
	}
	for _, key := range []string{"$defs", "definitions"} {
		if defs, ok := s[key].(map[string]any); ok {
			for name, d := range defs {
				if ds, ok := d.(map[string]any); ok {
					walkSchema(ds, fmt.Sprintf("%s.%s.%s", path, key, name), fn)
				}
			}
		}
	}
}

// TestListsValuesPattern keeps the prose detector honest: it finds the
// lists the schemas used to have and none of today's descriptions.
func TestListsValuesPattern(t *testing.T) {
	for _, s := range []string{
		"new_skill, tool_fix, config_change or workflow_improvement",
		"low, medium (default) or high",
		"low (default), medium or high",
		"only this status: pending, approved, rejected or implemented",
	} {
		assert.True(t, listsValues.MatchString(s), s)
	}
	for _, s := range []string{
		"whom to ask: an upstream agent such as architect or product-manager, or human",
		"true (default): you cannot finish without the answer; false: you keep working meanwhile",
	} {
		assert.False(t, listsValues.MatchString(s), s)
	}
}

// TestArgumentsAsClientsSend: what clients send for an optional argument
// is taken as a person filling the form meant it: null is "not given",
// and a number or boolean typed into a text box arrives as a string. No
// message about an argument shows Go's internals.
func TestArgumentsAsClientsSend(t *testing.T) {
	h := newHub(t)
	cs := connect(t, h, Options{Agent: "engineer", Classify: testClassify})
	asked := into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{"issue": "7", "to": "architect", "topic": "t", "question": "q", "blocking": "false", "wait_seconds": "0", "from": nil}))
	assert.Equal(t, "CLR-7-001", asked.ID)
	rec, err := h.Get("CLR-7-001")
	require.NoError(t, err)
	assert.False(t, rec.Blocking)

	waited := into[AskResult](t, callTool(t, cs, "clarify_wait", map[string]any{"id": "CLR-7-001", "wait_seconds": "0"}))
	assert.Equal(t, OutcomePending, waited.Outcome)
	human := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"question": "q?", "issue": nil, "topic": nil, "options": nil, "blocking": nil, "wait_seconds": nil}))
	assert.Equal(t, "CLR-0-001", human.ID)

	for _, bad := range []any{nil, "", "x", "0x10", " 1", "NaN", "Infinity", "1e999", true, []any{}, map[string]any{}} {
		for _, tool := range allTools {
			args := map[string]any{"id": "CLR-7-001", "question": "q", "issue": bad, "wait_seconds": bad, "blocking": bad, "status": bad, "type": bad, "options": bad, "all": bad}
			c := callTool(t, cs, tool, args)
			if c.res.IsError {
				assert.NotContains(t, c.text(), "<invalid", "%s %v", tool, bad)
				assert.NotContains(t, c.text(), "reflect", "%s %v", tool, bad)
			}
		}
	}
}

// TestMessageArgumentsStateTheLimit: every argument that carries one
// message (a question, an answer, a follow-up, a resolution, an
// assumption) tells the agent the limit the hub holds it to
// (ledger.MaxMessageLen), so an agent writes within it.
func TestMessageArgumentsStateTheLimit(t *testing.T) {
	cs := connect(t, newHub(t), Options{Agent: "engineer"})
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	want := map[string]string{
		"clarify_ask": "question", "ask_human": "question", "clarify_answer": "body",
		"clarify_followup": "body", "clarify_resolve": "body", "clarify_assume": "assumption",
	}
	seen := 0
	for _, tool := range tools.Tools {
		arg, ok := want[tool.Name]
		if !ok {
			continue
		}
		seen++
		p := tool.InputSchema.(map[string]any)["properties"].(map[string]any)[arg].(map[string]any)
		assert.Contains(t, p["description"], fmt.Sprintf("at most %d bytes", ledger.MaxMessageLen), "%s %s", tool.Name, arg)
	}
	assert.Equal(t, len(want), seen)
}
