package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
)

// Intents is a Transport on which a write that adds records (an ask),
// thread entries (an answer) or assumptions to an issue other hosts keep writing does
// not race them for the ledger's ref: it posts its change on a ref of its
// own (an intent, which no other host writes, so the push is never
// refused), and the oldest waiting intent's host merges every intent
// posted so far in one push, each as its own commit, removing them in the
// same atomic push. A host whose intent another merged finds its question
// on the shared ledger by what was asked (origin), its answer by its
// thread entries, its assumption by the assumption (holds): it waits for one push, never for its turn to
// win a race, so hosts that share an issue neither fail nor starve, and
// the ids stay dense, assigned once, by the push that merges them.
type Intents interface {
	// Post publishes c, made on the shared version base, as an intent on
	// issue, named for when it was posted (now), and returns its name.
	Post(ctx context.Context, issue int, base string, c Commit, now time.Time) (string, error)
	// FetchIntents fetches issue's shared ledger and the intents waiting
	// on it, oldest first.
	FetchIntents(ctx context.Context, issue int) (Snapshot, []Intent, error)
	// PushMerging is Push, removing the intents named in the same push:
	// all of it or nothing, so that an intent is merged once.
	PushMerging(ctx context.Context, issue int, base Snapshot, commits []Commit, merged []string) (Snapshot, error)
}

// Intent is a change another host posted and waits to see merged: the
// ledger it was made on (Base) and the ledger after it (Data), both as
// untrusted as any shared ledger.
type Intent struct {
	Name   string
	Commit string
	Host   string // the host: line of its commit, the host that posted it ("" when none)
	Base   []byte // nil: it could not be read (it is removed, never merged); empty: made on no ledger (a commit with no parent)
	Data   []byte
	// Cap is the question cap its ask was checked against on the copy it
	// was made on (its commit's cap: line), checked again where it is
	// merged; nil when it names none
	Cap *ledger.Cap
}

// capLine is the line an intent's commit message carries for the
// question cap of the ask made under ctx ("" when none): "cap: MAX SINCE",
// SINCE the start of the asker's run (RFC 3339) or "-" for none.
func capLine(ctx context.Context) string {
	c, ok := ledger.CapOf(ctx)
	if !ok || c.Max <= 0 {
		return ""
	}
	since := "-"
	if c.Since != nil {
		since = c.Since.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("\n\ncap: %d %s", c.Max, since)
}

// parseCap reads the cap: line of an intent's commit message; nil when
// there is none it can read (the intent is then merged uncapped, as an
// intent of a host that checks no cap).
func parseCap(msg string) *ledger.Cap {
	for _, l := range strings.Split(msg, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "cap: ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 {
			return nil
		}
		max, err := strconv.Atoi(f[0])
		if err != nil || max <= 0 {
			return nil
		}
		c := &ledger.Cap{Max: max}
		if f[1] != "-" {
			t, err := time.Parse(time.RFC3339Nano, f[1])
			if err != nil {
				return nil
			}
			c.Since = &t
		}
		return c
	}
	return nil
}

// herdSpread is how far apart the intents of hosts that post together
// (those that lost one race for the ledger, or asked at one moment) land
// on the remote: their processes' start and CPU, not the network.
const herdSpread = 150 * time.Millisecond

// firstLook is how long a host waits after its post before it first
// looks at the intents, rtt its post's exchange: two exchanges on a fast
// remote, where the herd's spread is many exchanges; on a slow one half an
// exchange and the herd's spread (the look's own exchange reaches the
// remote after the herd's posts have), not two exchanges.
func firstLook(rtt time.Duration) time.Duration {
	return min(2*rtt, rtt/2+herdSpread)
}

// intentStall is how long an intent ahead of this write's may wait before
// this write merges it too: its host was killed or paused. Against a
// remote slower than a few hundred milliseconds an exchange, stallFor
// exchanges instead: a live host merges within about four.
var intentStall = 2 * time.Second

const stallFor = 8

// intentLife is the age past which an intent is removed unmerged: its
// host died waiting (it was never acknowledged), and a question it asked
// must not appear long after, when the next host asks. A host still
// waiting for it finds it gone and not merged, and makes its change again
// as a transaction.
var intentLife = time.Minute

// intentsRef is the ref prefix of issue's intents: under the queue's, so
// that the server rules for waiters (created and deleted by the hosts)
// hold for them too, in a directory of its own (a waiter's name holds no
// slash, so the waiters' code never takes one for a waiter).
func (g *Git) intentsRef(issue int) string { return g.queueRef(issue) + "/intent" }

// markRef is issue's intents' mark: the commit of the intent posted last
// (Post moves it). A push made on a host's local copy without a fetch
// leases it at what this host last fetched (PushOnCopy), so that the push
// fails once another host has posted an intent since: its host then posts
// beside the intents waiting instead of landing ahead of their merge. The
// queue takes no ref of that name for a waiter, and ignores it.
func (g *Git) markRef(issue int) string { return g.queueRef(issue) + "/mark" }

// markSpec is the refspec that fetches issue's mark, a pattern, so that a
// remote with none is no error.
func (g *Git) markSpec(issue int) string {
	m := g.markRef(issue) + "*"
	return "+" + m + ":" + m
}

// Post implements Intents: a commit holding the ledger after the change,
// on base, pushed to a ref of its own (created, never forced).
func (g *Git) Post(ctx context.Context, issue int, base string, c Commit, now time.Time) (string, error) {
	if !g.queued() {
		return "", errNoQueue
	}
	name := waiterName(now, g.host())
	ref := g.intentsRef(issue) + "/" + name
	var parents []string // none: made on no ledger (the issue had none yet)
	if base != "" {
		parents = []string{base}
	}
	_, err := g.publish(ctx, issue, parents, []Commit{c}, func(head string) error {
		// the mark moved with it (see markRef), not atomically: a mark the
		// remote refuses costs the hosts writing on their copies a look
		out, err := g.exchange(ctx, "push", "--porcelain", "--no-verify", "--force-with-lease="+ref+":", "--", g.Remote, head+":"+ref, "+"+head+":"+g.markRef(issue))
		if err != nil && landed(out, ref) {
			return nil
		}
		if err != nil && bytes.Contains(out, []byte(":"+ref+"\t")) {
			// the remote answered, and refused the ref (a rule, a hook):
			// not an outage
			return fmt.Errorf("remote %s refused the intent %s: %s", g.Remote, ref, firstLine(string(out)))
		}
		return err
	})
	return name, err
}

// FetchIntents implements Intents: one git fetch of the ledger's ref and
// the intents' (pruning those merged since), their names listed locally,
// and everything read through one git cat-file.
func (g *Git) FetchIntents(ctx context.Context, issue int) (Snapshot, []Intent, error) {
	if !g.queued() {
		return Snapshot{}, nil, errNoQueue
	}
	ref, prefix := g.Ref(issue), g.intentsRef(issue)
	if err := g.fetchRefs(ctx, []string{"--prune"}, "+"+ref+":"+ref, "+"+prefix+"/*:"+prefix+"/*", g.markSpec(issue)); err != nil {
		return Snapshot{}, nil, err
	}
	names, err := g.localNames(ctx, prefix)
	if err != nil {
		return Snapshot{}, nil, err
	}
	o, err := g.objects(ctx)
	if err != nil {
		return Snapshot{}, nil, err
	}
	defer o.close()
	sha, err := o.resolve(ref)
	if err != nil || sha == "" {
		return Snapshot{}, nil, err
	}
	_, data, err := g.readAt(o, issue, sha)
	if err != nil {
		return Snapshot{}, nil, err
	}
	var intents []Intent
	history := &firstParents{o: o, next: sha, seen: map[string]bool{}}
	for _, n := range names {
		intents = append(intents, g.readIntent(o, issue, n, prefix+"/"+n, history))
	}
	return Snapshot{Version: sha, Data: data}, intents, nil
}

// readIntent reads the intent name at ref: its commit, the ledger in it
// and in its parent, which must be a version of the shared ledger (on its
// history). One that cannot be read is returned with no Base.
func (g *Git) readIntent(o *objects, issue int, name, ref string, history *firstParents) Intent {
	in := Intent{Name: name}
	sha, err := o.resolve(ref)
	if err != nil || sha == "" {
		return in
	}
	in.Commit = sha
	c, data, err := g.readAt(o, issue, sha)
	if err != nil || len(c.Parents) > 1 || len(c.Parents) == 1 && !history.has(c.Parents[0]) {
		// a host posts its change on the version it settled, which the
		// shared ledger holds (or on none, when the issue had no ledger):
		// a change made on any other ledger says nothing of what it
		// changes in the shared one
		return in
	}
	base := []byte{} // no parent: made on no ledger
	if len(c.Parents) == 1 {
		if _, base, err = g.readAt(o, issue, c.Parents[0]); err != nil {
			return in
		}
	}
	// Its subject is not read: the merged commit's message is made from
	// the records it adds (intentChange), so that no intent puts words of
	// its own on the shared chain. Its cap: line is (see capAllows).
	_, host := parseMessage(c.Message)
	in.Host, in.Base, in.Data, in.Cap = host, base, data, parseCap(c.Message)
	return in
}

// firstParents is the shared ledger's history, read down the first
// parents from its head (next) only as far as has needs, and no further
// than maxLinear commits: an intent's parent is the head or a little
// behind it (an intent lives a minute), so one not met by then is not on
// it.
type firstParents struct {
	o    *objects
	next string // the next commit to read ("": the root, or the bound, met)
	seen map[string]bool
}

// has reports whether sha is on the history.
func (h *firstParents) has(sha string) bool {
	for !h.seen[sha] && h.next != "" {
		h.seen[h.next] = true
		c, err := h.o.commit(h.next)
		switch {
		case err != nil || len(c.Parents) == 0 || len(h.seen) >= maxLinear:
			h.next = ""
		default:
			h.next = c.Parents[0]
		}
	}
	return h.seen[sha]
}

// localNames lists the refs directly under prefix in the local
// repository, by name, sorted (localRefs).
func (g *Git) localNames(ctx context.Context, prefix string) ([]string, error) {
	refs, err := g.localRefs(ctx, prefix)
	return slices.Sorted(maps.Keys(refs)), err
}

// localRefs lists the refs directly under prefix in the local repository,
// each name with the object id it holds: read from the repository's files
// (its loose refs and packed-refs) where agentx knows where they are, else
// git for-each-ref.
func (g *Git) localRefs(ctx context.Context, prefix string) (map[string]string, error) {
	g.settings(ctx)
	if refs, ok := g.refFiles(prefix); ok {
		return refs, nil
	}
	out, err := g.git(ctx, nil, nil, "for-each-ref", "--format=%(objectname) %(refname)", prefix+"/")
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		id, ref, _ := strings.Cut(strings.TrimSpace(l), " ")
		if n, ok := strings.CutPrefix(ref, prefix+"/"); ok && n != "" && !strings.Contains(n, "/") {
			refs[n] = id
		}
	}
	return refs, nil
}

// PushMerging implements Intents: the ledger and the removal of the
// intents merged in one atomic push, each removal leased on the intent as
// FetchIntents fetched it. An intent removed meanwhile otherwise (a person,
// an attacker) fails the push, so that one its host has found gone
// unmerged (and so asks again) is never merged after.
func (g *Git) PushMerging(ctx context.Context, issue int, base Snapshot, commits []Commit, merged []string) (Snapshot, error) {
	prefix := g.intentsRef(issue)
	fetched, err := g.localRefs(ctx, prefix)
	if err != nil {
		return Snapshot{}, err
	}
	var del, leases []string
	for _, n := range merged {
		del = append(del, ":"+prefix+"/"+n)
		if id := fetched[n]; id != "" {
			leases = append(leases, prefix+"/"+n+":"+id)
		}
	}
	return g.push(ctx, issue, base, commits, del, leases...)
}

// posting is one write's intent, from its post to its merge.
type posting struct {
	r       *Replicator
	ctx     context.Context
	f       *ledger.Locked
	st      *SyncState
	it      Intents
	mine    []*ledger.Clarification // the records it added, as the caller holds them
	changed []*ledger.Clarification // the records it changed, likewise
	name    string                  // its intent
	at      time.Time               // when it was posted (the store's clock: its name)
	posted  time.Time               // and by the system's clock
	rtt     time.Duration           // one exchange with the remote, as its post took
}

// errNoIntent is a change the intents cannot carry (it does more than add
// records, or the local copy is not the shared ledger as settled): it runs
// as an optimistic transaction instead.
var errNoIntent = errors.New("not a change an intent carries")

// intentState reports whether a write on st's issue posts an intent: the
// issue is contended (a write of this host found another host's change
// lately), and the local copy is the shared ledger as settled, with
// nothing pending or refused.
func (r *Replicator) intentState(st *SyncState) bool {
	_, ok := r.transport.(Intents)
	return ok && st.Head != "" && st.Copy != "" && len(st.Pending) == 0 && st.Refused == nil &&
		!st.Moved.IsZero() && r.store.Now().Sub(st.Moved.Time) < fastAfter
}

// intentWrite makes fn on the local copy and, if an intent carries it
// (carried), posts it as an intent and waits until it is merged (by this host or
// another): the shared ledger with it is then the local copy, and the
// records fn added hold what the shared ledger holds. errNoIntent: fn
// ran, but the change is to be made as a transaction.
func (r *Replicator) intentWrite(ctx context.Context, f *ledger.Locked, fn func(*ledger.Ledger) error, st *SyncState) (*ledger.Ledger, error) {
	if fn == nil || !r.intentState(st) {
		return nil, errNoIntent
	}
	data, err := readCopy(f.Path, st)
	if err != nil {
		return nil, errNoIntent
	}
	l0, err := ledger.DecodeIssue(f.Path, f.Issue, data)
	if err != nil {
		return nil, errNoIntent
	}
	before := recStates(l0)
	cp := l0.Checkpoint()
	if fn(l0) != nil || cp.Check(f.Path, l0) != nil {
		return nil, errNoIntent // judged on the shared ledger
	}
	msg := changeMessage(before, l0)
	mine, changed, ok := carried(before, l0)
	if !ok || msg == "" {
		return nil, errNoIntent
	}
	enc, err := ledger.Encode(l0)
	if err != nil {
		return nil, err
	}
	return r.post(ctx, f, st, st.Head, Commit{Data: enc, Message: msg}, mine, changed...)
}

// lookWrite is a write of a host that has been writing on its local copy
// without a fetch for a while (streaking): it fetches the shared ledger and the
// intents waiting on it, and if any live one waits, posts fn as an intent
// beside them (intentWrite), the issue now taken as contended. Else
// (errNoIntent) the write is a transaction on the shared ledger fetched,
// as pre says.
func (r *Replicator) lookWrite(ctx context.Context, f *ledger.Locked, fn func(*ledger.Ledger) error, st *SyncState) (*ledger.Ledger, *prefetch, error) {
	snap, intents, err := r.transport.(Intents).FetchIntents(ctx, f.Issue)
	switch {
	case errors.Is(err, ErrOffline):
		return nil, &prefetch{offline: err}, errNoIntent
	case errors.Is(err, errNoQueue):
		return nil, nil, errNoIntent // no intents where the ledgers are branches: fetched as ever
	case err != nil:
		return nil, nil, err
	}
	now := r.store.Now()
	if snap.Version != st.Head || slices.ContainsFunc(intents, func(in Intent) bool {
		at, ok := waiterTime(in.Name)
		return ok && now.Sub(at) <= intentLife
	}) {
		st.Moved = ledger.T(now)
	}
	if snap.Version == st.Head {
		if l, err := r.intentWrite(ctx, f, fn, st); !errors.Is(err, errNoIntent) {
			return l, nil, err
		}
	}
	return nil, &prefetch{snap: &snap}, errNoIntent
}

// post posts c, a change made on the shared version base that adds the
// records mine and changes the records changed (both as the caller holds
// them), as an intent, and waits until it is merged. errNoIntent: it could
// not be posted (nothing was), or was removed unmerged.
func (r *Replicator) post(ctx context.Context, f *ledger.Locked, st *SyncState, base string, c Commit, mine []*ledger.Clarification, changed ...*ledger.Clarification) (*ledger.Ledger, error) {
	it, _ := r.transport.(Intents)
	p := &posting{r: r, ctx: ctx, f: f, st: st, it: it, mine: mine, changed: changed, at: r.store.Now()}
	c.Message += capLine(ctx)
	start := time.Now()
	var err error
	p.name, err = it.Post(ctx, f.Issue, base, c, p.at)
	p.posted = time.Now()
	switch {
	case errors.Is(err, ErrOffline):
		return p.offline(err)
	case err != nil:
		return nil, errNoIntent
	}
	p.rtt = time.Since(start)
	return p.await()
}

// readCopy returns the local copy when it is the shared ledger as settled
// (st.Copy).
func readCopy(path string, st *SyncState) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if copySum(data) != st.Copy {
		return nil, errNoIntent
	}
	return data, nil
}

// changedRecords returns the records l added to before, and those of
// before it changed (their JSON differs), in l's order. A record read
// sealed was not opened, so not changed.
func changedRecords(before map[string]*recState, l *ledger.Ledger) (added, changed []*ledger.Clarification) {
	for _, c := range l.Clarifications {
		was, ok := before[c.ID]
		switch {
		case !ok:
			added = append(added, c)
		case sealedAsBefore(was, c):
		default:
			if !l.Open(c) {
				continue // not readable: Appends says so
			}
			if b, err := ledger.RecordJSON(c); err != nil || string(b) != string(was.whole().raw) {
				changed = append(changed, c)
			}
		}
	}
	return added, changed
}

// carried returns the records l added to before and those of before it
// changed, ok when an intent carries the change: it adds records, and
// each record it changes gains entries in its thread (an answer, a
// follow-up, an escalation, a resolution) or assumptions (agentx's key:
// what the asker proceeds on), keeping those it had: what identifies the
// change on the shared ledger, whatever came after it there (holds). A
// change to a record that adds neither (to the rest of the agentx key
// alone) is made as a transaction.
func carried(before map[string]*recState, l *ledger.Ledger) (added, changed []*ledger.Clarification, ok bool) {
	added, changed = changedRecords(before, l)
	return added, changed, len(added)+len(changed) > 0 && identifiable(before, changed)
}

// identifiable reports whether each of the changed records gains thread
// entries or assumptions, keeping those it had (see carried).
func identifiable(before map[string]*recState, changed []*ledger.Clarification) bool {
	for _, c := range changed {
		was := before[c.ID].whole()
		if len(c.Thread) > was.thread {
			continue
		}
		if len(assumptions(c)) <= was.assumed {
			return false
		}
		// its assumptions before are kept, first
		w, err := ledger.DecodeRecord(was.raw)
		if err != nil || !hasAssumptions(assumptions(c)[:was.assumed], assumptions(w)) {
			return false
		}
	}
	return true
}

// holds reports whether cur, a record as a shared ledger holds it, carries
// the change that made c: c's thread (with the entries it added) begins
// cur's, cur only appended to c since (Appends' rule), and cur holds
// c's assumptions (in whatever order: an assumption lands on a record
// another change moved since, rebased). c is taken as written (its times
// as the ledger keeps them).
func holds(cur, c *ledger.Clarification) bool {
	if cur == nil {
		return false
	}
	raw, err := ledger.RecordJSON(c)
	if err != nil {
		return false
	}
	w, err := ledger.DecodeRecord(raw)
	return err == nil && appendsRecord(w, cur) == nil && hasAssumptions(assumptions(cur), assumptions(w))
}

// addedOnly returns the records l added to before, when that is all the
// change did (nil otherwise).
func addedOnly(before map[string]*recState, l *ledger.Ledger) []*ledger.Clarification {
	added, changed := changedRecords(before, l)
	if len(changed) > 0 {
		return nil
	}
	return added
}

// await waits until the intent is merged: a while for the hosts posting
// beside it (firstLook), their intents then seen by one fetch and merged
// in one push, then it fetches, and merges every intent waiting when none
// live is ahead of its own (leads), else waits again, about an exchange:
// the host ahead has fetched as this one did, and its push is then on the
// remote. A merge that loses to another host's push fetches again at once.
func (p *posting) await() (*ledger.Ledger, error) {
	rtt := p.rtt
	wait := firstLook(rtt)
	for {
		if err := p.sleep(jitter(wait)); err != nil {
			return nil, err
		}
		start := time.Now()
		snap, intents, err := p.it.FetchIntents(p.ctx, p.f.Issue)
		switch {
		case errors.Is(err, ErrOffline):
			return p.offline(err)
		case err != nil:
			return nil, err
		}
		if err := p.r.checkHistory(p.ctx, p.f, snap, p.st); err != nil {
			return nil, err
		}
		mine := slices.IndexFunc(intents, func(in Intent) bool { return in.Name == p.name })
		if mine < 0 {
			return p.merged(snap, nil)
		}
		if !p.leads(intents[:mine]) {
			wait = max(time.Since(start), rtt)
			continue
		}
		l, err := p.lead(snap, intents)
		if !errors.Is(err, ErrMoved) {
			return l, err
		}
		wait = 0 // another host's push landed first: look again at once
	}
}

// sleep waits d with the issue's local lock given back (Locked.Aside), so
// that this host's other writers of the issue post their changes beside
// this one instead of waiting for its merge, then reads the sync state
// again: they may have settled a newer version meanwhile (never one newer
// than the next fetch brings), or queued a change.
func (p *posting) sleep(d time.Duration) error {
	if d <= 0 {
		return nil
	}
	var slept error
	if err := p.f.Aside(p.ctx, func() { slept = sleepCtx(p.ctx, d) }); err != nil {
		// another process of this host holds the issue past the lock's
		// wait (paused, say): this change is posted, and may be merged
		return fmt.Errorf("%w (the change was posted to %s and may be merged there by another host: agentx sync brings in what the shared ledger holds)",
			err, p.r.transport.Name(p.f.Issue))
	}
	if slept != nil {
		return slept
	}
	st, err := ReadSync(p.r.store, p.f.Issue)
	if err != nil {
		return err
	}
	*p.st = *st
	return nil
}

// lead merges every intent waiting on the shared ledger at snap, and
// pushes them; ErrMoved when another host's push landed first.
func (p *posting) lead(snap Snapshot, intents []Intent) (*ledger.Ledger, error) {
	l, commits, names, err := p.combine(snap, intents)
	if err != nil {
		return nil, err
	}
	if len(commits) == 0 {
		// nothing left to merge, this write's own included (already on
		// the shared ledger, or not readable as an intent)
		return p.merged(snap, nil)
	}
	pushed, err := p.it.PushMerging(p.ctx, p.f.Issue, snap, commits, names)
	switch {
	case err == nil:
		return p.merged(pushed, l)
	case errors.Is(err, ErrOffline):
		return p.offline(err)
	}
	return nil, err
}

// leads reports whether this write merges the intents now: no live intent
// is ahead of its own, or its own has waited intentStall (stallFor
// exchanges, if longer).
func (p *posting) leads(ahead []Intent) bool {
	now := p.r.store.Now()
	stall := max(intentStall, stallFor*p.rtt)
	if time.Since(p.posted) > stall {
		// by the system's clock, which moves whatever the store's says
		// (AGENTX_NOW): a host whose own intent waited this long merges
		return true
	}
	for _, in := range ahead {
		if at, ok := waiterTime(in.Name); ok && now.Sub(at) <= stall {
			return false
		}
	}
	return true
}

// combine replays every intent, oldest first, on the shared ledger at
// snap, each as its own commit: the ledger, the commits, and the intents
// to remove (merged, or not readable as an intent: never merged).
func (p *posting) combine(snap Snapshot, intents []Intent) (*ledger.Ledger, []Commit, []string, error) {
	name := p.r.transport.Name(p.f.Issue)
	l, err := ledger.DecodeIssue(name+" at "+snap.Version, p.f.Issue, snap.Data)
	if err != nil {
		return nil, nil, nil, err
	}
	var commits []Commit
	var names []string
	now := p.r.store.Now()
	for _, in := range intents {
		names = append(names, in.Name)
		if at, ok := waiterTime(in.Name); !ok || now.Sub(at) > intentLife {
			// removed unmerged: see intentLife; a name not as Post makes
			// them does not say when it was posted, so it cannot show it
			// was posted since
			continue
		}
		q, ok := intentChange(p.f.Issue, in)
		if !ok || !capAllows(l, in.Cap, q) {
			continue
		}
		renames := map[string]string{}
		applied, _, err := replay(l, q, p.r.store.Now(), renames)
		if err != nil || !applied {
			continue
		}
		for from, to := range renames {
			q.Message = strings.ReplaceAll(q.Message, from, to)
		}
		data, err := ledger.Encode(l)
		if err != nil {
			return nil, nil, nil, err
		}
		commits = append(commits, Commit{Data: data, Message: q.Message})
	}
	return l, commits, names, nil
}

// capAllows reports whether the questions q adds, all of them together,
// fit under c (nil: no cap) on l, the ledger they would be merged into (an
// intent may carry several of one asker's, the questions other processes
// of its host handed to its writer): an ask checked on a
// copy a few asks behind is judged again here, and one past its asker's
// max_questions is removed unmerged (its host then makes it again on the
// shared ledger, where the cap refuses it).
func capAllows(l *ledger.Ledger, c *ledger.Cap, q Queued) bool {
	if c == nil {
		return true
	}
	more := map[string]int{} // the questions q adds so far, by asker
	for _, r := range q.Records {
		if !created(r.Before) {
			continue // a change to a question asked: no question more
		}
		rec, err := ledger.DecodeRecord(r.After)
		if err != nil || !c.Allows(l, rec.From, more[rec.From]) {
			return false
		}
		more[rec.From]++
	}
	return true
}

// intentChange is in as a queued change that adds records or changes
// records of the ledger it was made on, checked as a pulled commit is (it
// only appends: records added after the others, a record's thread
// appended to, its status moved as the transition table allows); its
// message names what it did, never what the intent's own message claims.
// Replayed, a change to a record lands only where the record is still as
// the intent found it, or beside another change when one of the two only
// added assumptions (rebased). ok false: not an intent to merge.
func intentChange(issue int, in Intent) (Queued, bool) {
	if in.Base == nil {
		return Queued{}, false
	}
	base, err1 := &ledger.Ledger{IssueNumber: issue}, error(nil) // made on no ledger
	if len(in.Base) > 0 {
		base, err1 = ledger.DecodeIssue("intent "+in.Name, issue, in.Base)
	}
	after, err2 := ledger.DecodeIssue("intent "+in.Name, issue, in.Data)
	if err1 != nil || err2 != nil || Appends(base, after) != nil {
		return Queued{}, false
	}
	before := recStates(base)
	added, changed, ok := carried(before, after)
	if !ok {
		return Queued{}, false
	}
	q := Queued{Message: changeMessage(before, after)}
	if in.Host != "" {
		// the merged commit's host: line names the host that merged it;
		// its subject keeps the one that asked, for remote log's readers
		q.Message += " (posted on " + in.Host + ")"
	}
	for _, c := range append(changed, added...) {
		raw, err := ledger.RecordJSON(c)
		if err != nil {
			return Queued{}, false
		}
		r := QueuedRecord{ID: c.ID, After: raw}
		if was, ok := before[c.ID]; ok {
			r.Before = was.whole().raw // a change replayed only onto the record as it was
		}
		q.Records = append(q.Records, r)
	}
	return q, true
}

// merged ends a posting whose intent is on the shared ledger at snap (l:
// that ledger, decoded, when this write pushed it): the records it added
// are found by what was asked and take their shared ids and content in
// the caller's hands, and the shared ledger becomes the local copy.
func (p *posting) merged(snap Snapshot, l *ledger.Ledger) (*ledger.Ledger, error) {
	if l == nil {
		var err error
		if l, err = ledger.DecodeIssue(p.r.transport.Name(p.f.Issue)+" at "+snap.Version, p.f.Issue, snap.Data); err != nil {
			return nil, err
		}
	}
	var own []string
	for _, c := range p.mine {
		i := findOrigin(l, c)
		if i < 0 {
			// removed unmerged (it could not be read there): made again
			// as a transaction
			return nil, errNoIntent
		}
		*c = *l.Clarifications[i]
		l.Clarifications[i] = c
		own = append(own, c.ID)
	}
	for _, c := range p.changed {
		cur := l.Find(c.ID) // opened, if it was read sealed
		if !holds(cur, c) {
			// removed unmerged (the record moved since it was made on
			// it, or it could not be read there): made again as a
			// transaction, on the record as it now stands
			return nil, errNoIntent
		}
		*c = *cur
		l.Clarifications[slices.Index(l.Clarifications, cur)] = c
		own = append(own, c.ID)
	}
	if len(p.st.Pending) > 0 || p.st.Refused != nil {
		// another writer of this host queued a change, or was refused,
		// while this one waited (sleep): the change is on the shared
		// ledger, and the local copy is for that writer's next command
		// to settle, with its outbox
		return l, nil
	}
	p.st.Moved = ledger.T(p.r.store.Now())
	p.r.countStreak(p.st, false)
	if err := p.r.settle(p.ctx, p.f, l, nil, false, snap, snap.Version, p.st, nil, own...); err != nil {
		p.r.note("the change to %s is on %s, but the local copy was not updated: %v; the next command brings it up to date", words.Issue(p.f.Issue), p.r.transport.Name(p.f.Issue), err)
	}
	return l, nil
}

// offline ends a posting the remote stopped answering: the change goes to
// the outbox, as the records fn added (the intent, if it was posted, may
// still be merged: the outbox's delivery then finds them there, by what
// was asked, and does not add them twice).
func (p *posting) offline(err error) (*ledger.Ledger, error) {
	mine, changed := p.mine, p.changed
	return p.r.updateOffline(p.f, func(l *ledger.Ledger) error {
		for _, c := range changed {
			i := slices.IndexFunc(l.Clarifications, func(x *ledger.Clarification) bool { return x.ID == c.ID })
			if i < 0 {
				return fmt.Errorf("%s is not on the local copy", c.ID)
			}
			l.Clarifications[i] = c
		}
		for _, c := range mine {
			c.ID = l.NextID()
			l.Clarifications = append(l.Clarifications, c)
		}
		return nil
	}, p.st, err.Error())
}

// findOrigin returns the index in l of the record asked as c was (its
// ledger.Origin: who, of whom, topic, when, the question), or -1.
func findOrigin(l *ledger.Ledger, c *ledger.Clarification) int {
	o := ledger.Origin(c)
	for i, x := range l.Clarifications {
		if x.From == c.From && ledger.Origin(x) == o {
			return i
		}
	}
	return -1
}

// jitter is d, give or take a quarter, so that hosts waiting alike do not
// fetch at the same moment.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d*3/4 + rand.N(d/2+1)
}

// sleepCtx waits d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// refFiles lists the refs directly under prefix from the repository's
// files, each name with its object id: the loose refs in its directory
// (which win) and the packed ones. ok false where that is not known to be
// all (no objects directory agentx writes to, refs kept another way, a
// file that cannot be read, a symbolic ref).
func (g *Git) refFiles(prefix string) (map[string]string, bool) {
	_, common := g.plainDirs()
	if common == "" {
		return nil, false
	}
	refs := map[string]string{}
	if !packedRefs(common, prefix, refs) || !looseRefs(filepath.Join(common, filepath.FromSlash(prefix)), refs) {
		return nil, false
	}
	return refs, true
}

// packedRefs adds to refs those directly under prefix in the packed-refs
// file of the repository's common directory; false when it cannot be read.
func packedRefs(common, prefix string, refs map[string]string) bool {
	packed, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	for _, l := range strings.Split(string(packed), "\n") {
		sha, ref, _ := strings.Cut(l, " ")
		if n, ok := strings.CutPrefix(ref, prefix+"/"); ok && n != "" && !strings.Contains(n, "/") && isHexID(sha) {
			refs[n] = sha
		}
	}
	return true
}

// looseRefs adds to refs the loose refs in dir; false when one cannot be
// read or is not an object id (a symbolic ref).
func looseRefs(dir string, refs map[string]string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		sha := strings.TrimSpace(string(data))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed meanwhile (a prune)
		case err != nil || !isHexID(sha):
			return false
		}
		refs[e.Name()] = sha
	}
	return true
}
