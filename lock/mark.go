package lock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"

	"github.com/gofrs/flock"
)

// A Mark is a file a process holds a kernel lock on while other processes
// wait for its word: the holder of a hand-off (Handoff) marks the changes
// it takes, and gives the lock back while a remote merges them; their
// writers, woken meanwhile, wait on the mark instead (AwaitMark), and the
// kernel frees it when the holder ends, whether it said its word or died.
type Mark struct {
	path string
	f    *os.File     // the file whose lock is held (where a child process may inherit it: holdMark)
	fl   *flock.Flock // elsewhere, the lock
}

// NewMark makes the file path (it must not exist; a link there is never
// followed) and holds its lock.
func NewMark(path string) (*Mark, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY|noFollow, 0o644)
	if err != nil {
		return nil, fmt.Errorf("mark %s: %w", path, err)
	}
	m := &Mark{path: path}
	if err := m.hold(f); err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("mark %s: %w", path, err)
	}
	return m, nil
}

// errHeld: another process holds the mark.
var errHeld = errors.New("held by another process")

// Path is the mark's file.
func (m *Mark) Path() string { return m.path }

// Release removes the mark and lets its lock go: the processes waiting on
// it wake.
func (m *Mark) Release() error {
	err := os.Remove(m.path)
	var uerr error
	if m.f != nil {
		uerr = m.letGo()
	} else {
		uerr = m.fl.Unlock()
	}
	if err == nil {
		err = uerr
	}
	return err
}

// Inheritance is the marks a process holds whose locks the child
// processes it starts inherit (Files: their exec.Cmd.ExtraFiles), so that
// a mark stays held until the last of them ends: a holder killed while
// its git push runs leaves that push running, and its waiters wait for
// it, not only for the holder. An explicit Release lets the mark go at
// once, whatever the children hold. Where a lock cannot be handed to a
// child (not a Unix system), none is.
type Inheritance struct {
	mu    sync.Mutex
	files []*os.File
}

type inheritanceKey struct{}

// WithInheritance returns ctx carrying in, for the child processes
// started under it.
func WithInheritance(ctx context.Context, in *Inheritance) context.Context {
	return context.WithValue(ctx, inheritanceKey{}, in)
}

// Add has the child processes started from now on inherit m's lock.
func (in *Inheritance) Add(m *Mark) {
	if in == nil || m == nil || m.f == nil {
		return
	}
	in.mu.Lock()
	in.files = append(in.files, m.f)
	in.mu.Unlock()
}

// InheritedFiles is what a child process started under ctx inherits (for
// its exec.Cmd.ExtraFiles): the files of the marks Added to ctx's
// Inheritance, nil when none.
func InheritedFiles(ctx context.Context) []*os.File {
	in, _ := ctx.Value(inheritanceKey{}).(*Inheritance)
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	// a mark released since is closed (Fd -1): no longer handed on
	return slices.DeleteFunc(slices.Clone(in.files), func(f *os.File) bool { return f.Fd() == ^uintptr(0) })
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
