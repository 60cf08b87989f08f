package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
)

// FetchedFile, in the state directory's remote/, records when the refs
// were last fetched (the throttle of Refresh; local to this machine).
const FetchedFile = "fetched.json"

// Report is what a Refresh did.
type Report struct {
	Fetched   bool     `json:"fetched"`            // the remote was asked (not throttled)
	Offline   string   `json:"offline,omitempty"`  // why it could not be reached
	Updated   []int    `json:"updated"`            // issues whose local copy changed
	Delivered []int    `json:"delivered"`          // issues whose outbox was delivered
	Pending   []int    `json:"pending"`            // issues whose outbox still holds changes
	Problems  []string `json:"problems,omitempty"` // issues that could not be brought up to date
	// AsOf, when the refs were not fetched (within the interval), is when
	// they last were: the local copies are as of then.
	AsOf time.Time `json:"as_of,omitzero"`
}

type fetched struct {
	At time.Time `json:"at"`
}

// due reports whether the refs were last fetched at least interval ago,
// and if so claims this fetch (so that processes starting together fetch
// once). A forced fetch claims it all the same. Not due, it returns when
// they last were.
func due(store *ledger.Store, interval time.Duration) (bool, time.Time) {
	path := filepath.Join(store.Dir(), SyncDir, FetchedFile)
	now := time.Now()
	if data, err := os.ReadFile(path); err == nil {
		var f fetched
		if json.Unmarshal(data, &f) == nil && now.Sub(f.At) < interval && f.At.Before(now.Add(time.Minute)) {
			return false, f.At
		}
	}
	data, _ := json.Marshal(fetched{At: now.UTC()})
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	_ = atomicfile.WriteVolatile(path, data, 0o644)
	return true, time.Time{}
}

// Refresh fetches every issue's ref, unless that was done less than the
// interval ago (force: regardless), makes each changed one the local copy,
// and delivers what the outbox holds, through rep (g is its transport).
// An unreachable remote is reported, not an error: the local copy stands.
func Refresh(ctx context.Context, rep *Replicator, g *Git, force bool) (Report, error) {
	r := Report{Updated: []int{}, Delivered: []int{}, Pending: []int{}}
	if rep.Offline() {
		return r, nil
	}
	store := rep.store
	if claimed, at := due(store, g.Interval); !claimed && !force {
		r.AsOf = at.UTC()
		return r, nil
	}
	r.Fetched = true
	defer g.hold(ctx)()
	start := store.Now()
	heads, err := g.FetchAll(ctx)
	if errors.Is(err, ErrOffline) {
		r.Offline = err.Error()
		r.Pending, _ = OutboxIssues(store)
		return r, nil
	}
	if err != nil {
		return r, err
	}
	rep.noteListed(heads)
	if err := rep.checkClock(ctx, g, start, heads); err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("checking this host's clock against the commits fetched: %v", err))
	}
	if force {
		// agentx sync tidies the queues: waiters stopped processes left.
		if _, err := g.PruneWaiters(ctx, store.Now()); err != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("removing waiters left on the remote: %v", err))
		}
	}
	p, err := rep.planRefresh(heads, &r)
	if err != nil {
		return r, err
	}
	for _, n := range sortedKeys(p.issues) {
		rep.refreshIssue(ctx, g, n, heads[n], p, &r)
	}
	return r, nil
}

// refreshPlan is which issues a Refresh brings up to date.
type refreshPlan struct {
	issues  map[int]bool
	waiting map[int]bool // their outbox holds changes
	gone    map[int]bool // their ref is gone from the remote
}

// planRefresh plans a Refresh after a fetch of every ref found heads: the
// issues whose ref moved from the version settled here, those whose
// outbox holds changes, and those whose ref is gone from the remote
// (fetched with --prune) while this host holds a settled version of it:
// checked, so that it is refused. A sync state that cannot be read is
// one of r's problems.
func (rep *Replicator) planRefresh(heads map[int]string, r *Report) (refreshPlan, error) {
	store := rep.store
	p := refreshPlan{issues: map[int]bool{}, waiting: map[int]bool{}, gone: map[int]bool{}}
	outbox, err := OutboxIssues(store)
	if err != nil {
		return p, err
	}
	for _, n := range outbox {
		p.waiting[n] = true
	}
	for n, sha := range heads {
		st, err := ReadSync(store, n)
		if err != nil {
			r.Problems = append(r.Problems, err.Error())
			continue
		}
		if st.Head != sha || p.waiting[n] {
			p.issues[n] = true
		}
	}
	for n := range p.waiting {
		p.issues[n] = true
	}
	synced, err := store.IssuesWithFile(SyncDir)
	if err != nil {
		return p, err
	}
	for _, n := range synced {
		if _, ok := heads[n]; ok || p.issues[n] {
			continue
		}
		if st, err := ReadSync(store, n); err == nil && st.Head != "" {
			p.issues[n], p.gone[n] = true, true
		}
	}
	return p, nil
}

// refreshIssue brings issue n up to the head a fetch of every ref found
// (sha; "": none) and delivers its outbox, as p planned, and says in r
// what became of it.
func (rep *Replicator) refreshIssue(ctx context.Context, g *Git, n int, sha string, p refreshPlan, r *Report) {
	var snap *Snapshot
	if sha != "" {
		s, err := g.Read(ctx, n, sha)
		if err != nil {
			r.Problems = append(r.Problems, err.Error())
			return
		}
		snap = &s
	}
	if p.gone[n] {
		snap = &Snapshot{}
	}
	if snap == nil && !p.waiting[n] {
		return
	}
	reached, err := rep.Sync(ctx, n, snap)
	switch {
	case err != nil:
		r.Problems = append(r.Problems, fmt.Sprintf("issue %d: %v", n, err))
	case !reached:
		r.Pending = append(r.Pending, n)
	case p.waiting[n]:
		r.Delivered = append(r.Delivered, n)
	default:
		r.Updated = append(r.Updated, n)
	}
}

// Watch brings issue's local copy up to the remote if its ref moved: one
// ls-remote, and a fetch only on a change (what clarify wait polls with).
// It reports whether the remote was reached.
func Watch(ctx context.Context, rep *Replicator, g *Git, issue int) (bool, error) {
	if rep.Offline() {
		return false, nil
	}
	sha, err := g.Head(ctx, issue)
	if errors.Is(err, ErrOffline) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	st, err := ReadSync(rep.store, issue)
	if err != nil {
		return true, err
	}
	if sha == st.Head && len(st.Pending) == 0 {
		return true, nil
	}
	return rep.Sync(ctx, issue, nil)
}

func sortedKeys(m map[int]bool) []int { return slices.Sorted(maps.Keys(m)) }
