package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/router"
)

// TestProposalTools: an agent proposes over MCP, as the server's agent,
// logged in the event log; it lists and reads proposals and sees a
// person's decision; it cannot propose as another agent or as a person,
// and no tool decides a proposal.
func TestProposalTools(t *testing.T) {
	h := newHub(t)
	cs := connect(t, h, Options{Agent: "engineer", Classify: testClassify})

	c := callTool(t, cs, "proposal_create", map[string]any{
		"type": "tool_fix", "title": "Test database not migrated", "rationale": "TestMigrate failed on #7 and #8",
		"action": "Run migrations before the tests", "issues": []int{7, 8},
	})
	r := into[ProposalResult](t, c)
	require.NotNil(t, r.Proposal)
	assert.Equal(t, "PROP-001", r.Proposal.ID)
	assert.Equal(t, proposal.Pending, r.Proposal.Status)
	assert.Equal(t, "engineer", r.Proposal.CreatedBy, "the server's agent proposes")
	assert.Equal(t, "medium", r.Proposal.Impact)
	assert.Contains(t, r.Guidance, "only a person approves or rejects it")
	assert.Contains(t, c.text(), "PROP-001 (pending, tool_fix, #7 #8): Test database not migrated")

	res, err := h.Events.Read(router.EventFilter{ID: "PROP-001"})
	require.NoError(t, err)
	require.Len(t, res.Events, 1)
	assert.Equal(t, router.EventProposalCreated, res.Events[0].Type)
	assert.Equal(t, "engineer", res.Events[0].By)
	assert.Equal(t, []int{7, 8}, res.Events[0].Issues)

	// the agent cannot propose as someone else, nor as a person
	for _, tt := range []struct {
		agent, from, code string
	}{
		{"engineer", "architect", "identity_mismatch"},
		{"engineer", "human", "identity_mismatch"},
		{"engineer", "agentx", "identity_mismatch"},
		{"", "human", "identity_mismatch"},
		{"", "human:alice", "usage"},
		{"", "", "usage"},
	} {
		other := connect(t, h, Options{Agent: tt.agent, Classify: testClassify})
		info := errInfo(t, callTool(t, other, "proposal_create", map[string]any{
			"type": "tool_fix", "title": "t", "rationale": "r", "action": "a", "from": tt.from,
		}))
		assert.Equal(t, tt.code, info.Code, "agent %q from %q", tt.agent, tt.from)
	}
	assert.Equal(t, "usage", errInfo(t, callTool(t, cs, "proposal_create", map[string]any{
		"type": "wish", "title": "t", "rationale": "r", "action": "a",
	})).Code)

	// a person decides (the CLI); the agent reads the decision
	_, err = proposal.Decide(context.Background(), h, "PROP-001", proposal.Rejected, "alice", "the runner migrates already")
	require.NoError(t, err)
	sh := callTool(t, cs, "proposal_show", map[string]any{"id": "prop-001"})
	got := into[ProposalResult](t, sh)
	assert.Equal(t, proposal.Rejected, got.Proposal.Status)
	assert.Contains(t, sh.text(), "rejected by human:alice\n  the runner migrates already")
	assert.Contains(t, got.Guidance, "do not act on it")
	assert.Equal(t, "not_found", errInfo(t, callTool(t, cs, "proposal_show", map[string]any{"id": "PROP-009"})).Code)

	into[ProposalResult](t, callTool(t, cs, "proposal_create", map[string]any{
		"type": "new_skill", "title": "Migrations", "rationale": "r", "action": "a",
	}))
	for _, tt := range []struct {
		args map[string]any
		ids  []string
	}{
		{map[string]any{}, []string{"PROP-001", "PROP-002"}},
		{map[string]any{"status": "pending"}, []string{"PROP-002"}},
		{map[string]any{"issue": 8}, []string{"PROP-001"}},
		{map[string]any{"issue": 9}, nil},
	} {
		l := into[ProposalListResult](t, callTool(t, cs, "proposal_list", tt.args))
		var ids []string
		for _, p := range l.Proposals {
			ids = append(ids, p.ID)
		}
		assert.Equal(t, tt.ids, ids, "%v", tt.args)
	}
	assert.Equal(t, "usage", errInfo(t, callTool(t, cs, "proposal_list", map[string]any{"status": "open"})).Code)
}

// TestNoToolDecidesProposals: the server never acts as a person, so no
// tool approves, rejects or marks a proposal implemented.
func TestNoToolDecidesProposals(t *testing.T) {
	cs := connect(t, newHub(t), Options{Classify: testClassify})
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tool := range res.Tools {
		for _, verb := range []string{"approve", "reject", "implement", "decide"} {
			assert.NotContains(t, tool.Name, verb)
		}
		if strings.HasPrefix(tool.Name, "proposal_") {
			assert.Contains(t, []string{"proposal_create", "proposal_list", "proposal_show"}, tool.Name)
		}
	}
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "proposal_approve", Arguments: map[string]any{"id": "PROP-001"}})
	assert.ErrorContains(t, err, `unknown tool "proposal_approve"`)
}
