package lock

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// awaitAsync runs AwaitMark in a goroutine.
func awaitAsync(ctx context.Context, path string) <-chan error {
	r := make(chan error, 1)
	go func() { r <- AwaitMark(ctx, path) }()
	return r
}

// TestMarkReleased: a waiter on a mark wakes when its holder lets it go,
// and not before; one that comes after, or on no mark at all, does not
// wait; a mark is made only where nothing is.
func TestMarkReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.mark")
	m, err := NewMark(path)
	require.NoError(t, err)
	_, err = NewMark(path)
	require.Error(t, err, "a mark where one is")
	r := awaitAsync(context.Background(), path)
	asleep(t, r, 100*time.Millisecond, "woke while the mark is held")
	require.NoError(t, m.Release())
	woken(t, r, "not woken by the release")
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "released: removed")
	require.NoError(t, AwaitMark(context.Background(), path), "no mark: no wait")
}

// TestMarkCancelled: a waiter's context ends its wait.
func TestMarkCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.mark")
	m, err := NewMark(path)
	require.NoError(t, err)
	defer m.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, AwaitMark(ctx, path), context.DeadlineExceeded)
}

// asleep fails t if r, a waiter on a mark, wakes within d.
func asleep(t *testing.T, r <-chan error, d time.Duration, why string) {
	t.Helper()
	select {
	case err := <-r:
		t.Fatalf("%s: %v", why, err)
	case <-time.After(d):
	}
}

// woken fails t unless r, a waiter on a mark, wakes (without an error)
// within 5 s.
func woken(t *testing.T, r <-chan error, why string) {
	t.Helper()
	select {
	case err := <-r:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal(why)
	}
}
