package relay

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

// TestRunWaitsForRemote: in remote mode, an issue whose changes are still
// in the remote's outbox is not mirrored (they may yet be renumbered or
// superseded); it stays queued, saying why, and goes once they are shared.
func TestRunWaitsForRemote(t *testing.T) {
	dir := t.TempDir()
	store := ledger.NewStore(dir, lock.Options{}, nil)
	o := &Outbox{File: FileIn(dir, "test", "outbox.json"), Store: store, Events: router.EventLog{Path: filepath.Join(dir, router.EventsFile)}, Service: "Test",
		Start: func() ([]int, error) { return []int{7, 8}, nil }}
	marker := filepath.Join(dir, ledger.SyncDir, ledger.OutboxDir, "issue-7.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(marker), 0o755))
	require.NoError(t, os.WriteFile(marker, []byte("{}"), 0o644))

	var synced []int
	sync := func(_ context.Context, n int) error { synced = append(synced, n); return nil }
	var q Queue
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	_, err := o.Run(context.Background(), now, &q, &q, true, nil, sync)
	require.NoError(t, err)
	assert.Equal(t, []int{8}, synced, "issue 7's changes are not on the remote yet")
	require.Contains(t, q.Issues, "7")
	assert.Contains(t, q.Issues["7"].Error, "shared remote")
	assert.Zero(t, q.Issues["7"].Attempts, "waiting is not a failure")

	require.NoError(t, os.Remove(marker))
	synced = nil
	_, err = o.Run(context.Background(), now, &q, &q, true, nil, sync)
	require.NoError(t, err)
	assert.Equal(t, []int{7}, synced)
	assert.Empty(t, q.Issues)
}
