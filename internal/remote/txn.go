package remote

import (
	"context"
	"errors"
	"time"

	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
)

// txn is one optimistic write on an issue's shared ledger, under the
// issue's lock, in four steps: plan (what the change is first made on: the
// local copy, the shared ledger handed in, or one fetched), queue turn
// (waiting behind the hosts that keep losing), attempt (the change made on
// the shared ledger and pushed) and settle (the result the local copy).
// run repeats the attempt until one ends it, a switch over how each ended.
type txn struct {
	r   *Replicator
	ctx context.Context
	f   *ledger.Locked
	fn  func(*ledger.Ledger) error // the change (nil: none, only the outbox delivered and the copy brought up to date)
	st  *SyncState

	given *Snapshot // the shared ledger handed in (a prefetch, Sync's), nil when fetched here
	snap  Snapshot  // the shared ledger the next attempt runs on
	// fast: the change is made on the local copy (Prefetch); anything but
	// a change the remote takes, and the shared ledger is fetched and the
	// change made again, as if the fast try had not been.
	fast bool

	q      Queue // the transport's queue (nil: none)
	tn     *turn // this write's place in q, once it has one: its waiter is removed by the push that lands it, or when it gives up (leave)
	inTurn bool  // the last attempt lost while tn still waits its turn

	// lostRace: an attempt made on the fetched shared ledger lost to
	// another host's push: the next, if it only adds records, is posted
	// as an intent instead of racing again (Intents)
	lostRace bool

	tries    int // the attempts made, this one included
	attempts int // [remote] attempts
	counted  int // losses counted against attempts: not those waited in turn
}

// step is how an attempt ended: what the transaction does next.
type step int

const (
	stepDone    step = iota // the transaction ends: the attempt's ledger and error are its result
	stepRefetch             // the fast try is over: fetch, and make the change again at once (not counted as an attempt)
	stepMoved               // another host's change landed first: wait a turn, fetch it and try again
	stepBusy                // another host's change landed first every time: BusyError
	stepOffline             // the remote went out of reach: the change goes to the outbox
)

// attempt is what one try of the change made on the shared ledger at
// txn.snap: the ledger, the commits to push (the outbox's replayed, then
// the change's), what became of the queued changes, and, when the last
// commit is exactly l encoded, final (the local copy is then written from
// it, not encoded again). err is the transaction's error (stepDone) or the
// remote's (stepOffline).
type attempt struct {
	l        *ledger.Ledger
	commits  []Commit
	outcomes []Outcome
	final    []byte
	err      error
	// before: the records as they were before the change, when nothing
	// else is pushed with it (the outbox empty): a push of it that loses
	// is posted as an intent instead, if an intent carries it (carried,
	// worked out only then: Intents)
	before map[string]*recState
}

// errRefetch is a fast try that cannot say whether the change applies:
// the copy may be behind, so the change is judged on the shared ledger.
var errRefetch = errors.New("the local copy may be behind")

// plan is the transaction of fn on f's issue, st its sync state, on the
// local copy when pre says it is the shared ledger (fast), else on the
// shared ledger pre holds if no other process settled a newer one since;
// anything else, fetch fetches.
func (r *Replicator) plan(ctx context.Context, f *ledger.Locked, fn func(*ledger.Ledger) error, st *SyncState, pre *prefetch) *txn {
	t := &txn{r: r, ctx: ctx, f: f, fn: fn, st: st}
	if pre != nil {
		t.given = pre.snap
		if pre.fast && fn != nil {
			t.snap, t.fast = r.fastCopy(f, st)
		}
	}
	if t.given != nil && !r.newer(ctx, *t.given, st.Head) {
		t.given = nil // read before another process settled a newer one: fetch
	}
	if !t.fast && t.given != nil {
		t.snap = *t.given
	}
	t.q, _ = r.transport.(Queue)
	return t
}

// fetch makes the issue's shared ledger, fetched now, what the next
// attempt runs on.
func (t *txn) fetch() error {
	var err error
	t.snap, err = t.r.transport.Fetch(t.ctx, t.f.Issue)
	return err
}

// fetchFailed ends the transaction on a fetch that failed: the change
// goes to the outbox when the remote is out of reach.
func (t *txn) fetchFailed(err error) (*ledger.Ledger, error) {
	if errors.Is(err, ErrOffline) {
		return t.r.updateOffline(t.f, t.fn, t.st, err.Error())
	}
	return nil, err
}

// contended reports whether others are writing the issue (a write of this
// host found another's change lately): a host that has been losing may be
// waiting its turn, and this write then waits behind it (joinBehind).
func (t *txn) contended() bool {
	st := t.st
	return t.q != nil && t.fn != nil && !t.fast && t.snap.Version != "" &&
		!st.Moved.IsZero() && t.r.store.Now().Sub(st.Moved.Time) < contendedFor
}

// joinBehind, on a contended issue with a live waiter, joins its queue;
// it reports whether this write now has a turn to wait.
func (t *txn) joinBehind() bool {
	if !t.contended() || !t.r.waiting(t.ctx, t.q, t.f.Issue) {
		return false
	}
	t.tn = t.r.join(t.ctx, t.q, t.f.Issue, t.snap.Version)
	return t.tn != nil
}

// leave removes this write's waiter, if it still has one (it gave up).
// Best effort, briefly (a remote gone away must not hold the command): a
// waiter left behind is taken for gone by the others within a second or
// so, and removed by the next lander.
func (t *txn) leave() {
	if t.tn == nil {
		return
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), 3*time.Second)
	defer cancel()
	_ = t.q.Leave(lctx, t.f.Issue, t.tn.leave())
}

// run tries the change until an attempt ends the transaction.
func (t *txn) run() (*ledger.Ledger, error) {
	t.attempts = max(t.r.transport.Attempts(), 1)
	for t.tries = 1; ; t.tries++ {
		a, next := t.try()
		switch next {
		case stepDone:
			return a.l, a.err
		case stepRefetch:
			// the shared ledger is fetched and the change made again on
			// it, as if the fast try had not been
			t.fast = false
			t.tries--
		case stepMoved:
			if err := t.queueTurn(); err != nil {
				return nil, err
			}
		case stepBusy:
			return nil, t.busy()
		case stepOffline:
			return t.r.updateOffline(t.f, t.fn, t.st, a.err.Error())
		}
		if err := t.fetch(); err != nil {
			return t.fetchFailed(err)
		}
	}
}

// try is one attempt: the change made on the shared ledger at t.snap,
// then, if it changed anything, pushed.
func (t *txn) try() (attempt, step) {
	a, err := t.make()
	switch {
	case err == errRefetch:
		return attempt{}, stepRefetch
	case err != nil:
		return attempt{err: err}, stepDone
	case len(a.commits) == 0:
		return t.unchanged(a)
	}
	return t.push(a)
}

// make decodes the shared ledger at t.snap, checks its history, replays
// the outbox on it and makes the change: the attempt, with the commits
// to push. errRefetch when the change fails on the fast copy.
func (t *txn) make() (attempt, error) {
	r, f := t.r, t.f
	if err := r.checkHistory(t.ctx, f, t.snap, t.st); err != nil {
		return attempt{}, err
	}
	l, commits, outcomes, err := r.prepare(f, t.snap, t.st)
	if err != nil {
		return attempt{}, err
	}
	a := attempt{l: l, commits: commits, outcomes: outcomes}
	before := l.Checkpoint()
	var beforeRec map[string]*recState
	if t.fn != nil {
		beforeRec = recStates(l)
		if ferr := t.fn(l); ferr != nil {
			if t.fast {
				return attempt{}, errRefetch
			}
			return attempt{}, r.refused(t.ctx, f, t.fn, ferr, t.snap, t.st, t.tries)
		}
	}
	if err := before.Check(r.transport.Name(f.Issue), l); err != nil {
		return attempt{}, err
	}
	if t.fn == nil {
		if len(commits) > 0 {
			a.final = commits[len(commits)-1].Data
		}
		return a, nil
	}
	if err := r.renumberedAway(t.ctx, f, beforeRec, l, outcomes, t.snap); err != nil {
		return attempt{}, err
	}
	if msg := changeMessage(beforeRec, l); msg != "" {
		data, err := ledger.Encode(l)
		if err != nil {
			return attempt{}, err
		}
		if len(a.commits) == 0 {
			a.before = beforeRec
		}
		a.commits = append(a.commits, Commit{Data: data, Message: msg})
		a.final = data
	}
	return a, nil
}

// unchanged ends an attempt with nothing to push. On the fast copy, which
// may be behind, the shared ledger is fetched to see whether it has
// something to change; otherwise the shared ledger settles as the local
// copy, unless it is that already.
func (t *txn) unchanged(a attempt) (attempt, step) {
	if t.fast {
		return attempt{}, stepRefetch
	}
	if t.snap.Version != t.st.Head || t.given != nil || len(a.outcomes) > 0 {
		if err := t.settle(a, nil, false, t.snap.Version); err != nil {
			return attempt{err: err}, stepDone
		}
	}
	return attempt{l: a.l}, stepDone
}

// push publishes the attempt's commits on t.snap (the waiters to leave
// removed by the same push, when it has a turn) and settles them if they
// landed. When settling will only write (nothing pulled to tell of,
// nothing to keep, no outcome), the local copy's new version is written
// while the push runs (early).
func (t *txn) push(a attempt) (attempt, step) {
	if t.lostRace {
		// others are writing: not a second race for the ref
		if posted, ok := t.post(a, ErrMoved); ok {
			return posted, stepDone
		}
	}
	var e *early
	if a.final != nil && t.st.Head != "" && t.snap.Version == t.st.Head && len(a.outcomes) == 0 {
		e = writeEarly(t.f, a.l, a.final)
	}
	var pushed Snapshot
	var err error
	oc, onCopy := t.r.transport.(OnCopy)
	switch {
	case t.tn != nil:
		pushed, err = t.q.PushLeaving(t.ctx, t.f.Issue, t.snap, a.commits, t.tn.leave())
	case t.fast && onCopy:
		pushed, err = oc.PushOnCopy(t.ctx, t.f.Issue, t.snap, a.commits)
	default:
		pushed, err = t.r.transport.Push(t.ctx, t.f.Issue, t.snap, a.commits)
	}
	written := e.end(err == nil)
	if err != nil {
		if posted, ok := t.post(a, err); ok {
			return posted, stepDone
		}
		return t.lost(err)
	}
	t.tn = nil // its waiter left with the push
	t.r.countStreak(t.st, t.fast)
	if err := t.settle(a, a.final, written, pushed.Version); err != nil {
		// Published: the change stands, and failing now would have it
		// made twice.
		t.r.note("the change to %s is on %s, but the local copy was not updated: %v; the next command brings it up to date", words.Issue(t.f.Issue), t.r.transport.Name(t.f.Issue), err)
	}
	return attempt{l: a.l}, stepDone
}

// post is what follows a push of a that another host's change overtook,
// when an intent carries a (an ask, an answer, an assumption...) and the
// remote takes intents: a is posted as one, on the version it was made
// on, and merged (Replicator.post), instead of made again. ok false: the
// push's loss is taken as ever.
func (t *txn) post(a attempt, err error) (attempt, bool) {
	// The fast try's loss says only that another host wrote since this
	// host's last change: it is made again at once on the shared ledger.
	if _, ok := t.r.transport.(Intents); !ok || t.fast || !errors.Is(err, ErrMoved) || a.before == nil || t.tn != nil {
		return attempt{}, false
	}
	added, changed, ok := carried(a.before, a.l)
	if !ok {
		return attempt{}, false
	}
	t.st.Moved = ledger.T(t.r.store.Now())
	l, perr := t.r.post(t.ctx, t.f, t.st, t.snap.Version, a.commits[len(a.commits)-1], added, changed...)
	if errors.Is(perr, errNoIntent) {
		return attempt{}, false
	}
	return attempt{l: l, err: perr}, true
}

// settle makes the attempt's ledger, the shared ledger at version, the
// local copy (Replicator.settle), from encoded when it is that ledger
// encoded; written when the early write has put it in place already.
func (t *txn) settle(a attempt, encoded []byte, written bool, version string) error {
	return t.r.settle(t.ctx, t.f, a.l, encoded, written, t.snap, version, t.st, a.outcomes)
}

// lost says what follows a push the remote did not take. Another host's
// change landed first (ErrMoved): it counts against the attempts unless
// this write waits its turn in the queue. On the fast copy, anything but
// the remote out of reach ends the fast try.
func (t *txn) lost(err error) (attempt, step) {
	moved := errors.Is(err, ErrMoved)
	if moved {
		t.st.Moved = ledger.T(t.r.store.Now())
		// a push on the copy refused by the intents' mark: others have
		// posted since, and this write posts beside them once fetched
		t.lostRace = !t.fast || errors.Is(err, errLeased)
	}
	if t.fast && !errors.Is(err, ErrOffline) {
		// Refused (another host has written since this host's last
		// change), or the copy's version could not be built on: fetch,
		// and make the change again at once.
		return attempt{}, stepRefetch
	}
	t.inTurn = t.tn.waiting(t.r.store.Now())
	if moved && !t.inTurn {
		t.counted++
	}
	switch {
	case moved && t.counted < t.attempts:
		return attempt{}, stepMoved
	case moved:
		return attempt{}, stepBusy
	case errors.Is(err, ErrOffline):
		return attempt{err: err}, stepOffline
	}
	return attempt{err: err}, stepDone
}

// queueTurn is the wait after a loss, before the change that landed first
// is fetched and the change tried again: none the first time (the window
// between fetch and push kept short); a host that keeps losing waits its
// turn in the issue's queue (Queue), or, on a remote without one, a
// little (sleepJitter), so that the hosts that collided spread out.
func (t *txn) queueTurn() error {
	if t.q != nil && t.tn == nil && t.snap.Version != "" && (t.tries > 1 || t.r.waiting(t.ctx, t.q, t.f.Issue)) {
		if t.tn = t.r.join(t.ctx, t.q, t.f.Issue, t.snap.Version); t.tn != nil {
			t.inTurn = true
		}
	}
	switch {
	case t.inTurn:
		if err := t.tn.wait(t.ctx, t.r.store.Now); err != nil && t.ctx.Err() != nil {
			return err
		}
	case t.tries > 1:
		// no queue, or past turnWait in it: back off at random
		return pause(t.ctx, t.tries-1)
	}
	return nil
}

// busy gives up after the last loss: the sync state keeps Moved, so that
// the next write fetches first.
func (t *txn) busy() error {
	if werr := t.r.writeSync(t.f, t.st); werr != nil {
		t.r.note("issue #%d: %v", t.f.Issue, werr)
	}
	return &BusyError{Remote: t.r.transport.Name(t.f.Issue), Attempts: t.tries}
}
