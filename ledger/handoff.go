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
func (a *Asking) findMade(l *Ledger) *Clarification { return a.find(l, true) }

// findOpen is findMade among the records l holds open (not read sealed):
// a question just made is open (closing it takes its asker, or a person,
// after it is acknowledged), and on a ledger of 20,000 records, most of
// them closed, opening each of its asker's costs a tenth of a second
// (BenchmarkFindHandedOn20000).
func (a *Asking) findOpen(l *Ledger) *Clarification { return a.find(l, false) }

// find is findMade, among the closed records too when closed.
func (a *Asking) find(l *Ledger, closed bool) *Clarification {
	for i := len(l.Clarifications) - 1; i >= 0; i-- {
		c := l.Clarifications[i]
		if c.From != a.Question.From {
			continue
		}
		if c.Sealed() && (!closed || !l.open(c)) {
			continue // opened in place: Find would look for it from the start
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
// making an ask or a change (Hand) takes the questions and changes left
// there, oldest first, up to MaxHanded, adds them after its own in its one
// write (on this machine alone: one fsync for all; in remote mode, one
// change on the shared ledger, which takes only the questions held to its
// own question cap, as the cap travels with the change), and, once that
// write is in place, leaves each writer its record (NAME.done) before it
// lets its mark go (lock.Mark, held from the first file it takes; in
// remote mode it gives the issue's lock back while a remote merges its
// change, and its writers wait on the mark). When the queue wakes a
// writer, it takes its question back if no holder took it and makes it
// itself; otherwise it waits for the holder's mark, reads its record and
// is done without writing anything. A writer is answered only after the
// write that carries its change, and a change is made once: taking it is
// renaming its file away, which either the holder or its writer (by
// removing it) does, never both. A holder that dies after taking it
// leaves no record: its writer, woken by the kernel, looks for its change
// in the ledger (a question by what was asked and when, a change by its
// Changer's Made) and makes it only if it is not there; in remote mode,
// woken once the holder and the git commands it started have ended (they
// hold its mark too), it looks on the shared ledger, fetched, then, not
// finding it there, in the intents waiting on the remote and this host's
// outbox (lookShared): in none of them, it makes it; in one, it fails
// with HandedLostError (an intent the holder posted may be merged after
// it died). A
// change the holder cannot make (the cap refuses a question, a record
// that would not be valid, a transition the table refuses) is made again
// by its writer, whose error says why.
func (s *Store) Ask(ctx context.Context, issue int, a Asking) (*Clarification, error) {
	return s.hand(ctx, issue, &a)
}

// Hand makes ch, a change to one record of a kind the Store handles
// (Handle), and returns the record as written: Update with ch's Changer's
// Make, handed to the holder of the issue's lock when it is held, as Ask
// hands a question.
func (s *Store) Hand(ctx context.Context, ch Change) (*Clarification, error) {
	issue, _, err := ParseID(ch.ID)
	if err != nil {
		return nil, err
	}
	mk := s.changers[ch.Kind]
	if mk == nil {
		return nil, fmt.Errorf("ledger: no Changer for changes of kind %q", ch.Kind)
	}
	ch.At = ch.At.UTC().Truncate(time.Millisecond) // as the ledger keeps times: Made finds it there
	return s.hand(ctx, issue, &changing{ch: ch, mk: mk})
}

// hand is Ask and Hand: x made on issue's ledger, handed to the lock's
// holder when it is held.
func (s *Store) hand(ctx context.Context, issue int, x handable) (*Clarification, error) {
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
	h := &handing{spool: path + HandoffSuffix, issue: issue, x: x, changers: s.changers}
	if s.rep != nil {
		// the git commands the write runs while it carries others'
		// changes hold its mark too: killed, it leaves its push running,
		// and its writers wait for that push before they look
		h.inherit = &lock.Inheritance{}
		ctx = lock.WithInheritance(ctx, h.inherit)
	}
	opts := lock.Handoff{Post: h.post, Done: h.done}
	lk, err := s.acquireWith(ctx, path, &opts)
	switch {
	case errors.Is(err, lock.ErrHanded):
		return h.madeByHolder(s), nil
	case err != nil && h.posted && !h.withdraw():
		h.taken = true // by a holder: its word is awaited below
	case err != nil:
		return nil, err
	}
	if h.taken && h.record == nil && !h.notMade {
		// A holder took the change and has not said what became of it
		// (it gives the issue's lock back while a remote merges its
		// change): wait for its word without the lock, then look.
		if lk != nil {
			_ = lk.Release()
			lk = nil
		}
		if h.awaitHolder(ctx, s.lock.Wait) {
			return h.madeByHolder(s), nil
		}
	}
	if lk == nil {
		if lk, err = s.acquireWith(ctx, path, nil); err != nil {
			return nil, fmt.Errorf("%w (it was handed to the lock's holder, which may have made it: %s)", err, x.look(issue))
		}
	}
	defer h.unmark() // a holder's mark, once it has told its writers (or failed)
	f := &Locked{Issue: issue, Path: path, s: s, lk: lk}
	defer func() { _ = f.Release() }()
	if s.rep != nil {
		return s.handShared(ctx, f, h, prefetched)
	}
	var (
		own   *Clarification
		batch []handedOne
	)
	_, err = s.change(f, func(l *Ledger) error {
		if h.taken {
			if own = x.findMade(l); own != nil {
				return errMadeAlready
			}
		}
		var err error
		if own, err = x.apply(l); err != nil {
			return err
		}
		batch = h.drain(l)
		return nil
	}, func() { h.tell(batch, false) })
	if errors.Is(err, errMadeAlready) {
		h.madeByHolder(s)
		return own, nil
	}
	if err != nil {
		return nil, err
	}
	return own, nil
}

// handShared is hand's write in remote mode, under the issue's lock: its
// change, and those handed to it (of questions, those held to the same
// question cap: the cap an intent carries is its writer's), made in one
// change through the Replicator; each writer is told of its record and
// whether the change was kept in the outbox. While an intent of it waits
// to be merged, the issue's lock is given back (Locked.Aside), and the
// writers whose changes it took wait on its mark.
func (s *Store) handShared(ctx context.Context, f *Locked, h *handing, pre any) (*Clarification, error) {
	if h.taken && !h.notMade {
		return s.lookShared(ctx, f, h, pre)
	}
	var (
		own     *Clarification
		batch   []handedOne
		drained bool
		refused []error // this change's own refusals, as made on each ledger
	)
	holderCap := h.x.capOf(ctx) // what its change carries
	_, err := s.rep.Apply(ctx, f, func(l *Ledger) error {
		if drained {
			// made again, on a ledger fetched since: what it already
			// holds of this write (an intent of it merged after all) is
			// found, not made twice
			if own = h.x.findOpen(l); own != nil {
				findAll(batch, l)
				return nil
			}
		}
		var err error
		if own, err = h.x.apply(l); err != nil {
			refused = append(refused, err)
			return err
		}
		if !drained {
			// taken once; made again on each ledger the change is made on
			drained = true
			batch = h.take(l.IssueNumber, func(x handable) bool { return x.rides(holderCap) })
			makeAll(batch, l)
			return nil
		}
		findAll(batch, l)
		return nil
	}, pre)
	if err != nil {
		if slices.ContainsFunc(refused, func(r error) bool { return errors.Is(err, r) }) {
			// the write ends on its own change's refusal (the shared
			// ledger's cap, a transition another host made first):
			// nothing of it landed, and each writer makes its own
			for i := range batch {
				batch[i].record = nil
			}
			h.tell(batch, false)
		}
		// otherwise the writers of batch are told nothing: whether the
		// change landed is not known (HandedLostError)
		return nil, err
	}
	h.tell(batch, f.kept)
	return own, nil
}

// lookShared is handShared for a change taken by a holder that ended
// without a word: it is not made again while the holder's change may
// have landed or still land. The shared ledger is fetched and looked at:
// the change there (the holder's push landed, or its intent was merged,
// or the holder kept it in this host's outbox, which Apply replays), its
// record is returned. Not there: when the holder and the git commands it
// started have all ended (they hold its mark: lock.Inheritance) and
// nothing of theirs can still bring it (no intent waiting on the remote
// holds it, nor this host's outbox: mayLand), it is made here, after one
// more look at the shared ledger, fetched after the intents were; else
// HandedLostError (it may be on its way).
func (s *Store) lookShared(ctx context.Context, f *Locked, h *handing, pre any) (*Clarification, error) {
	if c, _ := s.findShared(ctx, f, h, pre); c != nil {
		return c, nil
	}
	ml, ok := s.rep.(mayLand)
	if !ok || !h.holderEnded || !lock.MarksInherited {
		// the holder (or, where a mark is not inherited, a push it
		// started) may still be at work
		return nil, h.x.lost(f.Issue)
	}
	if may, err := ml.MayLand(ctx, f.Issue, h.x.findMade); err != nil || may {
		return nil, h.x.lost(f.Issue)
	}
	c, fresh := s.findShared(ctx, f, h, nil)
	if c != nil {
		return c, nil
	}
	if fresh == nil {
		return nil, h.x.lost(f.Issue) // not fetched: not known
	}
	h.taken = false // as if never handed: made here, on the ledger fetched
	return s.handShared(ctx, f, h, fresh)
}

// findShared fetches the shared ledger (pre, when the Replicator cannot
// fetch now) and returns the record there that holds h's change (nil: not
// there), and what was fetched (nil: nothing, or the fetch failed).
func (s *Store) findShared(ctx context.Context, f *Locked, h *handing, pre any) (*Clarification, any) {
	var fresh any
	if fr, ok := s.rep.(freshFetcher); ok {
		// fetched after the holder ended, not before this process waited
		if got, err := fr.FetchNow(ctx, f.Issue); err == nil {
			pre, fresh = got, got
		}
	}
	var found *Clarification
	_, err := s.rep.Apply(ctx, f, func(l *Ledger) error {
		if c := h.x.findMade(l); c != nil {
			// as the ledger that says so holds it: nothing to write
			found = c
			return errMadeAlready
		}
		return h.x.lost(f.Issue)
	}, pre)
	if errors.Is(err, errMadeAlready) && found != nil {
		h.record = found
		return h.madeByHolder(s), fresh
	}
	return nil, fresh
}

// mayLand is a Replicator that says whether a change a holder that ended
// took may still reach the shared ledger: an intent waiting there, or
// this host's outbox, holds it (found by find); an error, or a remote out
// of reach, is taken as yes.
type mayLand interface {
	MayLand(ctx context.Context, issue int, find func(*Ledger) *Clarification) (bool, error)
}

// freshFetcher is a Replicator that fetches the shared ledger now, for
// Apply (what Prefetch returns, always from a fetch).
type freshFetcher interface {
	FetchNow(ctx context.Context, issue int) (any, error)
}

// unsyncedNotes is a Replicator that reports the changes this process
// kept in its outbox ("unsynced"), and takes one more: a question a
// holder made for this process and kept there.
type unsyncedNotes interface{ NoteUnsynced(msg string) }

// HandedLostError: in remote mode, a question or a change was taken by
// the process holding the issue's lock (group commit), which ended
// (killed) before saying what became of it. Its change may have reached
// the shared ledger, or be on its way (an intent it posted, merged
// later; its outbox): it is not made again, so that it is not made twice.
type HandedLostError struct {
	Issue int
	// ID is the record a handed change was to change ("": a question),
	// What the change ("an answer", "an assumption").
	ID, What string
}

func (e *HandedLostError) Error() string {
	what := "the question"
	if e.ID != "" {
		what = fmt.Sprintf("%s on %s", e.What, e.ID)
	}
	return fmt.Sprintf("%s was handed to the process holding issue #%d's lock, which was killed or paused before saying whether it reached the shared ledger: it is not there, and may still be on its way (an intent of that process's not yet merged)", what, e.Issue)
}

// Hint says what to do.
func (e *HandedLostError) Hint() string {
	if e.ID != "" {
		return fmt.Sprintf("look at %s on issue #%d's shared ledger before trying again", e.ID, e.Issue)
	}
	return fmt.Sprintf("look for it on issue #%d's shared ledger before asking again", e.Issue)
}

// handedHook, when set, is called when a write returns a record the lock's
// holder made. Test hook; nil outside tests.
var handedHook func()

// madeByHolder is the record the holder made (told): a change it kept in
// the outbox is noted as this process's unsynced change.
func (h *handing) madeByHolder(s *Store) *Clarification {
	if handedHook != nil {
		handedHook()
	}
	if notes, ok := s.rep.(unsyncedNotes); ok && h.unsynced != "" {
		notes.NoteUnsynced(h.unsynced)
	}
	return h.record
}

// errMadeAlready ends the change of a write that a holder made.
var errMadeAlready = errors.New("the change is in the ledger already")

// HandoffSuffix ends the name of an issue's hand-off directory, beside its
// ledger: issue-42.json.asks (see Store.Ask).
const HandoffSuffix = ".asks"

// MaxHanded is how many handed questions and changes a holder makes in
// one write, at most: the lock is held for them all.
const MaxHanded = 64

// maxHandedSize bounds a hand-off file as read.
const maxHandedSize = 1 << 20

// Ends of the names in a hand-off directory: a question or a change left
// for the holder (NAME.ask, NAME.change), one a holder took
// (NAME.HOLDER.taken), the holder's mark (HOLDER.mark: lock.Mark, held
// until it has told its writers) and what became of it, left for its
// writer (NAME.done).
const (
	askEnd    = ".ask"
	changeEnd = ".change"
	takenEnd  = ".taken"
	markEnd   = ".mark"
	doneEnd   = ".done"
)

// baseName is the file name, or path, of a question or change left for
// the holder without its end.
func baseName(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, askEnd), changeEnd)
}

// takenName is what the file at path is renamed to when the holder whose
// mark is m takes it: NAME.HOLDER.taken.
func takenName(path string, m *lock.Mark) string {
	return baseName(path) + "." + strings.TrimSuffix(filepath.Base(m.Path()), markEnd) + takenEnd
}

// handAfter is how long a file is left in a hand-off directory before a
// holder removes it: an answer whose asker is gone, or a question half
// written by a killed process.
const handAfter = time.Hour

// handedFile is a question (NAME.ask) or a change (NAME.change) as left
// in a hand-off directory.
type handedFile struct {
	V        int          `json:"v"`
	Issue    int          `json:"issue"`
	PID      int          `json:"pid"`
	Question *NewQuestion `json:"question,omitempty"`
	At       time.Time    `json:"at"`
	Cap      Cap          `json:"cap"`
	Context  *Context     `json:"context,omitempty"`
	Change   *Change      `json:"change,omitempty"`
}

// doneFile is what became of a handed question or change, left for its
// writer: its record as written, or no record when the holder did not
// make it (the writer makes it itself).
type doneFile struct {
	V      int             `json:"v"`
	Record json.RawMessage `json:"record,omitempty"`
	// Unsynced, in remote mode, says the record was kept in the outbox
	// (the remote out of reach): the change as the writer reports it.
	Unsynced string `json:"unsynced,omitempty"`
}

// handable is what a writer may hand to the holder of the issue's lock:
// a question (*Asking) or a change to a record (*changing).
type handable interface {
	// apply makes it on l, for its own writer: its record, or why not.
	apply(l *Ledger) (*Clarification, error)
	// handed makes it on l for another writer: its record, or nil (l
	// then as it was) when it cannot be made.
	handed(l *Ledger) *Clarification
	// findMade is the record of l that holds it, nil if none.
	findMade(l *Ledger) *Clarification
	// findOpen is findMade where l is a ledger its write made it on a
	// moment before (a question then still open, not searched for among
	// the closed records).
	findOpen(l *Ledger) *Clarification
	// made reports whether c, a record a holder told of, holds it.
	made(c *Clarification) bool
	// capOf is the question cap the change of a write that makes it
	// carries (made under ctx).
	capOf(ctx context.Context) Cap
	// rides reports whether it may be made in a change that carries
	// holder as its question cap.
	rides(holder Cap) bool
	// file is it as left for the holder.
	file(issue int) handedFile
	// unsynced is how the outbox words it, made as c.
	unsynced(c *Clarification) string
	// look says where its writer finds whether it was made.
	look(issue int) string
	// lost is the error of a writer whose holder ended without a word.
	lost(issue int) error
}

func (a *Asking) capOf(context.Context) Cap { return a.Cap }
func (a *Asking) rides(holder Cap) bool     { return a.Cap.Same(holder) }

// handed is apply, on a valid record: a question the cap refuses or
// whose record is not valid leaves l as it was.
func (a *Asking) handed(l *Ledger) *Clarification {
	c, err := a.apply(l)
	if err != nil {
		return nil
	}
	if c.validate() != nil {
		l.Clarifications = l.Clarifications[:len(l.Clarifications)-1]
		return nil
	}
	return c
}

func (a *Asking) file(issue int) handedFile {
	return handedFile{V: 1, Issue: issue, PID: os.Getpid(), Question: &a.Question, At: a.At.UTC(), Cap: a.Cap, Context: a.Context}
}

func (a *Asking) unsynced(c *Clarification) string {
	return fmt.Sprintf("%s asked by %s of %s", c.ID, c.From, c.To)
}

func (a *Asking) look(issue int) string {
	return fmt.Sprintf("see agentx clarify list --issue %d", issue)
}

func (a *Asking) lost(issue int) error { return &HandedLostError{Issue: issue} }

// Change is a change to one record described as data, so that the
// process holding the issue's lock can make it for the process that
// makes it (Store.Hand: group commit, as Store.Ask for a question). Its
// Changer, which the Store knows by Kind, makes it: the same code for a
// change of this process and one handed to it.
type Change struct {
	Kind string          `json:"kind"`
	ID   string          `json:"id"`   // the record it changes
	By   string          `json:"by"`   // who makes it ("": its Changer's default)
	At   time.Time       `json:"at"`   // when: the time it writes (to the millisecond, as the ledger keeps it)
	What string          `json:"what"` // what it is, for errors: "an answer"
	Args json.RawMessage `json:"args,omitempty"`
}

// A Changer makes the changes of one kind (Store.Handle).
type Changer interface {
	// Make makes ch on c, a record opened whole, or says why not.
	Make(c *Clarification, ch Change) error
	// Made reports whether c holds ch: as a holder that made it told,
	// or as the ledger holds it after that holder died.
	Made(c *Clarification, ch Change) bool
}

// Handle has the Store make changes of kind with c (Hand); called before
// the Store is used.
func (s *Store) Handle(kind string, c Changer) {
	if s.changers == nil {
		s.changers = map[string]Changer{}
	}
	s.changers[kind] = c
}

// changing is a Change with its Changer.
type changing struct {
	ch Change
	mk Changer
}

func (x *changing) apply(l *Ledger) (*Clarification, error) {
	c := l.Find(x.ch.ID)
	if c == nil {
		return nil, fmt.Errorf("clarification %s: %w", x.ch.ID, ErrNotFound)
	}
	return c, x.mk.Make(c, x.ch)
}

// handed is apply, leaving the record as it was when the change cannot be
// made or would leave it not valid.
func (x *changing) handed(l *Ledger) *Clarification {
	c := l.Find(x.ch.ID)
	if c == nil {
		return nil
	}
	raw, err := RecordJSON(c)
	if err != nil {
		return nil
	}
	if x.mk.Make(c, x.ch) == nil && c.validate() == nil {
		return c
	}
	if was, err := DecodeRecord(raw); err == nil {
		*c = *was // in place: the holder's own change may hold c
	}
	return nil
}

func (x *changing) findMade(l *Ledger) *Clarification {
	if c := l.Find(x.ch.ID); c != nil && x.mk.Made(c, x.ch) {
		return c
	}
	return nil
}

func (x *changing) findOpen(l *Ledger) *Clarification { return x.findMade(l) }

func (x *changing) made(c *Clarification) bool {
	return c.ID == x.ch.ID && x.mk.Made(c, x.ch)
}

func (x *changing) capOf(ctx context.Context) Cap {
	c, _ := CapOf(ctx)
	return c
}

func (x *changing) rides(Cap) bool { return true } // no question cap counts it

func (x *changing) file(issue int) handedFile {
	return handedFile{V: 1, Issue: issue, PID: os.Getpid(), At: x.ch.At, Change: &x.ch}
}

func (x *changing) unsynced(c *Clarification) string {
	by := x.ch.By
	if by == "" {
		by = c.From
	}
	return fmt.Sprintf("%s: %s by %s", c.ID, x.ch.What, by)
}

func (x *changing) look(int) string {
	return fmt.Sprintf("see agentx clarify show %s", x.ch.ID)
}

func (x *changing) lost(issue int) error {
	return &HandedLostError{Issue: issue, ID: x.ch.ID, What: x.ch.What}
}

// handing is one write's side of the hand-off.
type handing struct {
	spool    string
	issue    int
	x        handable
	changers map[string]Changer // for the changes it takes, as a holder
	mark     *lock.Mark         // as a holder that took some: held until they are told
	inherit  *lock.Inheritance  // in remote mode: the child processes holding mark too
	name     string             // the question's or change's file, once posted

	posted  bool // it was left for the holder, and not taken back
	taken   bool // a holder took it
	notMade bool // and said it did not make it (its cap, a record not valid)
	// holderEnded: the holder that took it, and the git commands it
	// started, have all ended (its mark is free), told or killed
	holderEnded bool
	record      *Clarification
	unsynced    string // the holder kept it in the outbox: the change, as reported
}

// post leaves the question or change for the lock's holder. A failure
// leaves nothing: the writer waits and makes it itself.
func (h *handing) post() {
	if err := os.Mkdir(h.spool, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	fi, err := os.Lstat(h.spool)
	if err != nil || !fi.IsDir() {
		return // not a directory (a link is never followed): no hand-off
	}
	f := h.x.file(h.issue)
	data, err := json.Marshal(f)
	if err != nil {
		return
	}
	end := askEnd
	if f.Change != nil {
		end = changeEnd
	}
	name := filepath.Join(h.spool, fmt.Sprintf("%020d-%d-%016x%s", f.At.UnixNano(), os.Getpid(), rand.Uint64(), end))
	if atomicfile.WriteVolatile(name, data, 0o600) != nil {
		return
	}
	h.name, h.posted = name, true
}

// withdraw takes the question or change back; false when a holder took
// it first.
func (h *handing) withdraw() bool {
	if err := os.Remove(h.name); errors.Is(err, fs.ErrNotExist) {
		return false
	}
	h.posted = false
	return true
}

// done is lock.Handoff's Done: true when a holder made the question or
// change and left its record.
func (h *handing) done() bool {
	if h.withdraw() {
		return false
	}
	h.taken = true
	return h.told()
}

// doneName is the file a holder leaves for the writer of the file name.
func doneName(name string) string { return baseName(name) + doneEnd }

// awaitHolder waits until the holder that took the question or change
// (its NAME.HOLDER.taken) lets its mark go, having told its writers or
// died, for twice the lock's wait budget (wait; 0: lock.DefaultWait) at
// most, as long as a writer whose holder keeps the issue's lock waits in
// its queue, or until ctx ends; then it reads what it was told (told).
func (h *handing) awaitHolder(ctx context.Context, wait time.Duration) bool {
	if wait <= 0 {
		wait = lock.DefaultWait
	}
	ctx, cancel := context.WithTimeout(ctx, 2*wait)
	defer cancel()
	prefix := filepath.Base(baseName(h.name)) + "."
	ents, _ := os.ReadDir(h.spool)
	for _, e := range ents {
		name := e.Name()
		holder, ok := strings.CutPrefix(name, prefix)
		if !ok || !strings.HasSuffix(holder, takenEnd) {
			continue
		}
		holder = strings.TrimSuffix(holder, takenEnd)
		h.holderEnded = lock.AwaitMark(ctx, filepath.Join(h.spool, holder+markEnd)) == nil
		_ = os.Remove(filepath.Join(h.spool, name))
		break
	}
	return h.told()
}

// unmark lets the holder's mark go: once its writers are told (tell), or
// when it ends without a word for them.
func (h *handing) unmark() {
	if h.mark != nil {
		_ = h.mark.Release()
		h.mark = nil
	}
}

// told reads what the holder that took the question or change left: true,
// with h.record set, when it made it.
func (h *handing) told() bool {
	name := doneName(h.name)
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
		h.notMade = true // told so: its writer makes it
		return false
	}
	c, err := DecodeRecord(d.Record)
	if err != nil || !h.x.made(c) {
		return false
	}
	h.record, h.unsynced = c, d.Unsynced
	return true
}

// handedOne is a question or change a holder took: it, where to leave
// what became of it, and its record on the ledger it was last made on
// (nil: not made).
type handedOne struct {
	x      handable
	done   string // what became of it, for its writer
	taken  string // its file, as taken
	record *Clarification
}

// take takes the questions and changes left in the hand-off directory
// that fits accepts (nil: all), oldest first, up to MaxHanded, for a
// ledger of issue; it removes files left there longer than handAfter. A
// file that cannot be read, of another version or another issue, a
// change of a kind this Store does not handle, is left alone, as is one
// fits refuses (its writer makes it).
func (h *handing) take(issue int, fits func(handable) bool) []handedOne {
	ents, err := os.ReadDir(h.spool)
	if err != nil {
		return nil
	}
	var batch []handedOne
	for _, e := range ents {
		name := e.Name()
		path := filepath.Join(h.spool, name)
		if !strings.HasSuffix(name, askEnd) && !strings.HasSuffix(name, changeEnd) || !e.Type().IsRegular() {
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
		x := h.handable(f, strings.HasSuffix(name, changeEnd))
		if x == nil {
			removeOld(path, e)
			continue
		}
		if fits != nil && !fits(x) {
			continue
		}
		if h.mark == nil {
			m, err := lock.NewMark(filepath.Join(h.spool, fmt.Sprintf("%d-%016x%s", os.Getpid(), rand.Uint64(), markEnd)))
			if err != nil {
				break // no mark, nothing taken: each writer makes its own
			}
			h.mark = m
			h.inherit.Add(m)
		}
		taken := takenName(path, h.mark)
		if os.Rename(path, taken) != nil {
			continue // its writer took it back
		}
		if f.PID > 0 && !lock.PIDAlive(f.PID) {
			_ = os.Remove(taken)
			continue // its writer is gone: nobody is told of it
		}
		batch = append(batch, handedOne{x: x, done: doneName(path), taken: taken})
	}
	return batch
}

// handable is what f, read from a file whose name ends as a change's or
// a question's, asks of the holder; nil when it cannot say (a change of a
// kind this Store does not handle, or of another issue).
func (h *handing) handable(f handedFile, change bool) handable {
	switch {
	case change && f.Change != nil:
		mk := h.changers[f.Change.Kind]
		if n, _, err := ParseID(f.Change.ID); err != nil || n != f.Issue || mk == nil {
			return nil
		}
		return &changing{ch: *f.Change, mk: mk}
	case !change && f.Question != nil && f.Change == nil:
		return &Asking{Question: *f.Question, At: f.At, Cap: f.Cap, Context: f.Context}
	}
	return nil
}

// drain takes every question and change left for a holder of l's issue
// (take) and makes them on l (makeAll).
func (h *handing) drain(l *Ledger) []handedOne {
	batch := h.take(l.IssueNumber, nil)
	makeAll(batch, l)
	return batch
}

// makeAll makes each question and change of batch on l, after the
// others, setting its record (nil when it cannot be made).
func makeAll(batch []handedOne, l *Ledger) {
	for i := range batch {
		batch[i].record = batch[i].x.handed(l)
	}
}

// findAll is makeAll on a ledger that may hold some of batch already:
// each found there is taken as made, the others made.
func findAll(batch []handedOne, l *Ledger) {
	for i := range batch {
		if batch[i].record = batch[i].x.findOpen(l); batch[i].record == nil {
			batch[i].record = batch[i].x.handed(l)
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

// tell leaves each writer of batch what became of its question or change,
// then lets h's mark go: called once the write that carries them is in
// place (kept: in the outbox), or has failed in a way that made none of
// them (each then told so: no record).
func (h *handing) tell(batch []handedOne, kept bool) {
	defer h.unmark()
	for _, one := range batch {
		d := doneFile{V: 1}
		if one.record != nil {
			raw, err := RecordJSON(one.record)
			if err != nil {
				continue // its writer looks in the ledger
			}
			d.Record = raw
			if kept {
				d.Unsynced = one.x.unsynced(one.record)
			}
		}
		data, err := json.Marshal(d)
		if err != nil {
			continue
		}
		if atomicfile.WriteVolatile(one.done, data, 0o600) == nil && one.taken != "" {
			_ = os.Remove(one.taken)
		}
	}
}
