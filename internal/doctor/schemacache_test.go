package doctor

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// TestSchemaCheckRemembered: a second doctor run checks the AgentX schema
// only of the ledgers written since the first; a ledger changed to bend
// the schema is found, and a deleted cache only costs time.
func TestSchemaCheckRemembered(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := ledger.NewStore(dir, lock.Options{}, func() time.Time { return t0 })
	_, _, err := s.RebuildIndex(ctx)
	require.NoError(t, err)
	for n := 1; n <= 5; n++ {
		_, err := s.Update(ctx, n, func(l *ledger.Ledger) error {
			l.Clarifications = append(l.Clarifications, &ledger.Clarification{
				ID: l.NextID(), From: "engineer", To: "architect", Topic: "t", Blocking: true, Status: ledger.Pending,
				Round: 1, MaxRounds: 5, Created: ledger.T(t0), StaleAfter: ledger.T(t0),
				Thread: []ledger.ThreadEntry{{Round: 1, From: "engineer", Type: ledger.Question, Body: "q", Timestamp: ledger.T(t0)}},
			})
			return nil
		})
		require.NoError(t, err)
	}
	var calls atomic.Int32
	validateSchema = func(data []byte) error { calls.Add(1); return ValidateSchema(data) }
	t.Cleanup(func() { validateSchema = ValidateSchema })

	run := func() *Report {
		calls.Store(0)
		r, err := Run(ctx, s, Options{Now: time.Now})
		require.NoError(t, err)
		return r
	}
	r := run()
	assert.Empty(t, r.Findings)
	assert.EqualValues(t, 5, calls.Load(), "the first run checks every ledger")
	r = run()
	assert.Empty(t, r.Findings)
	assert.EqualValues(t, 0, calls.Load(), "nothing was written since")

	// issue 3 rewritten with round 0 and a thread: agentx reads it, the
	// AgentX schema does not allow it
	_, err = s.Update(ctx, 3, func(l3 *ledger.Ledger) error {
		c := l3.Find("CLR-3-001")
		c.Round = 0
		return nil
	})
	require.NoError(t, err)
	r = run()
	assert.EqualValues(t, 1, calls.Load(), "only the ledger written since is checked")
	assert.Equal(t, map[string]string{"issue-3.json": "schema warning open"}, kinds(r))
	run()
	assert.EqualValues(t, 1, calls.Load(), "a ledger that bends the schema is checked every time")

	require.NoError(t, os.Remove(dir+"/"+SchemaCacheFile))
	run()
	assert.EqualValues(t, 5, calls.Load(), "no cache: every ledger again")

	// a cache that does not parse is replaced, not kept for ever
	require.NoError(t, os.WriteFile(dir+"/"+SchemaCacheFile, []byte("{torn"), 0o644))
	run()
	assert.EqualValues(t, 5, calls.Load(), "an unreadable cache: every ledger again")
	run()
	assert.EqualValues(t, 1, calls.Load(), "and remembered after: only the ledger that bends the schema")
}
