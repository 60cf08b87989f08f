package mcpserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/router"
)

// TestToolsMarkSeen: what an agent reads through a tool is not delivered to
// it again by its inbox; what someone else reads still is.
func TestToolsMarkSeen(t *testing.T) {
	tests := []struct {
		name     string
		server   string // the server's agent
		tool     string
		args     map[string]any
		outcome  Outcome // for the ask tools
		redeliv  bool    // the engineer's inbox still delivers the answer
		question bool    // the architect's inbox still delivers the question
	}{
		{"clarify_wait by the asker", "engineer", "clarify_wait", map[string]any{"id": "CLR-7-001", "wait_seconds": 0}, OutcomeAnswered, false, true},
		{"clarify_wait by someone else", "reviewer", "clarify_wait", map[string]any{"id": "CLR-7-001", "wait_seconds": 0}, OutcomeAnswered, true, true},
		{"clarify_show by the asker", "engineer", "clarify_show", map[string]any{"id": "CLR-7-001"}, "", false, true},
		{"clarify_show by someone else", "reviewer", "clarify_show", map[string]any{"id": "CLR-7-001"}, "", true, true},
		{"clarify_resolve by the asker", "engineer", "clarify_resolve", map[string]any{"id": "CLR-7-001"}, "", false, true},
		{"clarify_show by the one asked, before it answers", "architect", "clarify_show", map[string]any{"id": "CLR-7-002"}, "", true, false},
		{"clarify_list reads no thread", "engineer", "clarify_list", map[string]any{}, "", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHub(t)
			ctx := context.Background()
			ask := func(topic string) string {
				rec, err := h.Ask(ctx, router.AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: topic, Question: topic + "?"})
				require.NoError(t, err)
				return rec.ID
			}
			id := ask("Cache")
			_, err := h.Answer(ctx, id, "architect", "Per key.")
			require.NoError(t, err)
			ask("Queue") // CLR-7-002, waiting for the architect

			cs := connect(t, h, Options{Agent: tt.server, Classify: testClassify})
			c := callTool(t, cs, tt.tool, tt.args)
			require.False(t, c.res.IsError, c.text())
			if tt.outcome != "" {
				assert.Equal(t, tt.outcome, into[AskResult](t, c).Outcome)
			}

			res, err := inbox.Check(ctx, h.Store, inbox.Options{Agent: "engineer"})
			require.NoError(t, err)
			assert.Equal(t, tt.redeliv, len(res.Items) == 1, "engineer's inbox: %v", res.Items)
			res, err = inbox.Check(ctx, h.Store, inbox.Options{Agent: "architect"})
			require.NoError(t, err)
			got := []string{}
			for _, it := range res.Items {
				got = append(got, it.ID)
			}
			if tt.question {
				assert.Equal(t, []string{"CLR-7-002"}, got)
			} else {
				assert.NotContains(t, got, "CLR-7-002")
			}
		})
	}
}

// TestShowReceipts: clarify_show carries each answer's receipt: not
// delivered until the asker reads it, then delivered via mcp.
func TestShowReceipts(t *testing.T) {
	h := newHub(t)
	ctx := context.Background()
	rec, err := h.Ask(ctx, router.AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "Cache", Question: "Cache?"})
	require.NoError(t, err)
	_, err = h.Answer(ctx, rec.ID, "architect", "Per key.")
	require.NoError(t, err)

	show := func(agent string) ShowResult {
		cs := connect(t, h, Options{Agent: agent, Classify: testClassify})
		c := callTool(t, cs, "clarify_show", map[string]any{"id": rec.ID})
		require.False(t, c.res.IsError, c.text())
		return into[ShowResult](t, c)
	}
	got := show("architect").Delivery
	require.Len(t, got, 1)
	assert.Equal(t, inbox.ReceiptAnswered, got[0].State)
	assert.Equal(t, 1, got[0].Entry)

	got = show("engineer").Delivery // the asker reads it: delivered now
	require.Len(t, got, 1)
	assert.Equal(t, inbox.ReceiptDelivered, got[0].State)
	assert.Equal(t, inbox.ViaMCP, got[0].Via)
	assert.NotNil(t, got[0].Delivered)
}
