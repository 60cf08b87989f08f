package eventlog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWaitGrowth(t *testing.T) {
	l := EventLog{Path: filepath.Join(t.TempDir(), File)}
	ctx := context.Background()

	// nothing appended: it returns nil once d has passed
	start := time.Now()
	require.NoError(t, l.WaitGrowth(ctx, 0, 100*time.Millisecond))
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)

	// another writer appends (the log is created): it returns then
	done := make(chan error, 1)
	go func() { done <- l.WaitGrowth(ctx, 0, time.Minute) }()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, l.Append(Event{Type: "requested", ClarificationID: "CLR-1-001", IssueNumber: 1}))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the append was not seen")
	}

	// a size that differs already: at once
	size, err := l.Size()
	require.NoError(t, err)
	require.NoError(t, l.WaitGrowth(ctx, size-1, time.Minute))

	// cancelled: its context's error
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, l.WaitGrowth(cctx, size, time.Minute), context.Canceled)

	// a log that is replaced is seen too
	go func() { done <- l.WaitGrowth(ctx, size, time.Minute) }()
	time.Sleep(50 * time.Millisecond)
	tmp := l.Path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte("{}\n"), 0o644))
	require.NoError(t, os.Rename(tmp, l.Path))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the replaced log was not seen")
	}
}
