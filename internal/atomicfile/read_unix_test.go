//go:build unix

package atomicfile

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadFileFIFO: a FIFO planted where a file should be fails the read
// at once instead of hanging the command.
func TestReadFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(p); done <- err }()
	select {
	case <-done: // an empty read or an error; either way, it returned
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile on a FIFO hung")
	}
}
