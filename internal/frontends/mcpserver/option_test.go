package mcpserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// TestOptionTools: option on clarify_answer and clarify_resolve picks one
// of the question's numbered options, through the hub's AnswerReply and
// ResolveReply as the command line's --option does: the ledger stores the
// option's text and its number; a number it does not offer is a usage
// error naming the options.
func TestOptionTools(t *testing.T) {
	h := newHub(t)
	ctx := context.Background()
	_, err := h.Ask(ctx, router.AskRequest{Issue: 4, From: "engineer", To: "architect", Topic: "Cache", Question: "TTL?", Options: []string{"per key", "global"}})
	require.NoError(t, err)
	_, err = h.Ask(ctx, router.AskRequest{Issue: 4, From: "engineer", To: "architect", Topic: "Free", Question: "Why?"})
	require.NoError(t, err)
	arch := connect(t, h, Options{Agent: "architect", Classify: testClassify})
	eng := connect(t, h, Options{Agent: "engineer", Classify: testClassify})

	for _, tt := range []struct {
		args       map[string]any
		code, text string
	}{
		{map[string]any{"id": "CLR-4-001", "option": 3}, "usage", "CLR-4-001 has no option 3: its options are 1. per key; 2. global"},
		{map[string]any{"id": "CLR-4-001", "option": 0}, "usage", `option "0" is not an option number: options are numbered from 1`},
		{map[string]any{"id": "CLR-4-001", "option": -1, "body": "x"}, "usage", "options are numbered from 1"},
		{map[string]any{"id": "CLR-4-001"}, "usage", "answer"},
		{map[string]any{"id": "CLR-4-002", "option": 1}, "usage", "CLR-4-002 offers no options: reply with text"},
	} {
		c := callTool(t, arch, "clarify_answer", tt.args)
		info := errInfo(t, c)
		assert.Equal(t, tt.code, info.Code, "%v", tt.args)
		assert.Equal(t, 2, info.ExitCode, "%v", tt.args)
		assert.Contains(t, c.text(), tt.text, "%v", tt.args)
	}
	rec, err := h.Get("CLR-4-001")
	require.NoError(t, err)
	assert.Len(t, rec.Thread, 1, "nothing recorded")

	got := into[RecordResult](t, callTool(t, arch, "clarify_answer", map[string]any{"id": "CLR-4-001", "option": "2"}))
	assert.Equal(t, ledger.Answered, got.Status)
	rec, err = h.Get("CLR-4-001")
	require.NoError(t, err)
	assert.Equal(t, "global", rec.Thread[1].Body)
	assert.Equal(t, &ledger.Choice{Entry: 1, Option: 2, Text: "global"}, rec.ChoiceAt(1))

	// the asker resolves with an option, and a note
	info := errInfo(t, callTool(t, eng, "clarify_resolve", map[string]any{"id": "CLR-4-001", "option": 7}))
	assert.Contains(t, info.Message, "its options are 1. per key; 2. global")
	into[RecordResult](t, callTool(t, eng, "clarify_resolve", map[string]any{"id": "CLR-4-001", "option": 1, "body": "after all"}))
	rec, err = h.Get("CLR-4-001")
	require.NoError(t, err)
	assert.Equal(t, ledger.Resolved, rec.Status)
	assert.Equal(t, "per key\n\nafter all", rec.Thread[2].Body)
	assert.Equal(t, &ledger.Choice{Entry: 2, Option: 1, Text: "per key"}, rec.ChoiceAt(2))
}
