package ledger

import (
	"context"
	"encoding/json"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentx-cli/agentx/lock"
)

// Replicator keeps the ledgers in step with a copy elsewhere (remote mode:
// package internal/remote shares them through git refs). With one set
// (SetReplicator), Update hands it every change: Prefetch before the
// issue's lock is taken, then Apply under it, which makes the change and
// writes the ledger through the Locked file it is given. The store still
// locks, and every ledger is written by Locked.Write.
type Replicator interface {
	// Prefetch is called before the issue's lock is taken, for what may
	// be slow (a fetch of the shared ledger): it then holds up only this
	// command, not every other writer of the issue on this host. What it
	// returns is handed to Apply as it is.
	Prefetch(ctx context.Context, issue int) (any, error)
	// Apply makes the change fn to the ledger f holds locked, checks it
	// as Update does (Ledger.Change, Checkpoint), writes it (f.Write) and
	// returns the ledger as written.
	Apply(ctx context.Context, f *Locked, fn func(*Ledger) error, prefetched any) (*Ledger, error)
}

// SetReplicator makes Update go through r (nil: the ledgers are this
// machine's alone).
func (s *Store) SetReplicator(r Replicator) { s.rep = r }

// Replicator returns the Replicator set, or nil.
func (s *Store) Replicator() Replicator { return s.rep }

// Locked is an issue's ledger file held under the issue's lock: what a
// Replicator reads and writes it through.
type Locked struct {
	Issue int
	Path  string // the ledger file

	s    *Store
	lk   *lock.Lock
	kept bool // the Replicator kept the change in its outbox
}

// KeptInOutbox is the Replicator saying that the change it made through f
// is kept in its outbox (the remote out of reach): acknowledged, not yet
// shared. Store.Ask tells the askers whose questions it carried.
func (f *Locked) KeptInOutbox() { f.kept = true }

// Lock takes issue's lock. Update takes it for a change; a Replicator
// takes it itself only for a pass with no change of its own (bringing the
// local copy up to the shared one). Release it when done.
func (s *Store) Lock(ctx context.Context, issue int) (*Locked, error) {
	if err := ValidateIssue(issue); err != nil {
		return nil, err
	}
	path := s.Path(issue)
	lk, err := s.acquire(ctx, path)
	if err != nil {
		return nil, err
	}
	return &Locked{Issue: issue, Path: path, s: s, lk: lk}, nil
}

// Release gives the lock back.
func (f *Locked) Release() error { return f.lk.Release() }

// Aside gives the lock back while wait runs, then takes it again: for a
// write that waits on something other than the file (remote mode: its
// change merged on the remote), so that this host's other writers of the
// issue go ahead meanwhile. The file, and the state files kept beside it
// under its lock, may have changed: read them again. An error is the lock
// not taken back (f is then not held). A write that carries questions or
// changes handed to it gives the lock back too: their writers, woken, wait
// on its mark for its word (Store.Ask).
func (f *Locked) Aside(ctx context.Context, wait func()) error {
	if err := f.lk.Release(); err != nil {
		return err
	}
	wait()
	lk, err := f.s.acquire(ctx, f.Path)
	if err != nil {
		return err
	}
	f.lk = lk
	return nil
}

// Check reports whether the lock is still ours (nil: it is), for a write
// of another file that must happen under it.
func (f *Locked) Check() error { return f.lk.Check() }

// Read returns the ledger as the file now holds it, with its final
// records sealed (a missing file: an empty ledger).
func (f *Locked) Read() (*Ledger, error) { return readLedger(f.Path, f.Issue, true) }

// Checkpoint is a ledger's records as read: a change is checked against
// it (Check). The records of a ledger Update read through its layout memo
// are the memo's extents (read), which hold their ids and statuses as
// read: a checkpoint of 20,000 of them copies none (asRead).
type Checkpoint struct {
	read []extent
	recs []idStatus // the records after those of read
}

// len is how many records cp holds.
func (cp Checkpoint) len() int { return len(cp.read) + len(cp.recs) }

// rec is cp's i-th record.
func (cp Checkpoint) rec(i int) idStatus {
	if i < len(cp.read) {
		x := &cp.read[i]
		return idStatus{x.id, x.status}
	}
	return cp.recs[i-len(cp.read)]
}

// idStatus is a record's id and status, as read.
type idStatus struct {
	id     string
	status Status
}

// resolvedBy returns the places in l of the records resolved since cp
// (new ones resolved included).
func (cp Checkpoint) resolvedBy(l *Ledger) []int {
	var out []int
	var was map[string]Status
	for i, c := range l.Clarifications {
		if c.Status != Resolved {
			continue
		}
		var before Status
		if i < cp.len() && cp.rec(i).id == c.ID {
			before = cp.rec(i).status
		} else {
			if was == nil {
				was = make(map[string]Status, cp.len())
				for j := range cp.len() {
					r := cp.rec(j)
					was[r.id] = r.status
				}
			}
			before = was[c.ID]
		}
		if before != Resolved {
			out = append(out, i)
		}
	}
	return out
}

// Checkpoint returns l's records as they are now.
func (l *Ledger) Checkpoint() Checkpoint {
	out := make([]idStatus, len(l.Clarifications))
	for i, c := range l.Clarifications {
		out[i] = idStatus{c.ID, c.Status}
	}
	return Checkpoint{recs: out}
}

// Check is what every ledger a write produces must pass, l being cp's
// ledger after a change (name names it in errors): no record Find could
// not open, every status change along the table, nothing removed, the
// whole ledger valid.
func (cp Checkpoint) Check(name string, l *Ledger) error {
	if err := l.badRecord(name); err != nil {
		return err
	}
	decided, invalid, err := checkChanges(cp, l)
	if err != nil {
		return err
	}
	l.decided = decided
	if err := ValidateIssue(l.IssueNumber); err != nil {
		invalid = err // Validate's first check
	}
	if invalid != nil {
		return fmt.Errorf("ledger issue %d: %w", l.IssueNumber, invalid)
	}
	return nil
}

// Change runs fn on l, read from path, and checks what it made
// (Checkpoint.Check). fn's error is returned as it is, unless what fn saw
// (a record not found) came of a record that could not be decoded: then
// that record's *CorruptError.
func (l *Ledger) Change(path string, fn func(*Ledger) error) error {
	return l.change(path, l.Checkpoint(), fn)
}

// change is Change, cp being l's records as they are now.
func (l *Ledger) change(path string, cp Checkpoint, fn func(*Ledger) error) error {
	if err := fn(l); err != nil {
		if bad := l.badRecord(path); bad != nil {
			return bad
		}
		return err
	}
	return cp.Check(path, l)
}

// Undecodable is the error of a sealed record of l that Find could not
// decode, nil if none.
func (l *Ledger) Undecodable() error { return l.bad }

// DecodeIssue decodes data as issue's ledger the way Update reads a file:
// the final records sealed, the same integrity checks. name names it in
// errors.
func DecodeIssue(name string, issue int, data []byte) (*Ledger, error) {
	return decodeIssue(name, issue, data, true)
}

// SealedJSON returns the bytes of a record read sealed by DecodeIssue or
// Locked.Read, as read (nil for a record read whole).
func (c *Clarification) SealedJSON() []byte { return c.sealed }

// RecordJSON is a record's JSON as agentx writes it, whole (a sealed
// record is decoded first), for comparing records.
func RecordJSON(c *Clarification) (json.RawMessage, error) {
	if c.sealed != nil {
		var whole Clarification
		if err := jsonv2.Unmarshal(c.sealed, &whole, decodeOpts()); err != nil {
			return nil, err
		}
		c = &whole
	}
	return jsonv2.Marshal(c, encodeOpts())
}

// DecodeRecord decodes one record's JSON.
func DecodeRecord(raw json.RawMessage) (*Clarification, error) {
	var c Clarification
	if err := jsonv2.Unmarshal(raw, &c, decodeOpts()); err != nil {
		return nil, err
	}
	if c.Thread == nil {
		c.Thread = []ThreadEntry{}
	}
	return &c, nil
}
