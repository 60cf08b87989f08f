package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
)

// Replicator shares a store's ledgers through a Transport: it implements
// ledger.Replicator, so that ledger.Store.Update, still the one write path,
// runs each change as an optimistic transaction on the shared ledger
// (Apply), keeps it in the outbox when the remote is out of reach
// (updateOffline), and delivers the outbox, replayed on the newer shared
// ledger, when it is reached again.
type Replicator struct {
	store     *ledger.Store
	transport Transport
	offline   bool        // --offline: never reach the remote; writes go to the outbox
	warmed    atomic.Bool // Warm has started the settings' read

	mu       sync.Mutex
	unsynced []string // what this process's writes left in the outbox
	notes    []string // what went wrong after a change was acknowledged (Notes)

	onPulled   func(issue int, changes []Pulled)                     // told of changes made elsewhere (OnPulled)
	onRefused  func(issue int, e *HistoryError)                      // told of a shared version refused (OnRefused)
	onOutcomes func(issue int, outcomes []Outcome, l *ledger.Ledger) // told of queued changes delivered otherwise (OnOutcomes)
	onSkew     func(Skew)                                            // told of another host's clock found to disagree (OnSkew)
	overtaken  []Outcome                                             // what this process delivered otherwise than made (Overtaken)

	// listed: when this process last fetched every issue's ref (Refresh),
	// by the system's clock, and the issues it found
	listed     time.Time
	listedRefs map[int]string
}

// listedAbsentFor is how long after this process fetched every issue's
// ref a write on an issue it found no ref of takes that for the shared
// ledger (none yet) instead of fetching the issue's ref again: a command
// refreshes just before it writes.
const listedAbsentFor = time.Second

// noteListed notes the issues a fetch of every ref found (heads).
func (r *Replicator) noteListed(heads map[int]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listed, r.listedRefs = time.Now(), heads
}

// absent reports whether this process fetched every issue's ref a moment
// ago and found none of issue.
func (r *Replicator) absent(issue int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, found := r.listedRefs[issue]
	return r.listedRefs != nil && !found && time.Since(r.listed) < listedAbsentFor
}

// OnOutcomes sets what is told, under the issue's lock, of the queued
// changes a delivery of the outbox could not deliver as made (renumbered,
// superseded): once per delivery, before the sync state records it (so a
// crash between the two may tell them again, never lose them).
func (r *Replicator) OnOutcomes(fn func(issue int, outcomes []Outcome, l *ledger.Ledger)) {
	r.onOutcomes = fn
}

// Overtaken lists, in order, the queued changes this process delivered
// otherwise than they were made: each was acknowledged earlier (the
// command that made it succeeded, unsynced), and its author is told.
func (r *Replicator) Overtaken() []Outcome {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.overtaken)
}

// Attach shares store's ledgers through t: from now on every
// store.Update goes through the Replicator returned.
func Attach(store *ledger.Store, t Transport) *Replicator {
	if g, ok := t.(*Git); ok {
		if g.Now == nil {
			g.Now = store.Now
		}
		g.settingsState = store.Dir()
	}
	r := &Replicator{store: store, transport: t}
	store.SetReplicator(r)
	return r
}

// Of returns the Replicator store's ledgers are shared through, or nil
// when they are this machine's alone. Transport, Offline and SetOffline
// take a nil Replicator as one machine.
func Of(store *ledger.Store) *Replicator {
	r, _ := store.Replicator().(*Replicator)
	return r
}

// Transport returns what the ledgers are shared through (nil: none).
func (r *Replicator) Transport() Transport {
	if r == nil {
		return nil
	}
	return r.transport
}

// SetOffline keeps the store off the remote: reads are the local copy and
// writes go to the outbox.
func (r *Replicator) SetOffline(off bool) {
	if r != nil {
		r.offline = off
	}
}

// Offline reports whether the store stays off the remote.
func (r *Replicator) Offline() bool { return r != nil && r.offline }

// Unsynced lists, in order, the changes this process recorded but could
// not publish: they are in the outbox (SyncState.Pending).
func (r *Replicator) Unsynced() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.unsynced)
}

// NoteUnsynced adds msg to Unsynced: a change this process kept in the
// outbox, or a question it handed to another process of this host
// (ledger.Store.Ask), which kept it there.
func (r *Replicator) NoteUnsynced(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unsynced = append(r.unsynced, msg)
}

// Notes lists what went wrong after a change of this process was
// acknowledged (published, or durable in the outbox): the change stands,
// and the command that made it succeeded, so that no one makes it twice;
// the local copy it could not update is brought up to date by the next
// command.
func (r *Replicator) Notes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notes)
}

// note adds to Notes.
func (r *Replicator) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// prefetch is what a fetch made before the issue's lock was taken found:
// the shared ledger, or that the remote was out of reach; or, fast, that
// no fetch was made because the local copy is likely the shared ledger
// (fastCopy).
type prefetch struct {
	snap    *Snapshot
	offline error // an ErrOffline
	fast    bool
	// look: no fetch was made, because the local copy is the shared
	// ledger as settled but this host has been writing on it without a
	// fetch for streakLook: the intents waiting are fetched with it under
	// the lock (lookWrite)
	look bool
	// intent: no fetch was made because the issue is contended and the
	// change, if an intent carries it (carried), is posted as an intent
	// (Intents)
	intent bool
}

// fastAfter is how long after a write of this host found the shared
// ledger moved by another host (SyncState.Moved) its writes fetch before
// they push: an issue others are writing would mostly refuse a push made
// on the local copy.
const fastAfter = 30 * time.Second

// warmer is a Transport with settings to read before its first commit
// (Git: whether it signs), which Prefetch reads while the change is made.
type warmer interface{ warm(ctx context.Context) }

// Warm reads, in the background, the settings a commit depends on (Git:
// whether git signs, where the objects go), for a command about to write:
// started before the command makes its change, so that its commit does
// not wait for them. Nothing without a remote, or offline.
func (r *Replicator) Warm(ctx context.Context) {
	if r == nil || r.offline || r.warmed.Swap(true) {
		return
	}
	if w, ok := r.transport.(warmer); ok {
		go w.warm(ctx)
	}
}

// Prefetch implements ledger.Replicator: it fetches issue's shared ledger
// before its lock is taken, so that a remote slow to answer holds up only
// this command, not every other writer of the issue on this host. Under
// the lock the snapshot is used if it is no older than what the local copy
// reflects (another process may have settled a newer one meanwhile), and a
// push it is too old for is refused by the remote and tried again. nil
// when there is nothing to fetch (--offline).
//
// A write on an issue whose local copy is the shared ledger as this host
// last settled it, with nothing pending and no other host seen writing it
// lately, fetches nothing: the change is made on the copy and pushed with
// a lease on that version, which the remote refuses if it moved (then the
// shared ledger is fetched and the change made again). An uncontended
// write costs a push, not a fetch and a push.
func (r *Replicator) Prefetch(ctx context.Context, issue int) (any, error) {
	if !r.offline {
		if st, err := ReadSync(r.store, issue); err == nil && r.fastState(st) {
			r.Warm(ctx)
			return &prefetch{fast: true}, nil
		} else if err == nil && r.intentState(st) {
			r.Warm(ctx)
			return &prefetch{intent: true}, nil
		} else if _, ok := r.transport.(Intents); ok && err == nil && r.settledAlone(st) {
			r.Warm(ctx)
			return &prefetch{look: true}, nil // streaking
		} else if err == nil && st.Head == "" && r.absent(issue) {
			// no ledger of the issue on the remote, as fetched a moment
			// ago: its first version is pushed with a lease on none
			r.Warm(ctx)
			return &prefetch{snap: &Snapshot{}}, nil
		}
	}
	return r.prefetch(ctx, issue)
}

// fastState reports whether st allows a write on the local copy without
// a fetch first: a settled version, nothing pending or refused, a copy
// recorded, no other host's change found by a write lately, and not
// writing so for streakLook already (streaking).
func (r *Replicator) fastState(st *SyncState) bool {
	return r.settledAlone(st) && !r.streaking(st)
}

// settledAlone reports whether st is a settled version, with nothing
// pending or refused, a copy recorded, and no other host's change found
// by a write lately.
func (r *Replicator) settledAlone(st *SyncState) bool {
	return st.Head != "" && st.Copy != "" && len(st.Pending) == 0 && st.Refused == nil &&
		(st.Moved.IsZero() || r.store.Now().Sub(st.Moved.Time) >= fastAfter || st.Moved.After(r.store.Now()))
}

// streakLook is how long a host keeps writing on its local copy without
// a fetch, each write within streakGap of the one before, before a write
// fetches again. A host writing that often wins every race for the
// ledger's ref (a push against another's fetch and push), so the host
// merging the intents other hosts posted would keep losing to it: its
// next write fetches the intents too, and finding some waiting, posts its
// own beside them. A host writing alone pays one fetch each streakLook it
// keeps writing that fast.
const (
	streakLook = time.Second
	streakGap  = 2 * time.Second
)

// streaking reports whether st's host has been writing on the local copy
// without a fetch for streakLook, the last write within streakGap.
func (r *Replicator) streaking(st *SyncState) bool {
	now := r.store.Now()
	return !st.StreakFrom.IsZero() && r.inStreak(st, now) && now.Sub(st.StreakFrom.Time) >= streakLook
}

// inStreak reports whether st's last write on the local copy without a
// fetch was within streakGap before now.
func (r *Replicator) inStreak(st *SyncState, now time.Time) bool {
	return !st.StreakAt.IsZero() && now.Sub(st.StreakAt.Time) < streakGap && !st.StreakAt.After(now)
}

// countStreak counts a write that landed in st's host's streak: fast, a
// push made on the local copy without a fetch, which carries the streak
// on; else the write fetched, and a streak may start from it: the copy is
// as fresh as that fetch, so the time without one counts from there (from
// the first fast write after it, a host that won a race and then wrote
// on its copy four times in a second, 300 ms an exchange, never looked:
// the host merging the others' intents lost its first push to it).
func (r *Replicator) countStreak(st *SyncState, fast bool) {
	now := r.store.Now()
	switch {
	case fast && r.inStreak(st, now) && !st.StreakFrom.IsZero():
		st.StreakAt = ledger.T(now)
	default:
		st.StreakFrom, st.StreakAt = ledger.T(now), ledger.T(now)
	}
}

// fastCopy returns the shared ledger at st.Head from the local copy, when
// it is (fastState, and the file is the one settled: its SHA-256 is
// st.Copy); ok false otherwise.
func (r *Replicator) fastCopy(f *ledger.Locked, st *SyncState) (Snapshot, bool) {
	if !r.fastState(st) {
		return Snapshot{}, false
	}
	data, err := os.ReadFile(f.Path)
	if err != nil || copySum(data) != st.Copy {
		return Snapshot{}, false
	}
	return Snapshot{Version: st.Head, Data: data}, true
}

// copySum is SyncState.Copy of a local copy's content.
func copySum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (r *Replicator) prefetch(ctx context.Context, issue int) (*prefetch, error) {
	if r.offline {
		return nil, nil
	}
	snap, err := r.transport.Fetch(ctx, issue)
	switch {
	case errors.Is(err, ErrOffline):
		return &prefetch{offline: err}, nil
	case err != nil:
		return nil, err
	}
	return &prefetch{snap: &snap}, nil
}

// FetchNow is Prefetch that always fetches (nil, the remote out of reach:
// Apply finds it so): for a look at the shared ledger as it is now.
func (r *Replicator) FetchNow(ctx context.Context, issue int) (any, error) {
	pre, err := r.prefetch(ctx, issue)
	if pre == nil || err != nil {
		return nil, err
	}
	return pre, nil
}

// Apply implements ledger.Replicator: the change fn, made under the
// issue's lock (f) on the shared ledger, published, and the result written
// as the local copy; or, the remote out of reach, made on the local copy
// and kept in the outbox.
func (r *Replicator) Apply(ctx context.Context, f *ledger.Locked, fn func(*ledger.Ledger) error, prefetched any) (*ledger.Ledger, error) {
	pre, _ := prefetched.(*prefetch)
	return r.update(ctx, f, fn, pre)
}

// Sync brings issue's local copy up to the shared ledger and delivers what
// its outbox holds. With snap (from a fetch of every issue) it is used as
// the shared ledger instead of fetching this one. It reports whether the
// remote was reached.
func (r *Replicator) Sync(ctx context.Context, issue int, snap *Snapshot) (bool, error) {
	if err := ledger.ValidateIssue(issue); err != nil {
		return false, err
	}
	if r.offline {
		return false, nil
	}
	if snap == nil {
		got, err := r.prefetch(ctx, issue)
		if err != nil {
			return false, err
		}
		if got.offline != nil {
			return false, nil
		}
		snap = got.snap
	}
	f, err := r.store.Lock(ctx, issue)
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Release() }()
	if _, err := r.update(ctx, f, nil, &prefetch{snap: snap}); err != nil {
		return false, err
	}
	// reached: the remote answered and holds what the outbox held
	st, err := ReadSync(r.store, issue)
	if err != nil {
		return false, err
	}
	return len(st.Pending) == 0, nil
}

// update is a change (fn; nil: none, only the outbox delivered and the
// local copy brought up to date) under the issue's lock: the optimistic
// transaction (txn), or, the remote out of reach, the outbox.
func (r *Replicator) update(ctx context.Context, f *ledger.Locked, fn func(*ledger.Ledger) error, pre *prefetch) (*ledger.Ledger, error) {
	st, err := ReadSync(r.store, f.Issue)
	if err != nil {
		return nil, err
	}
	if h, ok := r.transport.(holder); ok {
		defer h.hold(ctx)()
	}
	l, pre, err := r.beforeTxn(ctx, f, fn, st, pre)
	if !errors.Is(err, errNoIntent) {
		return l, err
	}
	t := r.plan(ctx, f, fn, st, pre)
	if !t.fast && t.given == nil {
		if err := t.fetch(); err != nil {
			return t.fetchFailed(err)
		}
	}
	r.noteFound(ctx, fn, st, t.snap.Version)
	defer t.leave()
	if t.joinBehind() {
		if err := t.tn.wait(ctx, r.store.Now); err != nil && ctx.Err() != nil {
			return nil, err
		}
		if err := t.fetch(); err != nil {
			return t.fetchFailed(err)
		}
	}
	return t.run()
}

// beforeTxn is what an update does before its transaction: the look of
// a host that has been writing on its copy without a fetch (lookWrite),
// the outbox when the remote is out of reach, an intent on a busy issue
// (intentWrite). errNoIntent: none of them ended the write, which is a
// transaction, on what pre now says.
func (r *Replicator) beforeTxn(ctx context.Context, f *ledger.Locked, fn func(*ledger.Ledger) error, st *SyncState, pre *prefetch) (*ledger.Ledger, *prefetch, error) {
	if pre != nil && pre.look && !r.offline {
		l, next, err := r.lookWrite(ctx, f, fn, st)
		if !errors.Is(err, errNoIntent) {
			return l, nil, err
		}
		pre = next
	}
	switch {
	case r.offline:
		l, err := r.updateOffline(f, fn, st, "--offline")
		return l, nil, err
	case pre != nil && pre.offline != nil:
		l, err := r.updateOffline(f, fn, st, pre.offline.Error())
		return l, nil, err
	case pre != nil && pre.intent:
		if l, err := r.intentWrite(ctx, f, fn, st); !errors.Is(err, errNoIntent) {
			return l, nil, err
		}
		pre = nil // a transaction, on the shared ledger fetched now
	}
	return nil, pre, errNoIntent
}

// noteFound notes in st what the shared ledger at version, fetched for a
// write (fn) or a read, says of others writing the issue: a write that
// finds another host's change since this host's last marks the issue
// busy (Moved); a read, when it is a fresh one (noteBusy).
func (r *Replicator) noteFound(ctx context.Context, fn func(*ledger.Ledger) error, st *SyncState, version string) {
	switch {
	case fn != nil && st.Head != "" && version != st.Head:
		st.Moved = ledger.T(r.store.Now())
	case fn == nil && version != "" && version != st.Head:
		r.noteBusy(ctx, st, version)
	}
}

// noteBusy, for a read that brings in the shared ledger at version, notes
// the issue as busy (Moved) when that version is another host's commit
// made less than fastAfter ago: this host's next write then takes the
// path of a busy issue (an intent, for an ask) instead of pushing on its
// copy, which would land before the other hosts' merges (it needs one
// exchange to their two) and keep delaying them. A read bringing in an
// old change says nothing of the next write. The commit's time is the
// other host's clock: one in this host's future counts as now.
func (r *Replicator) noteBusy(ctx context.Context, st *SyncState, version string) {
	a, ok := r.transport.(Authored)
	if !ok {
		return
	}
	at, foreign, err := a.Committed(ctx, version)
	now := r.store.Now()
	if err != nil || !foreign || now.Sub(at) >= fastAfter {
		return
	}
	if at.After(now) {
		at = now
	}
	if st.Moved.IsZero() || at.After(st.Moved.Time) {
		st.Moved = ledger.T(at)
	}
}

// holder is a Transport whose reads during one write can share one
// process (Git: git cat-file).
type holder interface {
	hold(ctx context.Context) (release func())
}

// waiting reports whether a live waiter is in issue's queue.
func (r *Replicator) waiting(ctx context.Context, q Queue, issue int) bool {
	_, names, err := q.Waiters(ctx, issue)
	now := r.store.Now()
	return err == nil && slices.ContainsFunc(names, func(n string) bool { ok, gone := waiterState(n, now); return ok && !gone })
}

// join adds this write to issue's queue as a waiter at version (a commit
// the remote has); nil when it cannot (a remote that refuses the queue's
// refs: the write backs off at random instead).
func (r *Replicator) join(ctx context.Context, q Queue, issue int, version string) *turn {
	now := r.store.Now()
	name, err := q.Join(ctx, issue, version, now)
	if err != nil {
		return nil
	}
	return &turn{q: q, issue: issue, name: name, since: now}
}

// renumberedAway refuses a change made to an id the outbox has just given
// up (another host had taken it; the queued record it meant is delivered
// under another id): it would change the other host's record.
func (r *Replicator) renumberedAway(ctx context.Context, f *ledger.Locked, before map[string]*recState, l *ledger.Ledger, outcomes []Outcome, snap Snapshot) error {
	for _, o := range outcomes {
		if o.Outcome != OutcomeRenumbered {
			continue
		}
		c := l.Find(o.ID)
		if c == nil {
			continue
		}
		if was := before[o.ID].whole(); was != nil {
			if b, err := ledger.RecordJSON(c); err == nil && bytes.Equal(b, was.raw) {
				continue
			}
		}
		winner, err := r.update(ctx, f, nil, &prefetch{snap: &snap})
		if err != nil {
			return err
		}
		return &SupersededError{Issue: f.Issue, Changed: []string{o.ID}, Winner: winner,
			Err: fmt.Errorf("%s was given while the remote was out of reach and another host had taken it: that question is now %s; run the command again on %s", o.ID, o.As, o.As)}
	}
	return nil
}

// pause is how a write waits after losses in a row (tests watch it).
var pause = sleepJitter

// sleepJitter waits after the losses-th loss in a row: 10 ms doubling up
// to 640 ms, half of it random, so that hosts that collided do not collide
// again.
func sleepJitter(ctx context.Context, losses int) error {
	d := 10 * time.Millisecond << min(losses-1, 6)
	return sleepCtx(ctx, d/2+rand.N(d/2+1))
}

// settle makes l, the shared ledger at version, the local copy, and
// records that the outbox is delivered. base is the shared version l was
// made on: what it changed since st.Head was made elsewhere (tellPulled).
//
// own are the records this host's change made that base holds already
// (an intent merged there): they are not told as made elsewhere.
func (r *Replicator) settle(ctx context.Context, f *ledger.Locked, l *ledger.Ledger, encoded []byte, written bool, base Snapshot, version string, st *SyncState, outcomes []Outcome, own ...string) error {
	if err := keepUnshared(f.Path, st); err != nil {
		return err
	}
	r.tellPulled(ctx, f, base, st, own)
	if len(outcomes) > 0 {
		if r.onOutcomes != nil {
			r.onOutcomes(f.Issue, outcomes, l)
		}
		r.mu.Lock()
		r.overtaken = append(r.overtaken, outcomes...)
		r.mu.Unlock()
	}
	if encoded == nil {
		var err error
		if encoded, err = ledger.Encode(l); err != nil {
			return err
		}
	}
	if !written {
		if err := f.Write(l, encoded); err != nil {
			return err
		}
	}
	st.Head, st.Pending, st.Refused, st.Copy = version, nil, nil, copySum(encoded)
	keepArrived(st, l)
	st.Outcomes = append(st.Outcomes, outcomes...)
	for _, o := range outcomes {
		if o.Outcome == OutcomeRenumbered {
			if st.Renumbered == nil {
				st.Renumbered = map[string]string{}
			}
			st.Renumbered[o.ID] = o.As
		}
	}
	return r.writeSync(f, st)
}

// keepUnshared keeps a copy of a ledger written before the remote mode
// (never synced, nothing pending) that is about to be replaced by the
// shared one: issue-N.json.local, once.
func keepUnshared(path string, st *SyncState) error {
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
func (r *Replicator) prepare(f *ledger.Locked, snap Snapshot, st *SyncState) (*ledger.Ledger, []Commit, []Outcome, error) {
	issue := f.Issue
	if snap.Version == "" {
		// The remote has no ledger of the issue: the local copy, with what
		// is queued, is its first version.
		l, err := f.Read()
		if err != nil {
			return nil, nil, nil, err
		}
		var commits []Commit
		if len(l.Clarifications) > 0 {
			data, err := ledger.Encode(l)
			if err != nil {
				return nil, nil, nil, err
			}
			commits = append(commits, Commit{Data: data, Message: fmt.Sprintf("issue-%d: the ledger as it was kept locally", issue)})
		}
		return l, commits, nil, nil
	}
	// The shared ledger is as untrusted as any file: the same decoder and
	// integrity checks as a local one.
	l, err := ledger.DecodeIssue(r.transport.Name(issue)+" at "+snap.Version, issue, snap.Data)
	if err != nil {
		return nil, nil, nil, err
	}
	var commits []Commit
	var outcomes []Outcome
	renames := map[string]string{}
	for _, p := range st.Pending {
		applied, outs, err := replay(l, p, r.store.Now(), renames)
		for from, to := range renames {
			p.Message = strings.ReplaceAll(p.Message, from, to)
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: outbox of issue %d: %w", SyncPath(r.store, issue), issue, err)
		}
		outcomes = append(outcomes, outs...)
		if applied {
			data, err := ledger.Encode(l)
			if err != nil {
				return nil, nil, nil, err
			}
			commits = append(commits, Commit{Data: data, Message: p.Message})
		}
	}
	return l, commits, outcomes, nil
}

// updateOffline is a write the remote did not take (out of reach, or
// moving too fast): the change is made on the local copy and kept in the
// outbox, to be published by the next command that reaches the remote.
func (r *Replicator) updateOffline(f *ledger.Locked, fn func(*ledger.Ledger) error, st *SyncState, why string) (*ledger.Ledger, error) {
	l, err := f.Read()
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return l, nil
	}
	beforeRec := recStates(l)
	if err := l.Change(f.Path, fn); err != nil {
		return nil, err
	}
	msg := changeMessage(beforeRec, l)
	if msg == "" {
		return l, nil
	}
	p := Queued{Message: msg, At: ledger.T(r.store.Now()), Why: why}
	for _, c := range l.Clarifications {
		if c.Sealed() {
			continue
		}
		after, err := ledger.RecordJSON(c)
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
	if err := r.writeSync(f, st); err != nil {
		return nil, err
	}
	r.NoteUnsynced(msg)
	f.KeptInOutbox()
	if err := f.Write(l, nil); err != nil {
		r.note("the change to %s is in the outbox, but the local copy was not updated: %v; the next command that reaches the remote brings it up to date", words.Issue(f.Issue), err)
	}
	return l, nil
}

// refused turns the error of a change that did not apply to the shared
// ledger into a SupersededError when it did apply to what its caller had
// seen (the local copy, or the version an earlier attempt fetched): that
// is, another host got there first. The shared ledger becomes the local
// copy either way, and what the outbox held is delivered.
func (r *Replicator) refused(ctx context.Context, f *ledger.Locked, fn func(*ledger.Ledger) error, ferr error, snap Snapshot, st *SyncState, attempt int) error {
	if attempt == 1 && snap.Version == st.Head && len(st.Pending) == 0 {
		return ferr // it ran on what its caller had seen
	}
	var local *ledger.Ledger
	if l, err := f.Read(); err == nil && l.Undecodable() == nil {
		local = l
	}
	// Deliver the outbox and refresh the local copy, without the change.
	winner, err := r.update(ctx, f, nil, &prefetch{snap: &snap})
	if err != nil || local == nil {
		return ferr
	}
	localRec := recStates(local)
	if fn(local) != nil {
		return ferr
	}
	if len(addedOnly(localRec, local)) > 0 {
		// an ask: it supersedes nothing, and is refused for what it is
		// (a question cap other hosts' questions filled, say)
		return ferr
	}
	var changed []string
	for _, c := range winner.Clarifications {
		was, ok := localRec[c.ID]
		if !ok || c.Sealed() && was.status != c.Status {
			changed = append(changed, c.ID)
			continue
		}
		if !c.Sealed() {
			if b, err := ledger.RecordJSON(c); err == nil && !bytes.Equal(b, was.whole().raw) {
				changed = append(changed, c.ID)
			}
		}
	}
	if len(changed) == 0 {
		return ferr
	}
	return &SupersededError{Issue: f.Issue, Changed: changed, Winner: winner, Err: ferr}
}

// early is the local copy's new version written while the push that
// decides it runs (writeEarly): it takes the copy's place once the push
// has landed, and is dropped otherwise.
type early struct {
	landed chan bool
	done   chan error
}

// writeEarly starts writing l, encoded, as f's ledger, to take its place
// once end says the push landed. Nothing may change l until end returns.
func writeEarly(f *ledger.Locked, l *ledger.Ledger, encoded []byte) *early {
	e := &early{landed: make(chan bool, 1), done: make(chan error, 1)}
	go func() {
		e.done <- f.WriteAfter(l, encoded, func() error {
			if <-e.landed {
				return nil
			}
			return errNotLanded
		})
	}()
	return e
}

// errNotLanded drops an early write whose push did not land.
var errNotLanded = errors.New("the push did not land")

// end tells the early write whether its push landed, waits for it, and
// reports whether it took the local copy's place. A nil early reports
// false: settle then writes the copy itself, as it does when the early
// write failed.
func (e *early) end(landed bool) bool {
	if e == nil {
		return false
	}
	e.landed <- landed
	return <-e.done == nil && landed
}

// MayLand implements what ledger.Store asks of a Replicator when the
// process that took a change of this host's (group commit) ended without
// a word, it and its git commands gone: whether that change may still
// reach the shared ledger. It may when this host's outbox holds it (or a
// refused version waits to be put back), or an intent waiting on the
// remote does (another host merges it); the remote out of reach, or
// anything not read, is taken as may. find says whether a ledger holds
// the change.
func (r *Replicator) MayLand(ctx context.Context, issue int, find func(*ledger.Ledger) *ledger.Clarification) (bool, error) {
	st, err := ReadSync(r.store, issue)
	if err != nil {
		return true, err
	}
	if st.Refused != nil {
		return true, nil
	}
	for _, q := range st.Pending {
		l := &ledger.Ledger{IssueNumber: issue}
		for _, rec := range q.Records {
			c, err := ledger.DecodeRecord(rec.After)
			if err != nil {
				return true, nil
			}
			l.Clarifications = append(l.Clarifications, c)
		}
		if find(l) != nil {
			return true, nil
		}
	}
	if r.offline {
		return true, nil // --offline: the remote is not looked at
	}
	it, ok := r.transport.(Intents)
	if !ok {
		return false, nil // no intents: the outbox is all that could bring it
	}
	_, intents, err := it.FetchIntents(ctx, issue)
	switch {
	case errors.Is(err, errNoQueue):
		return false, nil // no intents where the ledgers are branches
	case err != nil:
		return true, err
	}
	for _, in := range intents {
		if in.Base == nil {
			continue // not readable as an intent: removed, never merged
		}
		l, err := ledger.DecodeIssue("intent "+in.Name, issue, in.Data)
		if err != nil {
			continue
		}
		if find(l) != nil {
			return true, nil
		}
	}
	return false, nil
}
