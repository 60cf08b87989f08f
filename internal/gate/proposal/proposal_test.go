package proposal

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := ledger.NewStore(dir, lock.Options{}, func() time.Time { return time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC) })
	h := router.New(store, nil, dir)
	p, err := Create(ctx, h, Proposal{Type: TypeToolFix, Title: "t", Rationale: "r", Action: "a", CreatedBy: "engineer", Issues: []int{7, 8}})
	require.NoError(t, err)
	assert.Equal(t, "PROP-001", p.ID)
	assert.Equal(t, Pending, p.Status)
	assert.Equal(t, "medium", p.Impact)

	_, err = Decide(ctx, h, "PROP-001", Implemented, "alice", "")
	assert.True(t, IsTransition(err), "pending cannot become implemented")
	p, err = Decide(ctx, h, "prop-001", Approved, "alice", "")
	require.NoError(t, err)
	assert.Equal(t, "human:alice", p.ResolvedBy)
	_, err = Decide(ctx, h, "PROP-001", Rejected, "bob", "late")
	assert.True(t, IsTransition(err), "approved cannot become rejected")
	_, err = Decide(ctx, h, "PROP-009", Approved, "bob", "")
	assert.ErrorIs(t, err, ledger.ErrNotFound)

	for _, bad := range []Proposal{
		{Type: "wish", Title: "t", Rationale: "r", Action: "a"},
		{Type: TypeNewSkill, Title: "", Rationale: "r", Action: "a"},
		{Type: TypeNewSkill, Title: "t", Rationale: "r", Action: "a", Impact: "huge"},
		{Type: TypeNewSkill, Title: "t", Rationale: "r", Action: "a", Issues: []int{-1}},
	} {
		_, err := Create(ctx, h, bad)
		assert.Error(t, err, "%+v", bad)
	}

	// Every change that happened is in the event log, with who acted;
	// refused moves and bad proposals are not.
	res, err := h.Events.Read(router.EventFilter{})
	require.NoError(t, err)
	require.Len(t, res.Events, 2)
	assert.Equal(t, router.EventProposalCreated, res.Events[0].Type)
	assert.Equal(t, "PROP-001", res.Events[0].ProposalID)
	assert.Equal(t, []int{7, 8}, res.Events[0].Issues)
	assert.Equal(t, "engineer", res.Events[0].By)
	assert.Equal(t, "t", res.Events[0].Topic)
	assert.Equal(t, router.EventProposalApproved, res.Events[1].Type)
	assert.Equal(t, "human:alice", res.Events[1].By)
	seven, zero := 7, 0
	res, err = h.Events.Read(router.EventFilter{Issue: &seven, ID: "PROP-001"})
	require.NoError(t, err)
	assert.Len(t, res.Events, 2, "a proposal's events are on each issue it names")
	res, err = h.Events.Read(router.EventFilter{Issue: &zero})
	require.NoError(t, err)
	assert.Empty(t, res.Events, "not on issue 0: a proposal is no question of no issue")

	p, err = Decide(ctx, h, "PROP-001", Implemented, "bob", "")
	require.NoError(t, err)
	require.Len(t, p.Decisions, 2, "each decision is kept for the mirrors")
	assert.Equal(t, Decision{Status: Approved, By: "human:alice", At: p.Created}, p.Decisions[0])
	assert.Equal(t, Implemented, p.Decisions[1].Status)
	assert.Equal(t, 3, p.Entries())
}
