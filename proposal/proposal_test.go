package proposal

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	store := ledger.NewStore(t.TempDir(), lock.Options{}, func() time.Time { return time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC) })
	p, err := Create(ctx, store, Proposal{Type: TypeToolFix, Title: "t", Rationale: "r", Action: "a", CreatedBy: "engineer"})
	require.NoError(t, err)
	assert.Equal(t, "PROP-001", p.ID)
	assert.Equal(t, Pending, p.Status)
	assert.Equal(t, "medium", p.Impact)

	_, err = Decide(ctx, store, "PROP-001", Implemented, "alice", "")
	assert.True(t, IsTransition(err), "pending cannot become implemented")
	p, err = Decide(ctx, store, "prop-001", Approved, "alice", "")
	require.NoError(t, err)
	assert.Equal(t, "human:alice", p.ResolvedBy)
	_, err = Decide(ctx, store, "PROP-001", Rejected, "bob", "late")
	assert.True(t, IsTransition(err), "approved cannot become rejected")
	_, err = Decide(ctx, store, "PROP-009", Approved, "bob", "")
	assert.ErrorIs(t, err, ledger.ErrNotFound)

	for _, bad := range []Proposal{
		{Type: "wish", Title: "t", Rationale: "r", Action: "a"},
		{Type: TypeNewSkill, Title: "", Rationale: "r", Action: "a"},
		{Type: TypeNewSkill, Title: "t", Rationale: "r", Action: "a", Impact: "huge"},
		{Type: TypeNewSkill, Title: "t", Rationale: "r", Action: "a", Issues: []int{-1}},
	} {
		_, err := Create(ctx, store, bad)
		assert.Error(t, err, "%+v", bad)
	}
}
