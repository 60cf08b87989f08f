package lock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/gofrs/flock"
)

// A Mark is a file a process holds a kernel lock on while other processes
// wait for its word: the holder of a hand-off (Handoff) marks the changes
// it takes, and gives the lock back while a remote merges them; their
// writers, woken meanwhile, wait on the mark instead (AwaitMark), and the
// kernel frees it when the holder ends, whether it said its word or died.
type Mark struct {
	path string
	fl   *flock.Flock
}

// NewMark makes the file path (it must not exist; a link there is never
// followed) and holds its lock.
func NewMark(path string) (*Mark, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY|noFollow, 0o644)
	if err != nil {
		return nil, fmt.Errorf("mark %s: %w", path, err)
	}
	_ = f.Close()
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY|noFollow))
	ok, err := fl.TryLock()
	if err == nil && !ok {
		err = errors.New("held by another process")
	}
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("mark %s: %w", path, err)
	}
	return &Mark{path: path, fl: fl}, nil
}

// Path is the mark's file.
func (m *Mark) Path() string { return m.path }

// Release removes the mark and lets its lock go: the processes waiting on
// it wake.
func (m *Mark) Release() error {
	err := os.Remove(m.path)
	if uerr := m.fl.Unlock(); err == nil {
		err = uerr
	}
	return err
}

// AwaitMark waits until no process holds the mark at path (released, its
// holder dead, or no such file), or ctx ends.
func AwaitMark(ctx context.Context, path string) error {
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY|noFollow))
	ok, err := fl.TryRLock()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("mark %s: %w", path, err)
	case ok:
		return fl.Unlock()
	}
	done := make(chan error, 1)
	go func() { done <- fl.RLock() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("mark %s: %w", path, err)
		}
		return fl.Unlock()
	case <-ctx.Done():
		abandon(fl, done)
		return ctx.Err()
	}
}
