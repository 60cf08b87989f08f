//go:build unix

package ledger

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFIFOLedgerDoesNotHang: a FIFO planted where a large ledger was (its
// layout memo still there) fails Get and Update at once instead of
// hanging them.
func TestFIFOLedgerDoesNotHang(t *testing.T) {
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	require.NoError(t, syscall.Unlink(s.Path(9)))
	require.NoError(t, syscall.Mkfifo(s.Path(9), 0o644))
	done := make(chan error, 2)
	go func() {
		_, err := s.Get("CLR-9-001")
		done <- err
	}()
	go func() {
		_, err := s.Update(context.Background(), 9, ask(s, "engineer", "architect", "Hang?"))
		done <- err
	}()
	for range 2 {
		select {
		case err := <-done:
			require.Error(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("a FIFO ledger hung the command")
		}
	}
}
