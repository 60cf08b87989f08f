package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// TestResolveSummary: clarify_resolve's summary is what was decided, in a
// sentence or two, stored as agentx.summary through the hub's ResolveReply
// as the command line's --summary is; one too long, of three sentences or
// on two lines is a usage error naming the argument, and nothing is
// written; none given stores none.
func TestResolveSummary(t *testing.T) {
	h := newHub(t)
	ctx := context.Background()
	for range 2 {
		rec, err := h.Ask(ctx, router.AskRequest{Issue: 5, From: "engineer", To: "architect", Topic: "Database", Question: "PostgreSQL or SQLite for local dev?"})
		require.NoError(t, err)
		_, err = h.Answer(ctx, rec.ID, "architect", "Both, behind one interface. SQLite keeps the dev loop fast.")
		require.NoError(t, err)
	}
	eng := connect(t, h, Options{Agent: "engineer", Classify: testClassify})

	for _, tt := range []struct{ summary, text string }{
		{strings.Repeat("x", ledger.MaxSummary+1), "is 401 bytes; the limit is 400"},
		{"Dual adapter. SQLite in dev. Postgres in CI.", "is 3 sentences; a summary is one or two"},
		{"Dual adapter.\nPostgres in CI.", "has a control character"},
	} {
		c := callTool(t, eng, "clarify_resolve", map[string]any{"id": "CLR-5-001", "summary": tt.summary})
		info := errInfo(t, c)
		assert.Equal(t, "usage", info.Code, tt.summary)
		assert.Equal(t, 2, info.ExitCode, tt.summary)
		assert.True(t, strings.HasPrefix(info.Message, "summary "), "names the argument: %s", info.Message)
		assert.Contains(t, info.Message, tt.text)
	}
	rec, err := h.Get("CLR-5-001")
	require.NoError(t, err)
	assert.Equal(t, ledger.Answered, rec.Status, "nothing written")

	got := into[RecordResult](t, callTool(t, eng, "clarify_resolve", map[string]any{"id": "CLR-5-001", "summary": "Dual adapter behind a repository interface."}))
	assert.Equal(t, ledger.Resolved, got.Status)
	rec, err = h.Get("CLR-5-001")
	require.NoError(t, err)
	require.NotNil(t, rec.X)
	assert.Equal(t, "Dual adapter behind a repository interface.", rec.X.Summary)
	assert.Equal(t, "Dual adapter behind a repository interface.", rec.Decision())

	into[RecordResult](t, callTool(t, eng, "clarify_resolve", map[string]any{"id": "CLR-5-002"}))
	rec, err = h.Get("CLR-5-002")
	require.NoError(t, err)
	assert.True(t, rec.X == nil || rec.X.Summary == "", "none given, none stored")
	assert.Equal(t, "Resolved with the answer: Both, behind one interface.", rec.Decision(), "derived from the resolution")
}
