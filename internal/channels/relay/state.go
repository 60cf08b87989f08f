package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// File is one of a mode's state files under .agentx/state/MODE/: local and
// advisory, read without a lock, written atomically (never through a
// symbolic link) under its lock, without fsync. Losing one costs a re-read,
// never a duplicate message: the ledger records what is posted, and what
// was taken.
type File struct {
	Path string
	What string // how errors name it: "github state"
}

// FileIn is file name of mode's state directory (dir: .agentx/state).
func FileIn(dir, mode, name string) File {
	return File{Path: filepath.Join(dir, mode, name), What: mode + " state"}
}

// Read decodes the file into v without a lock; a missing file leaves v.
func (f File) Read(v any) error {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", f.What, f.Path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &ledger.CorruptError{Path: f.Path, Err: err}
	}
	return nil
}

// ErrBusy is another agentx process doing the same outside work right
// now: this one leaves it to that one.
var ErrBusy = errors.New("another agentx process is doing this work now")

// lockWait is how long a process waits for another doing the same work:
// not long; the other one does it.
const lockWait = 25 * time.Millisecond

// Update takes the file's lock (or fails with ErrBusy, unless wait), reads
// it into v, runs fn and writes v back, whatever fn returned.
func (f File) Update(ctx context.Context, v any, wait bool, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return fmt.Errorf("%s: %w", f.What, err)
	}
	opts := lock.Options{Wait: lockWait}
	if wait {
		opts.Wait = 0 // the default budget
	}
	lk, err := lock.Acquire(ctx, f.Path, opts)
	if err != nil {
		var te *lock.TimeoutError
		if errors.As(err, &te) && !wait {
			return ErrBusy
		}
		return err
	}
	defer func() { _ = lk.Release() }()
	if err := f.Read(v); err != nil {
		return err
	}
	ferr := fn()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s %s: encode: %w", f.What, f.Path, err)
	}
	err = atomicfile.WriteWith(f.Path, append(b, '\n'), 0o644, atomicfile.Options{BeforeRename: func(os.FileInfo) error { return lk.Check() }})
	return errors.Join(ferr, err)
}

// Waiter is an error from an outside service saying not to call it again
// before a time (a rate limit, a Retry-After).
type Waiter interface {
	error
	WaitUntil() time.Time
}

// WaitOf is the time err says to wait until, if it is (or wraps) a Waiter.
func WaitOf(err error) (time.Time, bool) {
	var w Waiter
	if errors.As(err, &w) {
		return w.WaitUntil(), true
	}
	return time.Time{}, false
}
