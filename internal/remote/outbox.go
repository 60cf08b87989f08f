package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
)

// SyncDir is the state subdirectory of what the remote mode keeps locally.
const SyncDir = "remote"

// OutboxDir, under SyncDir, marks the issues whose outbox holds changes.
const OutboxDir = "outbox"

// SyncState is issue N's local remote state (remote/issue-N.json): which
// shared version the local ledger copy reflects, the outbox of changes
// made while the remote was out of reach, and what became of delivered
// ones that could not be delivered as made.
type SyncState struct {
	Head     string    `json:"head"`
	Pending  []Queued  `json:"pending"`
	Outcomes []Outcome `json:"outcomes,omitempty"`
	// Refused is the shared version last refused (a rewound, deleted or
	// rewritten ref), until a version this host can adopt settles.
	Refused *Refusal `json:"refused,omitempty"`
	// Renumbered maps each id this host printed for a question while the
	// remote was out of reach, and then delivered under another id, to
	// that id. Unlike Outcomes it is never trimmed: the old id is refused
	// on this host for good (CheckID), as another host's question has it.
	Renumbered map[string]string `json:"renumbered,omitempty"`
	// Arrived maps each open question another host asked to when this
	// host first saw it, or its current round (a fetch brought it): the
	// monitor judges other hosts' questions by the evidence of their times
	// (Judge). A question not in it is this host's own. Dropped once
	// resolved or abandoned.
	Arrived map[string]ledger.Time `json:"arrived,omitempty"`
	// Copy is the SHA-256 of the local copy as written when it settled as
	// the shared ledger at Head: while the file still has it and nothing
	// is pending, the copy is the shared ledger at Head, and a write can be
	// pushed on it without fetching first (see fastCopy).
	Copy string `json:"copy,omitempty"`
	// Moved is when a write of this host last found that another host had
	// changed the shared ledger since this host's last change (a push
	// refused, or a fetch bringing other changes): for a while after it,
	// writes fetch first (fastAfter).
	Moved ledger.Time `json:"moved,omitzero"`
	// StreakFrom is when this host's run of writes pushed on the local
	// copy without a fetch began, each within streakGap of the one
	// before, the last at StreakAt: a host writing that often never sees
	// the intents other hosts post, and its pushes keep landing first
	// (see streakLook).
	StreakFrom ledger.Time `json:"streak_from,omitzero"`
	StreakAt   ledger.Time `json:"streak_at,omitzero"`
}

// Queued is one change waiting in the outbox: each record it changed, as
// it was before and after (Before null: the change created it).
type Queued struct {
	Message string         `json:"message"`
	At      ledger.Time    `json:"at"`
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
// made (ledger.Outcome: the hub makes its events without importing this
// package).
type Outcome = ledger.Outcome

// Outcomes of queued changes.
const (
	OutcomeRenumbered = ledger.OutcomeRenumbered
	OutcomeSuperseded = ledger.OutcomeSuperseded
)

// maxOutcomes is how many outcomes a sync state keeps.
const maxOutcomes = 100

// perm is the sync state files' mode.
const perm = 0o644

// SyncPath is issue's sync state file in store's state directory.
func SyncPath(store *ledger.Store, issue int) string {
	return filepath.Join(store.Dir(), syncFile(issue))
}

// syncFile is issue's sync state file, relative to the state directory.
func syncFile(issue int) string { return filepath.Join(SyncDir, "issue-"+strconv.Itoa(issue)+".json") }

// ReadSync returns issue's sync state in store (empty when there is none).
func ReadSync(store *ledger.Store, issue int) (*SyncState, error) {
	var st SyncState
	if err := store.ReadRecord(syncFile(issue), &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// OutboxIssues lists the issues of store whose outbox holds changes,
// ascending.
func OutboxIssues(store *ledger.Store) ([]int, error) {
	return store.IssuesWithFile(filepath.Join(SyncDir, OutboxDir))
}

// writeSync writes the sync state of the issue f holds locked, durably:
// its outbox holds changes that were acknowledged.
func (r *Replicator) writeSync(f *ledger.Locked, st *SyncState) error {
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
	path := SyncPath(r.store, f.Issue)
	if err := os.MkdirAll(filepath.Join(r.store.Dir(), SyncDir, OutboxDir), 0o755); err != nil {
		return err
	}
	// The outbox marker lists the issues with something pending, so that
	// finding them costs a directory listing. It is set before the state
	// holds something pending and cleared after it holds nothing, so that a
	// crash between the two leaves at worst a marker with nothing behind it
	// (harmless), never changes no marker points to.
	mark := filepath.Join(r.store.Dir(), SyncDir, OutboxDir, filepath.Base(path))
	if len(st.Pending) > 0 {
		if err := atomicfile.WriteWith(mark, []byte(strconv.Itoa(len(st.Pending))+"\n"), perm, atomicfile.Options{Durable: true}); err != nil {
			return err
		}
	}
	if err := atomicfile.WriteWith(path, append(data, '\n'), perm, atomicfile.Options{Durable: true, BeforeRename: func(os.FileInfo) error { return f.Check() }}); err != nil {
		return err
	}
	if len(st.Pending) == 0 {
		if err := os.Remove(mark); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// replay applies one queued change to l. A record it made is added with
// the next id (renumbered if that is not its own); a record it changed is
// replaced if l still holds it as the change found it; if any record moved
// on meanwhile, the whole change is superseded and nothing of it applies.
// A change already in l (delivered by a process that died before it could
// say so) is not applied twice.
//
// renames maps the ids of questions an earlier queued change made that were
// delivered under another id to that id: a later queued change to such a
// question (an answer given here before the remote was reached) follows
// it, never the other host's question that has the old id. replay adds
// the renumberings it makes.
func replay(l *ledger.Ledger, p Queued, now time.Time, renames map[string]string) (bool, []Outcome, error) {
	var steps []replayStep
	var dups []Outcome
	for _, r := range p.Records {
		after, err := ledger.DecodeRecord(r.After)
		if err != nil {
			return false, nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		if to, ok := renames[r.ID]; ok && !created(r.Before) {
			if err := follow(&r, after, to); err != nil {
				return false, nil, err
			}
		}
		if created(r.Before) {
			// A question already there, asked as this one was (an intent
			// of it merged by another host, a delivery whose process died
			// before it could say so), is not added twice.
			if i := findOrigin(l, after); i >= 0 {
				if id := l.Clarifications[i].ID; id != r.ID {
					dups = append(dups, Outcome{Outcome: OutcomeRenumbered, ID: r.ID, As: id, Message: p.Message, At: ledger.T(now), By: after.From})
					renames[r.ID] = id
				}
				continue
			}
		}
		cur := l.Find(r.ID)
		if err := l.Undecodable(); err != nil {
			return false, nil, err
		}
		switch {
		case cur != nil && sameRecord(cur, r.After):
			continue // delivered already
		case created(r.Before):
			steps = append(steps, replayStep{after: after})
			continue
		case cur != nil && sameRecord(cur, r.Before):
			steps = append(steps, replayStep{cur: cur, after: after})
			continue
		}
		if holdsChange(r.Before, after, cur) {
			continue // delivered already (an intent of it merged), moved on since
		}
		// The record moved since the change was made on it: the change
		// lands there only when it, or what moved the record, appended
		// assumptions alone (rebased).
		merged, ok := rebased(r.Before, after, cur)
		if !ok {
			winner := json.RawMessage("null")
			if cur != nil {
				if b, err := ledger.RecordJSON(cur); err == nil {
					winner = b
				}
			}
			return false, []Outcome{{Outcome: OutcomeSuperseded, ID: r.ID, Message: p.Message, At: ledger.T(now), By: author(after), Winner: winner}}, nil
		}
		if merged != cur {
			steps = append(steps, replayStep{cur: cur, after: merged})
		} // else it holds them already: delivered
	}
	return len(steps) > 0, append(dups, applySteps(l, steps, p, now, renames)...), nil
}

// holdsChange reports whether cur holds the change from before (its JSON) to
// after, one that adds thread entries or assumptions (what identifies it
// on a record moved on since: holds). A change to the rest of the record
// is never taken as landed.
func holdsChange(before json.RawMessage, after, cur *ledger.Clarification) bool {
	b, err := ledger.DecodeRecord(before)
	if cur == nil || err != nil || len(after.Thread) <= len(b.Thread) && len(assumptions(after)) <= len(assumptions(b)) {
		return false
	}
	return holds(cur, after)
}

// replayStep is one record a queued change makes (cur nil) or changes
// (cur, as l holds it) to after.
type replayStep struct{ cur, after *ledger.Clarification }

// created reports whether a queued record's Before says the change
// created it (none, or null).
func created(before json.RawMessage) bool { return len(before) == 0 || string(before) == "null" }

// follow makes r, a queued change to a question since delivered under
// another id (to), a change to it there; after is r.After decoded.
func follow(r *QueuedRecord, after *ledger.Clarification, to string) error {
	var err error
	if r.Before, err = renamed(r.Before, to); err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	after.ID = to
	if r.After, err = ledger.RecordJSON(after); err != nil {
		return err
	}
	r.ID = to
	return nil
}

// applySteps makes a queued change's steps in l: a changed record
// replaced, a new one added with the next id (renumbered, in renames, if
// that is not its own). It returns the renumberings.
func applySteps(l *ledger.Ledger, steps []replayStep, p Queued, now time.Time, renames map[string]string) []Outcome {
	var outs []Outcome
	for _, st := range steps {
		if st.cur != nil {
			*st.cur = *st.after
			continue
		}
		if id := l.NextID(); st.after.ID != id {
			outs = append(outs, Outcome{Outcome: OutcomeRenumbered, ID: st.after.ID, As: id, Message: p.Message, At: ledger.T(now), By: st.after.From})
			renames[st.after.ID] = id
			st.after.ID = id
		}
		l.Clarifications = append(l.Clarifications, st.after)
	}
	return outs
}

// renamed returns the record raw holds under id.
func renamed(raw json.RawMessage, id string) (json.RawMessage, error) {
	c, err := ledger.DecodeRecord(raw)
	if err != nil {
		return nil, err
	}
	c.ID = id
	return ledger.RecordJSON(c)
}

// author is who made the change that left c as it is: the latest thread
// entry's author ("" when the thread is empty).
func author(c *ledger.Clarification) string {
	if n := len(c.Thread); n > 0 {
		return c.Thread[n-1].From
	}
	return c.From
}

// RenumberedTo returns the id under which this host's question id was
// delivered, when id was a provisional id another host had taken ("",
// false otherwise): st.Renumbered, or an outcome recorded before that
// map was kept.
func (st *SyncState) RenumberedTo(id string) (string, bool) {
	if to, ok := st.Renumbered[id]; ok {
		return to, true
	}
	for i := len(st.Outcomes) - 1; i >= 0; i-- {
		if o := st.Outcomes[i]; o.Outcome == OutcomeRenumbered && o.ID == id {
			return o.As, true
		}
	}
	return "", false
}

// CheckID refuses id on this host when it was a provisional id, printed
// while the remote was out of reach, of a question since delivered under
// another id: another host's question has it now, and acting on it here
// would read or change that question (RenumberedError). nil otherwise,
// also without a remote.
func CheckID(store *ledger.Store, id string) error {
	if Of(store) == nil {
		return nil
	}
	issue, _, err := ledger.ParseID(id)
	if err != nil {
		return nil // the command reports a malformed id
	}
	st, err := ReadSync(store, issue)
	if err != nil {
		return err
	}
	to, ok := st.RenumberedTo(id)
	if !ok {
		return nil
	}
	e := &RenumberedError{Issue: issue, ID: id, As: to}
	if c, err := store.Get(to); err == nil {
		e.Now = c
	}
	return e
}

// CheckID implements ledger.IDChecker: the hub refuses through it, once
// for every caller, an id CheckID refuses.
func (r *Replicator) CheckID(id string) error { return CheckID(r.store, id) }
