package remote

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFetchWaitsForAnotherGitsLock: a fetch that prunes a ref (an intent
// merged and removed on the remote) locks the repository's packed-refs,
// and another git process of this host (the MCP server's refresh, a hook's
// write, a process killed mid-fetch whose git runs on) may hold that lock
// for longer than git's one second. That is this host being busy, not the
// remote out of reach: before, git's "Unable to create packed-refs.lock"
// made the write go to the outbox as if offline, its id provisional; now
// the fetch waits for the lock and goes through.
func TestFetchWaitsForAnotherGitsLock(t *testing.T) {
	a, b := twoRepos(t)
	ctx := context.Background()
	_, err := a.Push(ctx, 1, Snapshot{}, []Commit{{Data: encIssue1(t, sharedRecord("CLR-1-001", "first")), Message: "CLR-1-001 asked"}})
	require.NoError(t, err)
	name, err := a.Post(ctx, 1, "", Commit{Data: encIssue1(t, sharedRecord("CLR-1-001", "posted")), Message: "CLR-1-001 asked"}, time.Now())
	require.NoError(t, err)
	_, intents, err := b.FetchIntents(ctx, 1)
	require.NoError(t, err)
	require.Len(t, intents, 1, "b holds the intent's ref")
	require.NoError(t, a.deleteRefs(ctx, []string{":" + a.intentsRef(1) + "/" + name}))

	t.Run("the intents' fetch", func(t *testing.T) {
		whileLocked(t, b, func() error { _, _, err := b.FetchIntents(ctx, 1); return err })
		refs, err := b.localRefs(ctx, b.intentsRef(1))
		require.NoError(t, err)
		assert.Empty(t, refs, "the intent removed on the remote is pruned here")
	})
	t.Run("the refresh's fetch", func(t *testing.T) {
		_, err := a.Push(ctx, 2, Snapshot{}, []Commit{{Data: encIssue1(t, sharedRecord("CLR-1-001", "first")), Message: "CLR-2-001 asked"}})
		require.NoError(t, err)
		heads, err := b.FetchAll(ctx)
		require.NoError(t, err)
		require.Contains(t, heads, 2)
		require.NoError(t, a.deleteRefs(ctx, []string{":" + a.Ref(2)}))
		whileLocked(t, b, func() error { heads, err = b.FetchAll(ctx); return err })
		assert.NotContains(t, heads, 2, "the ref deleted on the remote is pruned here")
	})
}

// whileLocked runs fetch while another process holds g's packed-refs lock
// (a second and a half, past git's own wait): it must wait for the lock
// and go through.
func whileLocked(t *testing.T, g *Git, fetch func() error) {
	lock := filepath.Join(g.Dir, ".git", "packed-refs.lock")
	require.NoError(t, os.WriteFile(lock, nil, 0o644))
	held := 1500 * time.Millisecond
	released := make(chan struct{})
	time.AfterFunc(held, func() { _ = os.Remove(lock); close(released) })
	defer func() { <-released }()
	start := time.Now()
	err := fetch()
	require.NoError(t, err, "another process's lock is not the remote out of reach")
	assert.GreaterOrEqual(t, time.Since(start), held, "it waited for the lock")
}
