package mcpserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// TestDecidedBefore: clarify_ask and ask_human tell the agent what was
// decided before on the same question, in the structured result and the
// text, and clarify_assume with reuse proceeds on one of those decisions:
// an assumption that cites it, which a person overturns by answering.
func TestDecidedBefore(t *testing.T) {
	h := newHub(t)
	ctx := context.Background()
	cs := connect(t, h, Options{Agent: "engineer", Classify: testClassify})

	// a decision on issue 42
	first := into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{
		"issue": 42, "to": "architect", "topic": "Database adapter", "question": "PostgreSQL or SQLite for local development?",
	}))
	assert.Empty(t, first.DecidedBefore, "nothing decided yet")
	assert.NotContains(t, first.Guidance, "decided before")
	_, err := h.Answer(ctx, first.ID, "architect", "PostgreSQL, as in production.")
	require.NoError(t, err)
	_, err = h.Resolve(ctx, first.ID, "engineer", "")
	require.NoError(t, err)

	// the same question on issue 7
	got := callTool(t, cs, "clarify_ask", map[string]any{
		"issue": 7, "to": "architect", "topic": "database-adapter", "question": "SQLite or PostgreSQL for local development?",
	})
	ask := into[AskResult](t, got)
	require.Len(t, ask.DecidedBefore, 1)
	d := ask.DecidedBefore[0]
	assert.Equal(t, router.Decided{ID: "CLR-42-001", Issue: 42, Topic: "Database adapter", Summary: "Resolved with the answer: PostgreSQL, as in production.",
		ResolvedAt: d.ResolvedAt, Match: router.MatchTopic, Similarity: 1}, d)
	assert.Contains(t, ask.Guidance, `clarify_assume {"id":"CLR-7-001","reuse":"CLR-42-001"}`)
	assert.Contains(t, got.text(), "Decided before:\n- CLR-42-001 (#42, ")
	assert.Contains(t, got.text(), "): Resolved with the answer: PostgreSQL, as in production.\n")

	// and to a person: ask_human too
	hum := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"issue": 8, "topic": "Database adapter", "question": "Which database for CI?"}))
	assert.Equal(t, []string{"CLR-42-001"}, []string{hum.DecidedBefore[0].ID})

	// neither an assumption nor a reuse; a reuse of what is not decided
	assert.Contains(t, errInfo(t, callTool(t, cs, "clarify_assume", map[string]any{"id": "CLR-7-001"})).Message, "reuse")
	assert.Contains(t, errInfo(t, callTool(t, cs, "clarify_assume", map[string]any{"id": "CLR-7-001", "reuse": "CLR-8-001"})).Message, "only a decision taken can be reused")

	re := into[RecordResult](t, callTool(t, cs, "clarify_assume", map[string]any{"id": "CLR-7-001", "reuse": "CLR-42-001"}))
	assert.Equal(t, ledger.Pending, re.Status, "the question stays open")
	assert.Contains(t, re.Guidance, "decision of CLR-42-001: Resolved with the answer: PostgreSQL, as in production.")
	assert.Contains(t, re.Guidance, "overturn")
	rec, err := h.Get("CLR-7-001")
	require.NoError(t, err)
	require.NotNil(t, rec.Reused())
	assert.Equal(t, &ledger.Reuse{ID: "CLR-42-001", Summary: "Resolved with the answer: PostgreSQL, as in production."}, rec.Reused().Reuses)
}
