package ghmirror

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

// The files GitHub mode keeps, in .agentx/state/github/. Both are local
// and advisory: written atomically (never through a symbolic link) under
// their lock, without fsync; losing one costs a re-read, never a duplicate
// comment (the ledger records what is posted, and what was taken).
const (
	Dir         = "github"
	OutboxFile  = "outbox.json"
	InboundFile = "inbound.json"
)

// Outbox is what the mirror still owes GitHub, and where it got to.
type Outbox struct {
	// Offset is how far the event log has been read: every change before
	// it is mirrored or queued in Issues.
	Offset int64 `json:"offset"`
	// Issues are the issues whose mirror is behind, by number.
	Issues map[string]*Behind `json:"issues,omitempty"`
	// Labels are the status labels agentx set on each issue, so that
	// only a change costs a call, and agentx removes only its own.
	Labels map[string][]string `json:"labels,omitempty"`
	// WaitUntil is when GitHub allows calls again after a rate limit.
	WaitUntil *ledger.Time `json:"waitUntil,omitempty"`
	// Rate is the rate limit GitHub last reported.
	Rate    *Rate        `json:"rate,omitempty"`
	Updated *ledger.Time `json:"updated,omitempty"`
}

// Behind is one issue whose mirror is behind.
type Behind struct {
	Since    ledger.Time  `json:"since"`              // queued since
	Attempts int          `json:"attempts,omitempty"` // failed syncs so far
	RetryAt  *ledger.Time `json:"retryAt,omitempty"`  // not before
	Error    string       `json:"error,omitempty"`    // why the last sync failed
}

// Rate is a rate limit as GitHub reported it.
type Rate struct {
	Limit     int         `json:"limit"`
	Remaining int         `json:"remaining"`
	Reset     ledger.Time `json:"reset"`
}

// Inbound is where reading comments got to.
type Inbound struct {
	// Since is the update time of the newest comment read; the next read
	// asks for comments updated since then.
	Since *ledger.Time `json:"since,omitempty"`
	// ETag is GitHub's tag of the last answer to that read, for a
	// conditional read that costs nothing when nothing changed.
	ETag string `json:"etag,omitempty"`
	// Seen are the comments updated at Since already handled (GitHub's
	// since is inclusive).
	Seen []int64 `json:"seen,omitempty"`
	// Polled is when comments were last read: the interval counts from
	// there.
	Polled    *ledger.Time `json:"polled,omitempty"`
	WaitUntil *ledger.Time `json:"waitUntil,omitempty"`
	Error     string       `json:"error,omitempty"` // why the last read failed
}

// stateFile is one of the files above, read and written under its lock.
type stateFile struct {
	path string
}

func (m *Mirror) file(name string) stateFile {
	return stateFile{path: filepath.Join(m.Hub.Store.Dir(), Dir, name)}
}

// read decodes the file into v without a lock; a missing file leaves v.
func (f stateFile) read(v any) error {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("github state %s: %w", f.path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &ledger.CorruptError{Path: f.path, Err: err}
	}
	return nil
}

// ErrBusy is another agentx process doing the same GitHub work right now:
// this one leaves it to that one.
var ErrBusy = errors.New("another agentx process is syncing with GitHub")

// lockWait is how long a process waits for another doing the same work:
// not long; the other one does it.
const lockWait = 25 * time.Millisecond

// update takes the file's lock (or fails with ErrBusy, unless wait), reads
// it into v, runs fn and writes v back.
func (f stateFile) update(ctx context.Context, v any, wait bool, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return fmt.Errorf("github state: %w", err)
	}
	opts := lock.Options{Wait: lockWait}
	if wait {
		opts.Wait = 0 // the default budget
	}
	lk, err := lock.Acquire(ctx, f.path, opts)
	if err != nil {
		var te *lock.TimeoutError
		if errors.As(err, &te) && !wait {
			return ErrBusy
		}
		return err
	}
	defer func() { _ = lk.Release() }()
	if err := f.read(v); err != nil {
		return err
	}
	ferr := fn()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("github state %s: encode: %w", f.path, err)
	}
	err = atomicfile.WriteWith(f.path, append(b, '\n'), 0o644, atomicfile.Options{BeforeRename: func(os.FileInfo) error { return lk.Check() }})
	return errors.Join(ferr, err)
}
