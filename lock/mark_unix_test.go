//go:build unix

package lock

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMarkHolderKilled: a holder process SIGKILLed while it holds its
// mark wakes its waiters (the kernel frees the lock); the mark's file is
// left, and a waiter after that does not wait.
func TestMarkHolderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	path, ready := filepath.Join(dir, "h.mark"), filepath.Join(dir, "ready")
	cmd, out := helper(t, "mark", "AGENTX_LOCK_DATA="+path, "AGENTX_LOCK_READY="+ready)
	require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 30*time.Second, 5*time.Millisecond, "helper: %s", out)
	r := awaitAsync(context.Background(), path)
	select {
	case err := <-r:
		t.Fatalf("woke while the holder lives: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	select {
	case err := <-r:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("not woken by the holder's death")
	}
	_, err := os.Stat(path)
	require.NoError(t, err, "a dead holder's mark is left")
	require.NoError(t, AwaitMark(context.Background(), path))
}
