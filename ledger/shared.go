package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/lock"
)

// Remote is a shared copy of the ledgers, on another machine (git refs on
// the repository's remote, package remote). With one set (SetRemote),
// Update is an optimistic transaction on top of the local one: under the
// issue's lock it fetches the shared ledger, runs the change on it,
// publishes the result on top of the version fetched, and on a refusal
// (another host published first) fetches and runs the change again.
type Remote interface {
	// Fetch returns the shared ledger of issue as it is now. An error
	// wrapping ErrOffline means the remote could not be reached.
	Fetch(ctx context.Context, issue int) (Snapshot, error)
	// Push publishes commits, in order, on top of base. An error wrapping
	// ErrMoved means the shared ledger is no longer base (nothing was
	// published); ErrOffline that the remote could not be reached.
	Push(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error)
	// Attempts is how many times one write is tried against a remote that
	// keeps moving; then it goes to the outbox.
	Attempts() int
	// Name names the shared ledger of issue in messages (origin
	// refs/agentx/clarifications/issue-42).
	Name(issue int) string
}

// Snapshot is one version of an issue's shared ledger.
type Snapshot struct {
	Version string // its id (a commit); "" when the remote has no ledger for the issue
	Data    []byte // the ledger file's content at that version
}

// Commit is one change published: the ledger after it, and what it was.
type Commit struct {
	Data    []byte
	Message string
}

// BusyError is a write the remote refused every time it was tried: other
// hosts kept publishing first. Nothing was written; run it again.
type BusyError struct {
	Remote   string
	Attempts int
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s: other hosts published first %d times in a row: nothing written", e.Remote, e.Attempts)
}

// Hint says what to do.
func (e *BusyError) Hint() string {
	return "run it again; [remote] attempts in .agentx/config.toml tries more times"
}

var (
	// ErrOffline is a remote that could not be reached in time.
	ErrOffline = errors.New("the remote could not be reached")
	// ErrMoved is a push refused because the remote moved on.
	ErrMoved = errors.New("the remote moved on since it was fetched")
)

// SupersededError is a change that applied to the ledger its caller had
// seen but no longer applies to the shared one: another host changed the
// same clarification first. Winner is the shared ledger as it now is (also
// the local copy from now on); Changed the clarifications that differ.
type SupersededError struct {
	Issue   int
	Changed []string
	Winner  *Ledger
	Err     error // why the change no longer applies
}

func (e *SupersededError) Error() string {
	var now []string
	for _, id := range e.Changed {
		if c := e.Current(id); c != nil {
			s := fmt.Sprintf("%s is %s", id, c.Status)
			if n := len(c.Thread); n > 0 {
				s += fmt.Sprintf(", last %s by %s", c.Thread[n-1].Type, c.Thread[n-1].From)
			}
			now = append(now, s)
		}
	}
	return fmt.Sprintf("superseded: another host changed %s first (%s): %v", strings.Join(e.Changed, ", "), strings.Join(now, "; "), e.Err)
}

// Hint says where to read what the other host did.
func (e *SupersededError) Hint() string {
	if len(e.Changed) == 0 {
		return ""
	}
	return fmt.Sprintf("the local copy is now the shared one: agentx clarify show %s reads what the other host did", e.Changed[0])
}

// Current returns clarification id as the winner left it (nil: none).
func (e *SupersededError) Current(id string) *Clarification {
	if e.Winner == nil {
		return nil
	}
	for _, c := range e.Winner.Clarifications {
		if c.ID == id {
			if c.sealed != nil {
				if whole, err := decodeRecord(c.sealed); err == nil {
					return whole
				}
			}
			return c
		}
	}
	return nil
}

func (e *SupersededError) Unwrap() error { return e.Err }

// shared is the remote side of a Store.
type shared struct {
	remote  Remote
	offline bool // --offline: never reach the remote; writes go to the outbox

	mu       sync.Mutex
	unsynced []string // what this process's writes left in the outbox
	notes    []string // what went wrong after a change was acknowledged (Notes)

	onPulled func(issue int, changes []Pulled) // told of changes made elsewhere (OnPulled)
}

// SetRemote makes Update share the ledgers through r (nil: one machine).
func (s *Store) SetRemote(r Remote) { s.remote = r }

// Remote returns the remote the ledgers are shared through, or nil.
func (s *Store) Remote() Remote { return s.remote }

// SetOffline keeps the store off the remote: reads are the local copy and
// writes go to the outbox.
func (s *Store) SetOffline(off bool) { s.offline = off }

// Offline reports whether the store stays off the remote.
func (s *Store) Offline() bool { return s.offline }

// Unsynced lists, in order, the changes this process recorded but could
// not publish: they are in the outbox (SyncState.Pending).
func (s *Store) Unsynced() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unsynced)
}

// Notes lists what went wrong after a change of this process was
// acknowledged (published, or durable in the outbox): the change stands,
// and the command that made it succeeded, so that no one makes it twice;
// the local copy it could not update is brought up to date by the next
// command.
func (s *Store) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.notes)
}

// note adds to Notes.
func (s *Store) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// Fetched is what a fetch made before the issue's lock was taken found:
// the shared ledger, or that the remote was out of reach.
type Fetched struct {
	Snapshot *Snapshot
	Offline  error // an ErrOffline
}

// prefetch fetches issue's shared ledger, in remote mode, before its lock
// is taken: a remote that is slow to answer then holds up only this
// command, not every other writer of the issue on this host. Under the lock
// the snapshot is used if it is no older than what the local copy
// reflects (another process may have settled a newer one meanwhile), and a
// push it is too old for is refused by the remote and tried again. nil
// when there is nothing to fetch (no remote, or --offline).
func (s *Store) prefetch(ctx context.Context, issue int) (*Fetched, error) {
	if s.remote == nil || s.offline {
		return nil, nil
	}
	snap, err := s.remote.Fetch(ctx, issue)
	switch {
	case errors.Is(err, ErrOffline):
		return &Fetched{Offline: err}, nil
	case err != nil:
		return nil, err
	}
	return &Fetched{Snapshot: &snap}, nil
}

// SyncDir is the state subdirectory of what the remote mode keeps locally.
const SyncDir = "remote"

// SyncState is issue N's local remote state (remote/issue-N.json): which
// shared version the local ledger copy reflects, the outbox of changes
// made while the remote was out of reach, and what became of delivered
// ones that could not be delivered as made.
type SyncState struct {
	Head     string    `json:"head"`
	Pending  []Queued  `json:"pending"`
	Outcomes []Outcome `json:"outcomes,omitempty"`
}

// Queued is one change waiting in the outbox: each record it changed, as
// it was before and after (Before null: the change created it).
type Queued struct {
	Message string         `json:"message"`
	At      Time           `json:"at"`
	Why     string         `json:"why,omitempty"` // why it was not published
	Records []QueuedRecord `json:"records"`
}

// QueuedRecord is one record a pending change made or changed.
type QueuedRecord struct {
	ID     string          `json:"id"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// Outcome is what became of a queued change that was not delivered as
// made: OutcomeRenumbered (its new clarification took another id, As, as
// another host had taken its own) or OutcomeSuperseded (another host
// changed the clarification first; Winner is the record as it was then).
type Outcome struct {
	Outcome string          `json:"outcome"`
	ID      string          `json:"id"`
	As      string          `json:"as,omitempty"`
	Message string          `json:"message"`
	At      Time            `json:"at"`
	Winner  json.RawMessage `json:"winner,omitempty"`
}

// Outcomes of queued changes.
const (
	OutcomeRenumbered = "renumbered"
	OutcomeSuperseded = "superseded"
)

// maxOutcomes is how many outcomes a sync state keeps.
const maxOutcomes = 100

// SyncPath is issue's sync state file.
func (s *Store) SyncPath(issue int) string { return filepath.Join(s.dir, syncFile(issue)) }

// syncFile is issue's sync state file, relative to the state directory.
func syncFile(issue int) string { return filepath.Join(SyncDir, "issue-"+strconv.Itoa(issue)+".json") }

// ReadSync returns issue's sync state (empty when there is none).
func (s *Store) ReadSync(issue int) (*SyncState, error) {
	var st SyncState
	if err := s.ReadRecord(syncFile(issue), &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// writeSync writes issue's sync state durably: its outbox holds changes
// that were acknowledged.
func (s *Store) writeSync(issue int, lk *lock.Lock, st *SyncState) error {
	if len(st.Outcomes) > maxOutcomes {
		st.Outcomes = st.Outcomes[len(st.Outcomes)-maxOutcomes:]
	}
	if st.Pending == nil {
		st.Pending = []Queued{}
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	path := s.SyncPath(issue)
	if err := os.MkdirAll(filepath.Join(s.dir, SyncDir, OutboxDir), 0o755); err != nil {
		return err
	}
	// The outbox marker lists the issues with something pending, so that
	// finding them costs a directory listing. It is set before the state
	// holds something pending and cleared after it holds nothing, so that a
	// crash between the two leaves at worst a marker with nothing behind it
	// (harmless), never changes no marker points to.
	mark := filepath.Join(s.dir, SyncDir, OutboxDir, filepath.Base(path))
	if len(st.Pending) > 0 {
		if err := atomicfile.WriteWith(mark, []byte(strconv.Itoa(len(st.Pending))+"\n"), perm, atomicfile.Options{Durable: true}); err != nil {
			return err
		}
	}
	if err := atomicfile.WriteWith(path, append(data, '\n'), perm, atomicfile.Options{Durable: true, BeforeRename: func(os.FileInfo) error { return lk.Check() }}); err != nil {
		return err
	}
	if len(st.Pending) == 0 {
		if err := os.Remove(mark); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// OutboxDir, under SyncDir, marks the issues whose outbox holds changes.
const OutboxDir = "outbox"

// OutboxIssues lists the issues whose outbox holds changes, ascending.
func (s *Store) OutboxIssues() ([]int, error) {
	return s.IssuesWithFile(filepath.Join(SyncDir, OutboxDir))
}

// Sync brings issue's local copy up to the shared ledger and delivers what
// its outbox holds. With snap (from a fetch of every issue) it is used as
// the shared ledger instead of fetching this one. It reports whether the
// remote was reached.
func (s *Store) Sync(ctx context.Context, issue int, snap *Snapshot) (bool, error) {
	if s.remote == nil {
		return false, errors.New("no remote is configured")
	}
	if err := ValidateIssue(issue); err != nil {
		return false, err
	}
	if s.offline {
		return false, nil
	}
	if snap == nil {
		got, err := s.prefetch(ctx, issue)
		if err != nil {
			return false, err
		}
		if got.Offline != nil {
			return false, nil
		}
		snap = got.Snapshot
	}
	path := s.Path(issue)
	lk, err := s.acquire(ctx, path)
	if err != nil {
		return false, err
	}
	defer func() { _ = lk.Release() }()
	if _, err := s.updateShared(ctx, issue, path, lk, nil, &Fetched{Snapshot: snap}); err != nil {
		return false, err
	}
	// reached: the remote answered and holds what the outbox held
	st, err := s.ReadSync(issue)
	if err != nil {
		return false, err
	}
	return len(st.Pending) == 0, nil
}

// updateShared is Update with a remote: the optimistic transaction.
func (s *Store) updateShared(ctx context.Context, issue int, path string, lk *lock.Lock, fn func(*Ledger) error, pre *Fetched) (*Ledger, error) {
	st, err := s.ReadSync(issue)
	if err != nil {
		return nil, err
	}
	if s.offline {
		return s.updateOffline(issue, path, lk, fn, st, "--offline")
	}
	if pre != nil && pre.Offline != nil {
		return s.updateOffline(issue, path, lk, fn, st, pre.Offline.Error())
	}
	var given *Snapshot
	if pre != nil {
		given = pre.Snapshot
	}
	var snap Snapshot
	if given != nil && !s.newer(ctx, *given, st.Head) {
		given = nil // read before another process settled a newer one: fetch
	}
	if given != nil {
		snap = *given
	} else if snap, err = s.remote.Fetch(ctx, issue); err != nil {
		if errors.Is(err, ErrOffline) {
			return s.updateOffline(issue, path, lk, fn, st, err.Error())
		}
		return nil, err
	}
	attempts := max(s.remote.Attempts(), 1)
	for attempt := 1; ; attempt++ {
		l, commits, outcomes, err := s.prepare(issue, path, snap, st)
		if err != nil {
			return nil, err
		}
		before := statusesOf(l)
		var beforeRec map[string]*recState
		if fn != nil {
			beforeRec = recStates(l)
			if ferr := fn(l); ferr != nil {
				return nil, s.refused(ctx, issue, path, lk, fn, ferr, snap, st, attempt)
			}
		}
		if err := checkWrite(s.remote.Name(issue), before, l); err != nil {
			return nil, err
		}
		if fn != nil {
			if err := s.renumberedAway(ctx, issue, path, lk, beforeRec, l, outcomes, snap); err != nil {
				return nil, err
			}
		}
		// final is l encoded, when the last commit is exactly that: the
		// local copy is then written from it, not encoded again
		var final []byte
		if len(commits) > 0 && fn == nil {
			final = commits[len(commits)-1].Data
		}
		if fn != nil {
			if msg := changeMessage(beforeRec, l); msg != "" {
				data, err := Encode(l)
				if err != nil {
					return nil, err
				}
				commits = append(commits, Commit{Data: data, Message: msg})
				final = data
			}
		}
		if len(commits) == 0 {
			if snap.Version != st.Head || given != nil || len(outcomes) > 0 {
				if err := s.settle(ctx, issue, path, lk, l, nil, snap, snap.Version, st, outcomes); err != nil {
					return nil, err
				}
			}
			return l, nil
		}
		pushed, err := s.remote.Push(ctx, issue, snap, commits)
		switch {
		case err == nil:
			if err := s.settle(ctx, issue, path, lk, l, final, snap, pushed.Version, st, outcomes); err != nil {
				// Published: the change stands, and failing now would have
				// it made twice.
				s.note("the change to issue #%d is on %s, but the local copy was not updated: %v; the next command brings it up to date", issue, s.remote.Name(issue), err)
			}
			return l, nil
		case errors.Is(err, ErrMoved) && attempt < attempts:
			if err := sleepJitter(ctx, attempt); err != nil {
				return nil, err
			}
			if snap, err = s.remote.Fetch(ctx, issue); err != nil {
				if errors.Is(err, ErrOffline) {
					return s.updateOffline(issue, path, lk, fn, st, err.Error())
				}
				return nil, err
			}
		case errors.Is(err, ErrMoved):
			return nil, &BusyError{Remote: s.remote.Name(issue), Attempts: attempt}
		case errors.Is(err, ErrOffline):
			return s.updateOffline(issue, path, lk, fn, st, err.Error())
		default:
			return nil, err
		}
	}
}

// renumberedAway refuses a change made to an id the outbox has just given
// up (another host had taken it; the queued record it meant is delivered
// under another id): it would change the other host's record.
func (s *Store) renumberedAway(ctx context.Context, issue int, path string, lk *lock.Lock, before map[string]*recState, l *Ledger, outcomes []Outcome, snap Snapshot) error {
	for _, o := range outcomes {
		if o.Outcome != OutcomeRenumbered {
			continue
		}
		c := l.Find(o.ID)
		if c == nil {
			continue
		}
		if was := before[o.ID].whole(); was != nil {
			if b, err := recordBytes(c); err == nil && bytes.Equal(b, was.raw) {
				continue
			}
		}
		winner, err := s.updateShared(ctx, issue, path, lk, nil, &Fetched{Snapshot: &snap})
		if err != nil {
			return err
		}
		return &SupersededError{Issue: issue, Changed: []string{o.ID}, Winner: winner,
			Err: fmt.Errorf("%s was given while the remote was out of reach and another host had taken it: that question is now %s; run the command again on %s", o.ID, o.As, o.As)}
	}
	return nil
}

// sleepJitter waits before attempt+1: 10 ms doubling up to 640 ms, half of
// it random, so that hosts that collided do not collide again.
func sleepJitter(ctx context.Context, attempt int) error {
	d := 10 * time.Millisecond << min(attempt-1, 6)
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// settle makes l, the shared ledger at version, the local copy, and
// records that the outbox is delivered. base is the shared version l was
// made on: what it changed since st.Head was made elsewhere (tellPulled).
func (s *Store) settle(ctx context.Context, issue int, path string, lk *lock.Lock, l *Ledger, encoded []byte, base Snapshot, version string, st *SyncState, outcomes []Outcome) error {
	if err := s.keepUnshared(issue, path, st); err != nil {
		return err
	}
	s.tellPulled(ctx, issue, path, base, st)
	if err := s.writeLedgerFile(issue, path, lk, l, encoded); err != nil {
		return err
	}
	st.Head, st.Pending = version, nil
	st.Outcomes = append(st.Outcomes, outcomes...)
	return s.writeSync(issue, lk, st)
}

// keepUnshared keeps a copy of a ledger written before the remote mode
// (never synced, nothing pending) that is about to be replaced by the
// shared one: issue-N.json.local, once.
func (s *Store) keepUnshared(issue int, path string, st *SyncState) error {
	if st.Head != "" || len(st.Pending) > 0 {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil // nothing to keep
	}
	keep := path + ".local"
	if _, err := os.Lstat(keep); err == nil {
		return nil
	}
	return atomicfile.WriteWith(keep, data, perm, atomicfile.Options{Durable: true})
}

// prepare decodes the shared ledger of snap and replays the outbox on it:
// the ledger the change runs on, the commits the replay made, and what
// became of the queued changes that could not be delivered as made.
func (s *Store) prepare(issue int, path string, snap Snapshot, st *SyncState) (*Ledger, []Commit, []Outcome, error) {
	if snap.Version == "" {
		// The remote has no ledger of the issue: the local copy, with what
		// is queued, is its first version.
		l, err := readLedger(path, issue, true)
		if err != nil {
			return nil, nil, nil, err
		}
		var commits []Commit
		if len(l.Clarifications) > 0 {
			data, err := Encode(l)
			if err != nil {
				return nil, nil, nil, err
			}
			commits = append(commits, Commit{Data: data, Message: fmt.Sprintf("issue-%d: the ledger as it was kept locally", issue)})
		}
		return l, commits, nil, nil
	}
	// The shared ledger is as untrusted as any file: the same decoder and
	// integrity checks as a local one.
	l, err := decodeIssue(s.remote.Name(issue), issue, snap.Data, true)
	if err != nil {
		return nil, nil, nil, err
	}
	var commits []Commit
	var outcomes []Outcome
	for _, p := range st.Pending {
		applied, outs, err := replay(l, p, s.now())
		for _, o := range outs {
			if o.Outcome == OutcomeRenumbered {
				p.Message = strings.ReplaceAll(p.Message, o.ID, o.As)
			}
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: outbox of issue %d: %w", s.SyncPath(issue), issue, err)
		}
		outcomes = append(outcomes, outs...)
		if applied {
			data, err := Encode(l)
			if err != nil {
				return nil, nil, nil, err
			}
			commits = append(commits, Commit{Data: data, Message: p.Message})
		}
	}
	return l, commits, outcomes, nil
}

// replay applies one queued change to l. A record it made is added with
// the next id (renumbered if that is not its own); a record it changed is
// replaced if l still holds it as the change found it; if any record moved
// on meanwhile, the whole change is superseded and nothing of it applies.
// A change already in l (delivered by a process that died before it could
// say so) is not applied twice.
func replay(l *Ledger, p Queued, now time.Time) (bool, []Outcome, error) {
	type step struct{ cur, after *Clarification }
	var steps []step
	var outs []Outcome
	for _, r := range p.Records {
		after, err := decodeRecord(r.After)
		if err != nil {
			return false, nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		cur := l.Find(r.ID)
		if l.bad != nil {
			return false, nil, l.bad
		}
		switch {
		case cur != nil && sameRecord(cur, r.After):
			continue // delivered already
		case len(r.Before) == 0 || string(r.Before) == "null":
			steps = append(steps, step{after: after})
		case cur != nil && sameRecord(cur, r.Before):
			steps = append(steps, step{cur: cur, after: after})
		default:
			winner := json.RawMessage("null")
			if cur != nil {
				if b, err := recordBytes(cur); err == nil {
					winner = b
				}
			}
			return false, []Outcome{{Outcome: OutcomeSuperseded, ID: r.ID, Message: p.Message, At: T(now), Winner: winner}}, nil
		}
	}
	for _, st := range steps {
		if st.cur != nil {
			*st.cur = *st.after
			continue
		}
		if id := l.NextID(); st.after.ID != id {
			outs = append(outs, Outcome{Outcome: OutcomeRenumbered, ID: st.after.ID, As: id, Message: p.Message, At: T(now)})
			st.after.ID = id
		}
		l.Clarifications = append(l.Clarifications, st.after)
	}
	return len(steps) > 0, outs, nil
}

// updateOffline is a write the remote did not take (out of reach, or
// moving too fast): the change is made on the local copy and kept in the
// outbox, to be published by the next command that reaches the remote.
func (s *Store) updateOffline(issue int, path string, lk *lock.Lock, fn func(*Ledger) error, st *SyncState, why string) (*Ledger, error) {
	l, err := readLedger(path, issue, true)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return l, nil
	}
	before := statusesOf(l)
	beforeRec := recStates(l)
	if err := fn(l); err != nil {
		if bad := l.badRecord(path); bad != nil {
			return nil, bad // what fn saw (a record not found) came of it
		}
		return nil, err
	}
	if err := checkWrite(path, before, l); err != nil {
		return nil, err
	}
	msg := changeMessage(beforeRec, l)
	if msg == "" {
		return l, nil
	}
	p := Queued{Message: msg, At: T(s.now()), Why: why}
	for _, c := range l.Clarifications {
		if c.sealed != nil {
			continue
		}
		after, err := recordBytes(c)
		if err != nil {
			return nil, err
		}
		was, existed := beforeRec[c.ID]
		var raw json.RawMessage
		if existed {
			raw = was.whole().raw
		}
		if existed && bytes.Equal(raw, after) {
			continue
		}
		p.Records = append(p.Records, QueuedRecord{ID: c.ID, Before: raw, After: after})
	}
	st.Pending = append(st.Pending, p)
	// The outbox first: once it is durable the change is acknowledged.
	if err := s.writeSync(issue, lk, st); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.unsynced = append(s.unsynced, msg)
	s.mu.Unlock()
	if err := s.writeLedgerFile(issue, path, lk, l, nil); err != nil {
		s.note("the change to issue #%d is in the outbox, but the local copy was not updated: %v; the next command that reaches the remote brings it up to date", issue, err)
	}
	return l, nil
}

// refused turns the error of a change that did not apply to the shared
// ledger into a SupersededError when it did apply to what its caller had
// seen (the local copy, or the version an earlier attempt fetched): that
// is, another host got there first. The shared ledger becomes the local
// copy either way, and what the outbox held is delivered.
func (s *Store) refused(ctx context.Context, issue int, path string, lk *lock.Lock, fn func(*Ledger) error, ferr error, snap Snapshot, st *SyncState, attempt int) error {
	if attempt == 1 && snap.Version == st.Head && len(st.Pending) == 0 {
		return ferr // it ran on what its caller had seen
	}
	var local *Ledger
	if l, err := readLedger(path, issue, true); err == nil && l.bad == nil {
		local = l
	}
	// Deliver the outbox and refresh the local copy, without the change.
	winner, err := s.updateShared(ctx, issue, path, lk, nil, &Fetched{Snapshot: &snap})
	if err != nil || local == nil {
		return ferr
	}
	localRec := recStates(local)
	if fn(local) != nil {
		return ferr
	}
	var changed []string
	for _, c := range winner.Clarifications {
		was, ok := localRec[c.ID]
		if !ok || c.sealed != nil && was.status != c.Status {
			changed = append(changed, c.ID)
			continue
		}
		if c.sealed == nil {
			if b, err := recordBytes(c); err == nil && !bytes.Equal(b, was.whole().raw) {
				changed = append(changed, c.ID)
			}
		}
	}
	if len(changed) == 0 {
		return ferr
	}
	return &SupersededError{Issue: issue, Changed: changed, Winner: winner, Err: ferr}
}

// recState is a record as it was before a change.
type recState struct {
	status Status
	thread int
	raw    json.RawMessage // its JSON as agentx writes it (a sealed record's: see whole)
	sealed json.RawMessage // a sealed record's bytes as read
}

// whole fills in what a sealed record held (its thread, its JSON), decoded
// as Find would decode it, for a record the change opened: only then is it
// decoded, so a write that opens no closed record decodes none.
func (r *recState) whole() *recState {
	if r != nil && r.sealed != nil && r.raw == nil {
		c := &Clarification{sealed: r.sealed}
		if c.unseal() == nil {
			r.thread = len(c.Thread)
			r.raw, _ = recordBytes(c)
		}
	}
	return r
}

func statusesOf(l *Ledger) []idStatus {
	out := make([]idStatus, len(l.Clarifications))
	for i, c := range l.Clarifications {
		out[i] = idStatus{c.ID, c.Status}
	}
	return out
}

// idStatus is a record's id and status, as read.
type idStatus struct {
	id     string
	status Status
}

func recStates(l *Ledger) map[string]*recState {
	m := make(map[string]*recState, len(l.Clarifications))
	for _, c := range l.Clarifications {
		r := &recState{status: c.Status, thread: len(c.Thread), sealed: c.sealed}
		if c.sealed == nil {
			r.raw, _ = recordBytes(c)
		}
		m[c.ID] = r
	}
	return m
}

// changeMessage names what a change did, for a commit message and the outbox:
// "CLR-42-001 answered by architect", one phrase per record changed; ""
// when it changed nothing.
func changeMessage(before map[string]*recState, l *Ledger) string {
	var out []string
	for _, c := range l.Clarifications {
		if c.sealed != nil {
			continue
		}
		was, existed := before[c.ID]
		was = was.whole()
		by := ""
		if n := len(c.Thread); n > 0 {
			by = c.Thread[n-1].From
		}
		switch {
		case !existed:
			out = append(out, fmt.Sprintf("%s asked by %s of %s", c.ID, c.From, c.To))
		case was.status != c.Status && c.Status == Pending:
			out = append(out, fmt.Sprintf("%s followed up by %s", c.ID, by))
		case was.status != c.Status:
			out = append(out, fmt.Sprintf("%s %s by %s", c.ID, c.Status, by))
		case len(c.Thread) > was.thread:
			out = append(out, fmt.Sprintf("%s %s by %s", c.ID, c.Thread[len(c.Thread)-1].Type, by))
		default:
			if b, err := recordBytes(c); err != nil || !bytes.Equal(b, was.raw) {
				out = append(out, c.ID+" updated")
			}
		}
	}
	return strings.Join(out, "; ")
}

// recordBytes is a record's JSON as agentx writes it, whole (a sealed
// record is decoded first), for comparing records.
func recordBytes(c *Clarification) (json.RawMessage, error) {
	if c.sealed != nil {
		var whole Clarification
		if err := jsonv2.Unmarshal(c.sealed, &whole, decodeOpts()); err != nil {
			return nil, err
		}
		c = &whole
	}
	return jsonv2.Marshal(c, encodeOpts())
}

// decodeRecord decodes one record's JSON.
func decodeRecord(raw json.RawMessage) (*Clarification, error) {
	var c Clarification
	if err := jsonv2.Unmarshal(raw, &c, decodeOpts()); err != nil {
		return nil, err
	}
	if c.Thread == nil {
		c.Thread = []ThreadEntry{}
	}
	return &c, nil
}

// sameRecord reports whether c is the record raw holds.
func sameRecord(c *Clarification, raw json.RawMessage) bool {
	other, err := decodeRecord(raw)
	if err != nil {
		return false
	}
	a, err1 := recordBytes(c)
	b, err2 := recordBytes(other)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}
