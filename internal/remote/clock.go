package remote

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// ClockFile, in the state directory's remote/, is what this host found
// comparing its clock with the times of the commits it fetched (local to
// this machine, derived: without it the comparison starts afresh).
const ClockFile = "clock.json"

// skewLapse is how long a disagreement stands with no commit of that host
// confirming it: one that never commits again does not hold this host's
// monitor back for good.
const skewLapse = 24 * time.Hour

// clockWalk bounds the commits of one ref checkClock looks at, down its
// first parents from the head to the head the last look found. Between two
// fetches of every ref (the interval, 10 s by default) a host writes a few
// commits on top of others' at most: a ledger write fetches its issue's
// ref alone.
const clockWalk = 16

// ClockState is ClockFile's content.
type ClockState struct {
	// Fetched is when the last fetch of every ref that was checked began,
	// on this host's clock, and Heads are the refs' heads it found: a
	// commit another host pushed after it was made after Fetched.
	Fetched ledger.Time    `json:"fetched,omitzero"`
	Heads   map[int]string `json:"heads,omitempty"`
	// Newest is the latest time of another host's commit fetched (none
	// from this host's future): evidence of how late it is at least.
	Newest ledger.Time `json:"newest,omitzero"`
	// Skews are the disagreements that stand, one per host.
	Skews []Skew `json:"skews,omitempty"`
}

// Skew is another host whose commit's time disagrees with this host's
// clock by more than [remote] max_skew: one of the two clocks is wrong,
// and which cannot be told from here.
type Skew struct {
	Host string `json:"host"` // the commit's host: line ("" when it names none)
	// Offset is the commit's time less when it was made by this host's
	// clock (its fetch bracket's nearer end): positive, the other host is
	// ahead of this one.
	Offset int64       `json:"offsetSeconds"`
	Commit string      `json:"commit"`
	Issue  int         `json:"issue"`
	Found  ledger.Time `json:"found"` // when first found, on this host's clock
	Seen   ledger.Time `json:"seen"`  // when last confirmed
}

// Holds reports whether the disagreement holds this host's stale rule
// back: the other host's clock is behind this one's, so this host's may
// be ahead, and judged by it another host's question would go stale too
// early. A host ahead of this one (a commit dated in this host's future)
// holds nothing: by this host's clock its questions only look younger, so
// they go stale late, never early; and anyone who can push could date a
// commit in the future to pause every host's checks.
func (s Skew) Holds() bool { return s.Offset < 0 }

// String says what was found, in one line (the host is a plain name).
func (s Skew) String() string {
	who := "an unnamed host"
	if s.Host != "" {
		who = "host " + s.Host
	}
	d := time.Duration(s.Offset) * time.Second
	way := "ahead of"
	if d < 0 {
		d, way = -d, "behind"
	}
	return fmt.Sprintf("the clock of %s is %s %s this host's (commit %.12s on issue #%d)", who, d, way, s.Commit, s.Issue)
}

func (g *Git) maxSkew() time.Duration {
	if g.MaxSkew > 0 {
		return g.MaxSkew
	}
	return workflow.DefaultRemoteMaxSkew
}

// OnSkew sets what is told, once, when another host's clock is first
// found to disagree with this host's: the event log records it.
func (r *Replicator) OnSkew(fn func(Skew)) { r.onSkew = fn }

// checkClock compares this host's clock with the times of the commits a
// fetch of every ref brought (heads, and under them down to the heads the
// last such fetch found: sinceLastLook; the fetch began at start, on this
// host's clock), and keeps what it finds in ClockFile. A commit another
// host pushed since the last such fetch was made between the two: a time
// before the last fetch began (less max_skew, and timeout for the push
// it took) or after now (plus max_skew) says the clocks disagree; within
// them, that they agree. A head in this host's future says so even
// without a last fetch. This host's own commits tell nothing: they carry
// its own clock.
func (r *Replicator) checkClock(ctx context.Context, g *Git, start time.Time, heads map[int]string) error {
	var st ClockState
	var found []Skew
	err := r.store.UpdateState(ctx, filepath.Join(SyncDir, ClockFile), &st, func() error {
		cc := &clockCheck{r: r, g: g, ctx: ctx, st: &st, now: r.store.Now(), max: g.maxSkew(),
			agree: map[string]bool{}, disagree: map[string]Skew{}}
		if st.Fetched.After(cc.now.Add(cc.max)) {
			// this host's clock moved back past its last check: what was
			// measured with it then does not hold
			st = ClockState{}
		}
		defer cc.close()
		for _, n := range slices.Sorted(maps.Keys(heads)) {
			if err := cc.lookRef(n, heads[n]); err != nil {
				return err
			}
		}
		found = cc.standing()
		st.Fetched, st.Heads = ledger.T(start), heads
		return nil
	})
	if r.onSkew != nil {
		for _, s := range found {
			r.onSkew(s)
		}
	}
	return err
}

// clockCheck is one checkClock pass, on ClockFile's content (st) under
// its lock, at now by this host's clock.
type clockCheck struct {
	r   *Replicator
	g   *Git
	ctx context.Context
	st  *ClockState
	now time.Time
	max time.Duration // [remote] max_skew
	o   *objects      // opened at the first ref that moved

	agree    map[string]bool // the hosts a commit found in agreement
	disagree map[string]Skew // per host, the commit found furthest off
}

func (cc *clockCheck) close() {
	if cc.o != nil {
		cc.o.close()
	}
}

// lookRef looks at the commits made on ref n since the last fetch of
// every ref, head being its head now: down the first parents from the
// head to what that fetch found. This host may have written on top of
// another host's commits since (a write fetches its issue's ref alone),
// and its own commits tell nothing. Where that fetch's head is not met
// within clockWalk commits (a new ref, a ref moved back or rewritten, a
// long run of writes), the head alone, as on a first look.
func (cc *clockCheck) lookRef(n int, head string) error {
	prev := cc.st.Heads[n]
	if prev == head {
		return nil // looked at already
	}
	if cc.o == nil {
		o, err := cc.g.objects(cc.ctx)
		if err != nil {
			return err
		}
		cc.o = o
	}
	if chain, ok := sinceLastLook(cc.o, head, prev); ok && !cc.st.Fetched.IsZero() {
		for _, c := range chain {
			cc.look(n, c.ID, "", c)
		}
		return nil
	}
	c, err := cc.o.commit(head)
	if err != nil {
		return nil // unreadable: the read of the ledger reports it
	}
	base := prev
	if base == "" { // a ref deleted and put back: the version settled here
		if ss, err := ReadSync(cc.r.store, n); err == nil {
			base = ss.Head
		}
	}
	cc.look(n, head, base, c)
	return nil
}

// look examines commit sha (c) of ref n, made since the last fetch of
// every ref unless the ref moved back to it from base ("": it did not
// move back).
func (cc *clockCheck) look(n int, sha, base string, c *commitInfo) {
	_, host := parseMessage(c.Message)
	if host == cc.g.host() {
		return
	}
	st, now, max := cc.st, cc.now, cc.max
	skew := Skew{Host: host, Commit: sha, Issue: n, Found: ledger.T(now), Seen: ledger.T(now)}
	switch {
	case c.Time.After(now.Add(max)):
		skew.Offset = int64(c.Time.Sub(now) / time.Second)
		cc.note(skew)
		return
	case c.Time.After(st.Newest.Time):
		st.Newest = ledger.T(c.Time)
	}
	if st.Fetched.IsZero() {
		return // nothing to bracket it with
	}
	if lower := st.Fetched.Add(-max - cc.g.Timeout); c.Time.Before(lower) {
		if base != "" {
			if back, err := cc.g.Descends(cc.ctx, base, sha); err != nil || back {
				return // the ref moved back to an older commit: not a new one
			}
		}
		skew.Offset = int64(c.Time.Sub(st.Fetched.Time) / time.Second)
		cc.note(skew)
		return
	}
	cc.agree[host] = true
}

// note keeps s as its host's disagreement, unless one further off was
// found.
func (cc *clockCheck) note(s Skew) {
	if was, ok := cc.disagree[s.Host]; !ok || abs(s.Offset) > abs(was.Offset) {
		cc.disagree[s.Host] = s
	}
}

// standing makes the disagreements found, and those that stood and were
// neither confirmed, contradicted nor lapsed, the ones that stand; it
// returns those first found now.
func (cc *clockCheck) standing() []Skew {
	var skews, found []Skew
	stood := map[string]bool{}
	for _, s := range cc.st.Skews {
		if d, ok := cc.disagree[s.Host]; ok {
			d.Found, stood[s.Host] = s.Found, true
			cc.disagree[s.Host] = d
			continue
		}
		if !cc.agree[s.Host] && cc.now.Sub(s.Seen.Time) < skewLapse {
			skews = append(skews, s)
		}
	}
	for _, host := range slices.Sorted(maps.Keys(cc.disagree)) {
		d := cc.disagree[host]
		skews = append(skews, d)
		if !stood[host] {
			found = append(found, d)
		}
	}
	cc.st.Skews = skews
	return found
}

// sinceLastLook returns the commits down the first parents from head to
// prev (prev not included), head first, if prev is met within clockWalk
// commits and every one of them can be read.
func sinceLastLook(o *objects, head, prev string) ([]*commitInfo, bool) {
	if prev == "" {
		return nil, false
	}
	var chain []*commitInfo
	for sha := head; len(chain) < clockWalk; {
		c, err := o.commit(sha)
		if err != nil || len(c.Parents) == 0 {
			return nil, false
		}
		chain = append(chain, c)
		if sha = c.Parents[0]; sha == prev {
			return chain, true
		}
	}
	return nil, false
}

// Skews returns the disagreements of other hosts' clocks with this host's
// that stand (see checkClock), the largest first. nil without a remote.
func Skews(store *ledger.Store) ([]Skew, error) {
	if Of(store) == nil {
		return nil, nil
	}
	st, err := readClock(store)
	if err != nil {
		return nil, err
	}
	return st.Standing(), nil
}

// Standing is st's disagreements, the largest first.
func (st ClockState) Standing() []Skew {
	out := slices.Clone(st.Skews)
	slices.SortStableFunc(out, func(a, b Skew) int { return int(abs(b.Offset) - abs(a.Offset)) })
	return out
}

// ClockPath is the file Skews reads.
func ClockPath(store *ledger.Store) string {
	return filepath.Join(store.Dir(), SyncDir, ClockFile)
}

func readClock(store *ledger.Store) (ClockState, error) {
	var st ClockState
	err := store.ReadState(filepath.Join(SyncDir, ClockFile), &st)
	return st, err
}

// keepArrived drops from st.Arrived the questions l no longer holds open.
func keepArrived(st *SyncState, l *ledger.Ledger) {
	if len(st.Arrived) == 0 {
		return
	}
	open := make(map[string]bool, len(st.Arrived))
	for _, c := range l.Clarifications {
		if _, ok := st.Arrived[c.ID]; ok && c.Status.Open() {
			open[c.ID] = true
		}
	}
	for id := range st.Arrived {
		if !open[id] {
			delete(st.Arrived, id)
		}
	}
}

// Judge is how this host's monitor tells the time of another host's
// question: the stale rule (stale, retry, escalate) runs at the time At
// returns. See docs/remote.md ("Clocks"). What it reads (ClockFile, the
// issues' sync states) is read again when the file changed, so that a
// monitor that runs for long (a wait) sees what later fetches found.
type Judge struct {
	store   *ledger.Store
	clock   cached[ClockState]
	arrived map[int]*cached[SyncState]
}

// cached is a state file's content as read when it had stamp.
type cached[T any] struct {
	stamp   [2]int64 // modification time and size; zero: not read
	v       T
	err     error
	checked time.Time // when the file was last looked at
}

// recheck is how long a cached state file is taken as it was: a monitor
// pass judges every question within it, with one look at each file.
const recheck = 250 * time.Millisecond

// read brings c up to the file at path (rel to the state directory),
// looking at it at most once per recheck.
func (c *cached[T]) read(store *ledger.Store, rel string) {
	if !c.checked.IsZero() && time.Since(c.checked) < recheck {
		return
	}
	c.checked = time.Now()
	var stamp [2]int64
	if fi, err := os.Stat(filepath.Join(store.Dir(), rel)); err == nil {
		stamp = [2]int64{fi.ModTime().UnixNano(), fi.Size()}
	} else {
		stamp = [2]int64{-1, -1} // none: read as empty
	}
	if stamp == c.stamp {
		return
	}
	var v T
	c.err = store.ReadState(rel, &v)
	c.v, c.stamp = v, stamp
}

// NewJudge returns the judge of store's workspace: nil without a remote
// (every question is judged at now).
func NewJudge(store *ledger.Store) *Judge {
	if Of(store) == nil {
		return nil
	}
	return &Judge{store: store, arrived: map[int]*cached[SyncState]{}}
}

// At returns the time at which the stale rule judges e, seen at now
// (zero: it takes no time-based action on e). This host's own question
// is judged by its clock: now. Another host's is judged
//
//   - not at all while a disagreement of clocks that holds stands (a
//     host behind this one: Skew.Holds);
//   - by its age since this host first saw it, when that is younger than
//     the age its times say (a host whose clock is behind asked it);
//   - and never later than the newest time of another host's commit
//     fetched: past its staleAfter only on that evidence.
func (j *Judge) At(e ledger.IndexEntry, now time.Time) time.Time {
	if j == nil {
		return now
	}
	a := j.arrived[e.Issue]
	if a == nil {
		a = &cached[SyncState]{}
		j.arrived[e.Issue] = a
	}
	a.read(j.store, syncFile(e.Issue))
	at, ok := a.v.Arrived[e.ID]
	if !ok && a.err == nil {
		return now // this host's own
	}
	j.clock.read(j.store, filepath.Join(SyncDir, ClockFile))
	if a.err != nil || j.clock.err != nil || slices.ContainsFunc(j.clock.v.Skews, Skew.Holds) {
		return time.Time{}
	}
	t := now
	if late := at.Sub(e.Asked.Time); late > 0 {
		t = now.Add(-late)
	}
	if newest := j.clock.v.Newest.Time; t.After(newest) {
		t = newest
	}
	return t
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
