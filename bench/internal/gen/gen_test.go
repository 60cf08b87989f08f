package gen

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

// What gen writes must read back through agentx's own read paths, valid.
func TestGenerated(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, Workspace(root))
	require.NoError(t, Ledgers(root, Shape{Ledgers: 20, PerLedger: 3, Open: 5}))
	require.NoError(t, History(root, 21, 100))
	store := ledger.NewStore(StateDir(root), lock.Options{}, nil)

	open := 0
	for n := 1; n <= 20; n++ {
		l, err := store.Read(n)
		require.NoError(t, err)
		require.NoError(t, l.Validate())
		require.Len(t, l.Clarifications, 3)
		for _, c := range l.Clarifications {
			if c.Status.Open() {
				open++
			}
		}
	}
	assert.Equal(t, 5, open)

	l, err := store.Read(21)
	require.NoError(t, err)
	require.NoError(t, l.Validate())
	statuses := map[ledger.Status]int{}
	for _, c := range l.Clarifications {
		statuses[c.Status]++
		assert.NotNil(t, c.Current(ledger.Question), c.ID)
		assert.NotNil(t, c.Current(ledger.Answer), c.ID)
	}
	assert.Equal(t, map[ledger.Status]int{ledger.Resolved: 90, ledger.Answered: 5, ledger.Pending: 5}, statuses)

	ix, rebuilt, skipped, err := store.LoadOpen(context.Background())
	require.NoError(t, err)
	assert.False(t, rebuilt, "the index was written with the ledgers")
	assert.Empty(t, skipped)
	assert.Len(t, ix.Entries(), 5+10)

	size, err := Events(root, 1000, 20)
	require.NoError(t, err)
	assert.Positive(t, size)
	res, err := router.EventLog{Path: filepath.Join(StateDir(root), "events.jsonl")}.Read(router.EventFilter{})
	require.NoError(t, err)
	assert.Zero(t, res.Skipped)
	require.Len(t, res.Events, 1000)
	assert.Equal(t, router.EventRequested, res.Events[0].Type)
	assert.Equal(t, "CLR-1-001", res.Events[0].ClarificationID)
	assert.True(t, res.Events[0].Timestamp.Before(res.Events[999].Timestamp.Time))
}
