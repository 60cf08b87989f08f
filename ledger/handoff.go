package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/lock"
)

// Asking is a new question as Store.Ask makes it: what Ledger.Ask takes,
// when it was asked, the question cap it is held to and what it came with.
type Asking struct {
	Question NewQuestion
	At       time.Time // when it was asked: the record's created time
	Cap      Cap       // the question cap (Max 0: none), counted on the ledger the question lands on
	Context  *Context  // what the question came with; nil: nothing
	// Capped is the error of a question the cap refuses, n the asker's
	// questions it counted. Not handed to another process: a question
	// handed to the lock's holder that the cap refuses is made again by
	// its asker, who words the refusal.
	Capped func(n int) error
}

// apply adds a's question to l and returns its record.
func (a *Asking) apply(l *Ledger) (*Clarification, error) {
	if a.Cap.Max > 0 {
		if n := RunQuestions(l, a.Question.From, a.Cap.Since); n >= a.Cap.Max {
			if a.Capped != nil {
				return nil, a.Capped(n)
			}
			return nil, fmt.Errorf("%s has asked %d questions, the most allowed", a.Question.From, n)
		}
	}
	c := l.Ask(a.Question, a.At)
	if a.Context != nil {
		c.Ext().Context = a.Context
	}
	return c, nil
}

// made reports whether c is the record a asked for: the same Origin.
func (a *Asking) made(c *Clarification) bool {
	q := &a.Question
	return Origin(c) == origin(q.From, q.To, q.Topic, a.At, q.Body)
}

// findMade is the record of l that a asked for, nil if none: searched from
// the newest record back, a closed record (read sealed) opened only when
// its sender is a's.
func (a *Asking) findMade(l *Ledger) *Clarification {
	for i := len(l.Clarifications) - 1; i >= 0; i-- {
		c := l.Clarifications[i]
		if c.From != a.Question.From {
			continue
		}
		if c.Sealed() {
			if c = l.Find(c.ID); c == nil {
				continue
			}
		}
		if a.made(c) {
			return c
		}
	}
	return nil
}

// Ask adds a's question to issue's ledger as its next clarification and
// returns the record as written: Update with one change, checked and
// written as every change is.
//
// An ask that finds the issue's lock held hands its question to the
// holder rather than waiting to make it (group commit, see lock.Handoff):
// it leaves the question in the issue's hand-off directory
// (issue-N.json.asks), then sleeps in the lock's queue as before. A holder
// making an ask takes the questions left there, oldest first, up to
// MaxHanded, adds them after its own in its one write (on this machine
// alone: one fsync for all; in remote mode, one change on the shared
// ledger, which takes only those held to its own question cap, as the
// cap travels with the change), and, once that write is in place, leaves
// each asker its record (NAME.done) before it releases the lock. When the
// queue wakes an asker, it takes its question back if no holder took it
// and makes it itself; otherwise it reads its record and is done without
// making the lock file or writing anything. An asker is answered only
// after the write that carries its question, and a question is made once:
// taking it is removing its file, which either the holder or its asker
// does, never both. A holder that dies after taking it leaves no record:
// its asker, woken by the kernel, looks for its question in the ledger (by
// what was asked and when) and makes it only if it is not there; in remote
// mode it cannot know (the holder's push may land after it died) and
// fails with HandedLostError. A question the holder cannot make (the cap
// refuses it, or it is not a valid record) is made again by its asker,
// whose error says why.
func (s *Store) Ask(ctx context.Context, issue int, a Asking) (*Clarification, error) {
	if err := ValidateIssue(issue); err != nil {
		return nil, err
	}
	var prefetched any
	if s.rep != nil {
		var err error
		if prefetched, err = s.rep.Prefetch(ctx, issue); err != nil {
			return nil, err
		}
	}
	path := s.Path(issue)
	h := &handing{spool: path + HandoffSuffix, issue: issue, a: &a}
	opts := lock.Handoff{Post: h.post, Done: h.done}
	lk, err := s.acquireWith(ctx, path, &opts)
	switch {
	case errors.Is(err, lock.ErrHanded):
		return h.madeByHolder(s), nil
	case err != nil && h.posted && !h.withdraw():
		// A holder took the question and has not said what became of
		// it: wait for it to let go, then look.
		h.taken = true
		if lk, err = s.acquireWith(ctx, path, nil); err != nil {
			return nil, fmt.Errorf("%w (the question was handed to the lock's holder, which may have recorded it: see agentx clarify list --issue %d)", err, issue)
		}
		if h.told() {
			_ = lk.Release()
			return h.madeByHolder(s), nil
		}
	case err != nil:
		return nil, err
	}
	f := &Locked{Issue: issue, Path: path, s: s, lk: lk}
	defer func() { _ = f.Release() }()
	if s.rep != nil {
		return s.askShared(ctx, f, h, prefetched)
	}
	var (
		own   *Clarification
		batch []handedAsk
	)
	_, err = s.change(f, func(l *Ledger) error {
		if h.taken {
			if own = a.findMade(l); own != nil {
				return errMadeAlready
			}
		}
		var err error
		if own, err = a.apply(l); err != nil {
			return err
		}
		batch = h.drain(l)
		return nil
	}, func() { tell(batch, false) })
	if errors.Is(err, errMadeAlready) {
		h.madeByHolder(s)
		return own, nil
	}
	if err != nil {
		return nil, err
	}
	return own, nil
}

// askShared is Ask's write in remote mode, under the issue's lock: its
// question, and those handed to it under the same question cap, made in
// one change through the Replicator (the cap an intent carries is its
// writer's); each asker is told, before the lock is released, of its
// record and whether the change was kept in the outbox. The write keeps
// the lock while it carries handed questions (Locked.Aside).
func (s *Store) askShared(ctx context.Context, f *Locked, h *handing, pre any) (*Clarification, error) {
	if h.taken && !h.notMade {
		// taken by a holder that ended without a word: its change may
		// still land, so the question is not made again
		return nil, &HandedLostError{Issue: f.Issue}
	}
	var (
		own     *Clarification
		batch   []handedAsk
		drained bool
		refused []error // this question's own refusals (its cap), as made on each ledger
	)
	_, err := s.rep.Apply(ctx, f, func(l *Ledger) error {
		var err error
		if own, err = h.a.apply(l); err != nil {
			refused = append(refused, err)
			return err
		}
		if !drained {
			// taken once; made again on each ledger the change is made on
			drained = true
			batch = h.take(l.IssueNumber, func(x *Asking) bool { return x.Cap.Same(h.a.Cap) })
			f.carrying = len(batch) > 0
		}
		makeAll(batch, l)
		return nil
	}, pre)
	if err != nil {
		if slices.ContainsFunc(refused, func(r error) bool { return errors.Is(err, r) }) {
			// the write ends on its own question's refusal (the shared
			// ledger's cap): nothing of it landed, and each asker makes
			// its own
			for i := range batch {
				batch[i].record = nil
			}
			tell(batch, false)
		}
		// otherwise the askers of batch are told nothing: whether the
		// change landed is not known (HandedLostError)
		return nil, err
	}
	tell(batch, f.kept)
	return own, nil
}

// unsyncedNotes is a Replicator that reports the changes this process
// kept in its outbox ("unsynced"), and takes one more: a question a
// holder made for this process and kept there.
type unsyncedNotes interface{ NoteUnsynced(msg string) }

// HandedLostError: in remote mode, an ask's question was taken by the
// process holding the issue's lock (group commit), which ended (killed)
// before saying what became of it. Its change may have reached the
// shared ledger, or be on its way (its git push outlives it): the
// question is not made again, so that it is not asked twice.
type HandedLostError struct{ Issue int }

func (e *HandedLostError) Error() string {
	return fmt.Sprintf("the question was handed to the process holding issue #%d's lock, which ended before saying whether it reached the shared ledger: it may be there or on its way", e.Issue)
}

// Hint says what to do.
func (e *HandedLostError) Hint() string {
	return fmt.Sprintf("look for it on issue #%d's shared ledger before asking again", e.Issue)
}

// handedHook, when set, is called when an ask returns a record the lock's
// holder made. Test hook; nil outside tests.
var handedHook func()

// madeByHolder is the record the holder made (told): a question it kept
// in the outbox is noted as this process's unsynced change.
func (h *handing) madeByHolder(s *Store) *Clarification {
	if handedHook != nil {
		handedHook()
	}
	if notes, ok := s.rep.(unsyncedNotes); ok && h.unsynced != "" {
		notes.NoteUnsynced(h.unsynced)
	}
	return h.record
}

// errMadeAlready ends the change of an ask whose question a holder made.
var errMadeAlready = errors.New("the question is in the ledger already")

// HandoffSuffix ends the name of an issue's hand-off directory, beside its
// ledger: issue-42.json.asks (see Store.Ask).
const HandoffSuffix = ".asks"

// MaxHanded is how many handed questions a holder makes in one write, at
// most: the lock is held for them all.
const MaxHanded = 64

// maxHandedSize bounds a hand-off file as read.
const maxHandedSize = 1 << 20

// Ends of the names in a hand-off directory: a question left for the
// holder, and what became of it, left for its asker.
const (
	askEnd  = ".ask"
	doneEnd = ".done"
)

// handAfter is how long a file is left in a hand-off directory before a
// holder removes it: an answer whose asker is gone, or a question half
// written by a killed process.
const handAfter = time.Hour

// handedFile is a question as left in a hand-off directory.
type handedFile struct {
	V        int         `json:"v"`
	Issue    int         `json:"issue"`
	PID      int         `json:"pid"`
	Question NewQuestion `json:"question"`
	At       time.Time   `json:"at"`
	Cap      Cap         `json:"cap"`
	Context  *Context    `json:"context,omitempty"`
}

// doneFile is what became of a handed question, left for its asker: its
// record as written, or no record when the holder did not make it (the
// asker makes it itself).
type doneFile struct {
	V      int             `json:"v"`
	Record json.RawMessage `json:"record,omitempty"`
	// Unsynced, in remote mode, says the record was kept in the outbox
	// (the remote out of reach): the change as the asker reports it.
	Unsynced string `json:"unsynced,omitempty"`
}

// handing is one ask's side of the hand-off.
type handing struct {
	spool string
	issue int
	a     *Asking
	name  string // the question's file, once posted

	posted   bool // the question was left for the holder, and not taken back
	taken    bool // a holder took it
	notMade  bool // and said it did not make it (its cap, a record not valid)
	record   *Clarification
	unsynced string // the holder kept it in the outbox: the change, as reported
}

// post leaves the question for the lock's holder. A failure leaves
// nothing: the ask waits and makes its question itself.
func (h *handing) post() {
	if err := os.Mkdir(h.spool, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	fi, err := os.Lstat(h.spool)
	if err != nil || !fi.IsDir() {
		return // not a directory (a link is never followed): no hand-off
	}
	data, err := json.Marshal(handedFile{V: 1, Issue: h.issue, PID: os.Getpid(),
		Question: h.a.Question, At: h.a.At.UTC(), Cap: h.a.Cap, Context: h.a.Context})
	if err != nil {
		return
	}
	name := filepath.Join(h.spool, fmt.Sprintf("%020d-%d-%016x%s", h.a.At.UnixNano(), os.Getpid(), rand.Uint64(), askEnd))
	if atomicfile.WriteVolatile(name, data, 0o600) != nil {
		return
	}
	h.name, h.posted = name, true
}

// withdraw takes the question back; false when a holder took it first.
func (h *handing) withdraw() bool {
	if err := os.Remove(h.name); errors.Is(err, fs.ErrNotExist) {
		return false
	}
	h.posted = false
	return true
}

// done is lock.Handoff's Done: true when a holder made the question and
// left its record.
func (h *handing) done() bool {
	if h.withdraw() {
		return false
	}
	h.taken = true
	return h.told()
}

// told reads what the holder that took the question left: true, with
// h.record set, when it made it.
func (h *handing) told() bool {
	name := strings.TrimSuffix(h.name, askEnd) + doneEnd
	data, err := atomicfile.ReadAtMost(name, maxHandedSize)
	if err != nil {
		return false
	}
	_ = os.Remove(name)
	var d doneFile
	if json.Unmarshal(data, &d) != nil || d.V != 1 {
		return false
	}
	if len(d.Record) == 0 {
		h.notMade = true // told so: its asker makes it
		return false
	}
	c, err := DecodeRecord(d.Record)
	if err != nil || !h.a.made(c) {
		return false
	}
	h.record, h.unsynced = c, d.Unsynced
	return true
}

// handedAsk is a question a holder took: the question, where to leave
// what became of it, and its record on the ledger it was last made on
// (nil: not made).
type handedAsk struct {
	a      Asking
	done   string
	record *Clarification
}

// take takes the questions left in the hand-off directory that fits
// accepts (nil: all), oldest first, up to MaxHanded, for a ledger of
// issue; it removes files left there longer than handAfter. A file that
// cannot be read, of another version or another issue, is left alone, as
// is a question fits refuses (its asker makes it).
func (h *handing) take(issue int, fits func(*Asking) bool) []handedAsk {
	ents, err := os.ReadDir(h.spool)
	if err != nil {
		return nil
	}
	var batch []handedAsk
	for _, e := range ents {
		name := e.Name()
		path := filepath.Join(h.spool, name)
		if !strings.HasSuffix(name, askEnd) || !e.Type().IsRegular() {
			removeOld(path, e)
			continue
		}
		if len(batch) == MaxHanded {
			continue
		}
		data, err := atomicfile.ReadAtMost(path, maxHandedSize)
		if err != nil {
			continue
		}
		var f handedFile
		if json.Unmarshal(data, &f) != nil || f.V != 1 || f.Issue != issue {
			removeOld(path, e)
			continue
		}
		a := Asking{Question: f.Question, At: f.At, Cap: f.Cap, Context: f.Context}
		if fits != nil && !fits(&a) {
			continue
		}
		if os.Remove(path) != nil {
			continue // its asker took it back
		}
		if f.PID > 0 && !lock.PIDAlive(f.PID) {
			continue // its asker is gone: nobody is told of it
		}
		batch = append(batch, handedAsk{a: a, done: strings.TrimSuffix(path, askEnd) + doneEnd})
	}
	return batch
}

// drain takes every question left for a holder of l's issue (take) and
// makes them on l (makeAll).
func (h *handing) drain(l *Ledger) []handedAsk {
	batch := h.take(l.IssueNumber, nil)
	makeAll(batch, l)
	return batch
}

// makeAll adds each question of batch to l, after the others, setting its
// record (nil when the cap refuses it or it is not a valid record).
func makeAll(batch []handedAsk, l *Ledger) {
	for i := range batch {
		ask := &batch[i]
		ask.record = nil
		if c, err := ask.a.apply(l); err == nil {
			if c.validate() == nil {
				ask.record = c
			} else {
				l.Clarifications = l.Clarifications[:len(l.Clarifications)-1]
			}
		}
	}
}

// removeOld removes path, an entry of a hand-off directory, when it was
// left there longer than handAfter.
func removeOld(path string, e fs.DirEntry) {
	if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > handAfter {
		_ = os.RemoveAll(path)
	}
}

// tell leaves each asker of batch what became of its question: called once
// the write that carries them is in place (kept: in the outbox), before
// the lock is released.
func tell(batch []handedAsk, kept bool) {
	for _, ask := range batch {
		d := doneFile{V: 1}
		if ask.record != nil {
			raw, err := RecordJSON(ask.record)
			if err != nil {
				continue // its asker looks in the ledger
			}
			d.Record = raw
			if kept {
				c := ask.record
				d.Unsynced = fmt.Sprintf("%s asked by %s of %s", c.ID, c.From, c.To)
			}
		}
		data, err := json.Marshal(d)
		if err != nil {
			continue
		}
		_ = atomicfile.WriteVolatile(ask.done, data, 0o600)
	}
}
