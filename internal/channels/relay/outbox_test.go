package relay

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

// testOutbox is an outbox in a new state directory whose first run queues
// start.
func testOutbox(t *testing.T, start ...int) (*Outbox, string) {
	dir := t.TempDir()
	store := ledger.NewStore(dir, lock.Options{}, nil)
	return &Outbox{File: FileIn(dir, "test", "outbox.json"), Store: store, Events: router.EventLog{Path: filepath.Join(dir, router.EventsFile)}, Service: "Test",
		Start: func() ([]int, error) { return start, nil }}, dir
}

// TestRunWaitsForRemote: in remote mode, an issue whose changes are still
// in the remote's outbox is not mirrored (they may yet be renumbered or
// superseded); it stays queued, saying why, and goes once they are shared.
func TestRunWaitsForRemote(t *testing.T) {
	o, dir := testOutbox(t, 7, 8)
	marker := filepath.Join(dir, remote.SyncDir, remote.OutboxDir, "issue-7.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(marker), 0o755))
	require.NoError(t, os.WriteFile(marker, []byte("{}"), 0o644))

	var q Queue
	run := runner(t, o, &q)
	assert.Equal(t, []int{8}, run(), "issue 7's changes are not on the remote yet")
	require.Contains(t, q.Issues, "7")
	assert.Contains(t, q.Issues["7"].Error, "shared remote")
	assert.Zero(t, q.Issues["7"].Attempts, "waiting is not a failure")

	require.NoError(t, os.Remove(marker))
	assert.Equal(t, []int{7}, run())
	assert.Empty(t, q.Issues)
}

// runner returns a function that runs o's queue q (forced) and returns
// the issues it synced.
func runner(t *testing.T, o *Outbox, q *Queue) func() []int {
	return func() []int {
		var synced []int
		now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
		_, err := o.Run(context.Background(), now, q, q, true, nil, func(_ context.Context, n int) error { synced = append(synced, n); return nil })
		require.NoError(t, err)
		return synced
	}
}

// A change pulled from the shared remote was made on another host, which
// mirrors it: Run does not queue its issue, nor does Status count it.
func TestRunSkipsPulledEvents(t *testing.T) {
	o, _ := testOutbox(t)
	var q Queue
	run := runner(t, o, &q)
	assert.Empty(t, run())

	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	pulled := router.Event{Type: router.EventAnswered, ClarificationID: "CLR-7-001", IssueNumber: 7, Timestamp: ledger.T(now), Via: router.ViaRemote, Host: "ci-runner"}
	require.NoError(t, o.Events.Append(pulled))
	_, behind, err := o.Status(q, func(*ledger.Clarification) int { return 0 })
	require.NoError(t, err)
	assert.Empty(t, behind, "another host's change")
	assert.Empty(t, run())
	assert.Empty(t, q.Issues)

	mine := pulled
	mine.IssueNumber, mine.ClarificationID, mine.Via, mine.Host = 8, "CLR-8-001", "", ""
	require.NoError(t, o.Events.Append(mine))
	assert.Equal(t, []int{8}, run(), "this host's own change")
}

// A refusal (scope-refused, lock-timeout) changed nothing: Run does not
// queue its issue, nor does Status count it.
func TestRunSkipsRefusals(t *testing.T) {
	o, _ := testOutbox(t)
	var q Queue
	run := runner(t, o, &q)
	assert.Empty(t, run())
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	for _, e := range []router.Event{
		{Type: router.EventScopeRefused, IssueNumber: 7, FromAgent: "engineer", ToAgent: "reviewer", Topic: "t", Timestamp: ledger.T(now)},
		{Type: router.EventLockTimeout, ClarificationID: "CLR-8-001", IssueNumber: 8, Topic: "t", Timestamp: ledger.T(now)},
	} {
		require.NoError(t, o.Events.Append(e))
	}
	_, behind, err := o.Status(q, func(*ledger.Clarification) int { return 0 })
	require.NoError(t, err)
	assert.Empty(t, behind)
	assert.Empty(t, run())
	assert.Empty(t, q.Issues)
}
