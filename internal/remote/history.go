package remote

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
)

// Kinds of HistoryError.
const (
	HistoryRewound  = "rewound"  // the ref no longer descends from the version settled here
	HistoryDeleted  = "deleted"  // the ref is gone while this host holds a settled version
	HistoryInvalid  = "invalid"  // a commit does not only append
	HistoryUnsigned = "unsigned" // [remote] require_signed: a commit git cannot verify
)

// HistoryError is a shared ledger this host refuses to adopt: its ref was
// moved back or rewritten (a restored backup, a force push from an older
// clone), deleted (git push --mirror from a clone without refs/agentx/*),
// or a commit on it changes more than a write may (Commit, made by Host).
// Nothing is written and the local copy is kept.
type HistoryError struct {
	Kind    string `json:"kind"`
	Issue   int    `json:"issue"`
	Ref     string `json:"ref"`              // the remote and ref, as Transport.Name
	Settled string `json:"settled"`          // the version this host last settled
	Found   string `json:"found"`            // what the remote holds ("" when deleted)
	Commit  string `json:"commit,omitempty"` // the commit refused (invalid, unsigned)
	Host    string `json:"host,omitempty"`   // its host: line
	Why     string `json:"why,omitempty"`
}

func (e *HistoryError) Error() string {
	kept := "refused: nothing written, the local copy kept"
	switch e.Kind {
	case HistoryDeleted:
		return fmt.Sprintf("%s was deleted on the remote, but this host holds its version %s: %s", e.Ref, e.Settled, kept)
	case HistoryInvalid, HistoryUnsigned:
		host := e.Host
		if host == "" {
			host = "unknown"
		}
		return fmt.Sprintf("%s: commit %s (host: %s) %s: %s", e.Ref, e.Commit, safetext.Line(host), safetext.Line(e.Why), kept)
	}
	return fmt.Sprintf("%s was moved back or rewritten: it holds %s, which does not descend from %s, the version this host last settled: %s", e.Ref, e.Found, e.Settled, kept)
}

// Hint says what to do, in no front end's words: Kind, Issue and
// Settled are what a front end words its own advice from (the command
// line names its republish and log commands).
func (e *HistoryError) Hint() string {
	switch {
	case e.Settled == "" && e.Refused():
		return fmt.Sprintf("this host has no copy of issue #%d to put back: a host that holds a good one republishes it to the remote (the issue's remote log marks the refused commit)", e.Issue)
	case e.Refused():
		return fmt.Sprintf("the issue's remote log marks the commit; if this host's copy of issue #%d is right, republishing it puts it back on the remote (the ref then leaves the refused commit out)", e.Issue)
	}
	return fmt.Sprintf("if the remote lost the newer chain (a restored backup, or a forced push from an older clone), republishing this host's copy of issue #%d puts it back (what other hosts added since is kept, renumbered if need be); see docs/remote.md (protecting refs/agentx/*)", e.Issue)
}

// Refused reports whether a commit on the ref was refused (invalid or
// unsigned), rather than the ref moved back or deleted.
func (e *HistoryError) Refused() bool {
	return e.Kind == HistoryInvalid || e.Kind == HistoryUnsigned
}

// Refusal is a HistoryError kept in the issue's sync state until the
// remote holds a version this host can adopt again (or agentx sync
// --republish puts one there): agentx doctor reports it, agentx remote log
// marks its commit.
type Refusal struct {
	HistoryError
	At ledger.Time `json:"at"`
}

// Checker is a Transport that can check that version, fetched, only
// appends to settled, the version the local copy reflects: it descends
// from it, and every commit between the two is a legal change of its
// parent (Appends). The error is a *HistoryError when it does not.
// Renumbered maps the ids of records a republished chain moved (another
// host had given the same id) to their ids now.
type Checker interface {
	CheckPulled(ctx context.Context, issue int, settled, version string) (renumbered map[string]string, err error)
}

// OnRefused sets what is told, once per refusal, when a shared version is
// refused (a *HistoryError): the event log records it.
func (r *Replicator) OnRefused(fn func(issue int, e *HistoryError)) { r.onRefused = fn }

// checkHistory refuses snap, fetched under the issue's lock, unless it
// moves forward from st.Head: the refusal is recorded in the sync state
// (once), and returned.
//
// A host with no settled head (a fresh clone, a new CI runner) checks the
// whole chain from its root with the same checks before it adopts it: the
// merge gate is exactly such a host. Once adopted, the head is settled and
// later looks check only what came after it.
func (r *Replicator) checkHistory(ctx context.Context, f *ledger.Locked, snap Snapshot, st *SyncState) error {
	if snap.Version == st.Head || st.Head == "" && snap.Version == "" {
		return nil
	}
	var err error
	var renumbered map[string]string
	if snap.Version == "" {
		err = &HistoryError{Kind: HistoryDeleted, Issue: f.Issue, Ref: r.transport.Name(f.Issue), Settled: st.Head}
	} else if c, ok := r.transport.(Checker); ok {
		renumbered, err = c.CheckPulled(ctx, f.Issue, st.Head, snap.Version)
	}
	var he *HistoryError
	if !errors.As(err, &he) {
		if len(renumbered) > 0 {
			r.tellRenumbered(f.Issue, renumbered, snap, st)
		}
		return err
	}
	if st.Refused == nil || st.Refused.Found != he.Found || st.Refused.Kind != he.Kind || st.Refused.Commit != he.Commit {
		st.Refused = &Refusal{HistoryError: *he, At: ledger.T(r.store.Now())}
		if werr := r.writeSync(f, st); werr != nil {
			return errors.Join(he, werr)
		}
		if r.onRefused != nil {
			r.onRefused(f.Issue, he)
		}
	}
	return he
}

// tellRenumbered records the questions a republished chain moved (old id
// to new) among the sync state's outcomes, and tells OnOutcomes of them as
// a delivery of the outbox tells of those it renumbered: their askers learn
// the new ids (an event, an inbox item) instead of finding their question
// gone. snap is the chain's head, as pulled.
func (r *Replicator) tellRenumbered(issue int, renumbered map[string]string, snap Snapshot, st *SyncState) {
	l, err := ledger.DecodeIssue(r.transport.Name(issue), issue, snap.Data)
	if err != nil {
		l = nil // the pull that follows reports a ledger it cannot read
	}
	var outs []Outcome
	for _, old := range slices.Sorted(maps.Keys(renumbered)) {
		o := Outcome{Outcome: OutcomeRenumbered, ID: old, As: renumbered[old], At: ledger.T(r.store.Now()),
			Message: fmt.Sprintf("%s was given here and on another host: a republished chain keeps it as %s", old, renumbered[old])}
		if l != nil {
			if c := l.Find(o.As); c != nil {
				o.By = c.From
			}
		}
		outs = append(outs, o)
	}
	st.Outcomes = append(st.Outcomes, outs...)
	if l != nil && r.onOutcomes != nil {
		r.onOutcomes(issue, outs, l)
	}
}

// Appends checks that child, a commit's ledger, only appends to parent,
// its parent's: no record removed or reordered, what a record was asked
// (who, of whom, topic, when) unchanged, its thread's entries unchanged
// (only added to), every status move one the lifecycle allows, an entry
// written as a person only as an answer, a resolution or a follow-up
// (with the move it makes), and new records numbered on from the last.
func Appends(parent, child *ledger.Ledger) error {
	if err := parent.Checkpoint().Check(fmt.Sprintf("ledger issue %d", child.IssueNumber), child); err != nil {
		return err
	}
	if len(child.Clarifications) < len(parent.Clarifications) {
		return errors.New("it removes clarifications")
	}
	last := 0
	for i, p := range parent.Clarifications {
		c := child.Clarifications[i]
		if c.ID != p.ID {
			return fmt.Errorf("it puts %s where %s was", c.ID, p.ID)
		}
		if _, seq, err := ledger.ParseID(p.ID); err == nil {
			last = max(last, seq)
		}
		if p.SealedJSON() != nil && c.SealedJSON() != nil && string(p.SealedJSON()) == string(c.SealedJSON()) {
			continue
		}
		pw, err := wholeRecord(p)
		if err != nil {
			return err
		}
		cw, err := wholeRecord(c)
		if err != nil {
			return err
		}
		if err := appendsRecord(pw, cw); err != nil {
			return fmt.Errorf("%s: %w", c.ID, err)
		}
	}
	for _, c := range child.Clarifications[len(parent.Clarifications):] {
		last++
		if want := fmt.Sprintf("CLR-%d-%03d", child.IssueNumber, last); c.ID != want {
			return fmt.Errorf("it adds %s where the next id is %s: ids are dense", c.ID, want)
		}
		cw, err := wholeRecord(c)
		if err != nil {
			return err
		}
		for i, e := range cw.Thread {
			if ledger.IsHuman(e.From) && e.Type != ledger.Question {
				return fmt.Errorf("%s: its new thread entry %d is a %s written as a person", c.ID, i, e.Type)
			}
		}
	}
	return nil
}

// appendsRecord is Appends for one record that was in the parent.
func appendsRecord(p, c *ledger.Clarification) error {
	switch {
	case c.From != p.From || c.To != p.To:
		return fmt.Errorf("it changes who asked whom (%s of %s, was %s of %s)", c.From, c.To, p.From, p.To)
	case c.Topic != p.Topic || c.Blocking != p.Blocking || !c.Created.Equal(p.Created.Time) || c.RecordType != p.RecordType:
		return errors.New("it changes what was asked (topic, blocking or creation time)")
	case len(c.Thread) < len(p.Thread):
		return errors.New("it removes thread entries")
	case p.Status.Final() && (len(c.Thread) != len(p.Thread) || c.Status != p.Status):
		return fmt.Errorf("it changes a %s clarification", p.Status)
	}
	return appendsThread(p, c)
}

// appendsThread is appendsRecord for the thread: p's entries unchanged,
// and each one added as a person making the move an entry of its type
// makes.
func appendsThread(p, c *ledger.Clarification) error {
	for i, e := range p.Thread {
		n := c.Thread[i]
		if n.Round != e.Round || n.From != e.From || n.Type != e.Type || n.Body != e.Body || !n.Timestamp.Equal(e.Timestamp.Time) {
			return fmt.Errorf("it rewrites thread entry %d (a %s by %s)", i, e.Type, e.From)
		}
	}
	for i := len(p.Thread); i < len(c.Thread); i++ {
		e := c.Thread[i]
		if !ledger.IsHuman(e.From) {
			continue
		}
		move := map[ledger.EntryType]ledger.Status{ledger.Answer: ledger.Answered, ledger.Resolution: ledger.Resolved, ledger.Question: ledger.Pending}
		want, ok := move[e.Type]
		if !ok || c.Status != want || c.Status == p.Status {
			return fmt.Errorf("its new thread entry %d, a %s written as a person, goes with %s → %s: not a move a person makes", i, e.Type, p.Status, c.Status)
		}
	}
	return nil
}

// wholeRecord is c decoded whole (a sealed record is read from its bytes).
func wholeRecord(c *ledger.Clarification) (*ledger.Clarification, error) {
	if raw := c.SealedJSON(); raw != nil {
		return ledger.DecodeRecord(raw)
	}
	return c, nil
}

// CheckPulled implements Checker with git: version must descend from
// settled (git rev-list), every commit between them must have a parent and
// only append to its first parent (Appends), and with [remote]
// require_signed every one must pass git verify-commit. A refused version
// leaves settled kept under refs/agentx-settled/issue-N, so that git's
// garbage collection keeps this host's chain for agentx sync --republish.
func (g *Git) CheckPulled(ctx context.Context, issue int, settled, version string) (map[string]string, error) {
	renumbered, err := g.checkPulled(ctx, issue, settled, version)
	var he *HistoryError
	if errors.As(err, &he) && settled != "" {
		_, _ = g.git(ctx, nil, nil, "update-ref", g.keptRef(issue), settled)
	}
	return renumbered, err
}

// keptRef is where a refused issue's settled version is kept locally.
func (g *Git) keptRef(issue int) string {
	return "refs/agentx-settled/" + strings.TrimSuffix(File(issue), ".json")
}

// checkPulled is CheckPulled before the settled version is kept.
func (g *Git) checkPulled(ctx context.Context, issue int, settled, version string) (map[string]string, error) {
	fresh := settled == "" // no settled head: the whole chain, from its root
	if !fresh && !isHexID(settled) || !isHexID(version) {
		return nil, fmt.Errorf("remote %s: not a commit id", g.Remote)
	}
	pc := &pullCheck{g: g, ctx: ctx, issue: issue, version: version, fresh: fresh, decoded: map[string]*ledger.Ledger{},
		he: &HistoryError{Kind: HistoryRewound, Issue: issue, Ref: g.Name(issue), Settled: settled, Found: version}}
	var err error
	if pc.o, err = g.objects(ctx); err != nil {
		return nil, err
	}
	defer pc.o.close()
	commits, ok := linearSince(pc.o, settled, version)
	if !ok {
		commits, err = g.revList(ctx, settled, version)
	}
	if err == errUnknownCommit {
		return nil, nil // settled is not in the repository (cloned afresh): nothing to compare
	}
	if err != nil {
		return nil, err
	}
	if !fresh && !slices.ContainsFunc(commits, func(e revEntry) bool { return slices.Contains(e.parents, settled) }) {
		return nil, pc.he
	}
	var first *ledger.Ledger
	if !fresh {
		if _, first, err = pc.read(settled); err != nil {
			return nil, err
		}
	}
	last, lastCommit, err := pc.walk(commits)
	if err != nil || last == nil || fresh {
		return nil, err // fresh: nothing settled here to keep
	}
	renumbered, err := Keeps(first, last)
	if err != nil {
		return nil, pc.refuse(lastCommit, HistoryInvalid, "drops what this host settled: "+err.Error())
	}
	return renumbered, nil
}

// maxLinear bounds the commits linearSince walks.
const maxLinear = 1000

// linearSince is what revList lists when version is a chain of commits of
// one parent each down to settled (a chain from its root when settled is
// ""), as the ledgers' chains are but for a republished one: read through
// o, with no git rev-list. ok false when it is not (a merge, a chain that
// does not meet settled, longer than maxLinear, a commit not read): then
// git rev-list says.
func linearSince(o *objects, settled, version string) (commits []revEntry, ok bool) {
	for sha := version; len(commits) < maxLinear; {
		c, err := o.commit(sha)
		if err != nil || len(c.Parents) > 1 || len(c.Parents) == 0 && settled != "" {
			return nil, false
		}
		commits = append(commits, revEntry{sha, c.Parents})
		if len(c.Parents) == 0 || c.Parents[0] == settled {
			slices.Reverse(commits)
			return commits, true
		}
		sha = c.Parents[0]
	}
	return nil, false
}

// revEntry is a commit git rev-list listed, with its parents.
type revEntry struct {
	id      string
	parents []string
}

// errUnknownCommit is a commit git rev-list does not have.
var errUnknownCommit = errors.New("bad object")

// revList lists the commits of version not in settled ("": all of them),
// parents before children (git rev-list): errUnknownCommit when one of
// the two is not in the repository.
func (g *Git) revList(ctx context.Context, settled, version string) ([]revEntry, error) {
	args := []string{"rev-list", "--topo-order", "--reverse", "--parents", version}
	if settled != "" {
		args = append(args, "^"+settled)
	}
	out, err := g.git(ctx, nil, nil, args...)
	var ge *GitError
	if errors.As(err, &ge) && strings.Contains(ge.Stderr, "bad object") {
		return nil, errUnknownCommit
	}
	if err != nil {
		return nil, err
	}
	var commits []revEntry
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			commits = append(commits, revEntry{f[0], f[1:]})
		}
	}
	return commits, nil
}

// pullCheck is one check of the commits a pulled version of an issue's
// ledger adds (checkPulled), each commit's ledger decoded once.
type pullCheck struct {
	g       *Git
	ctx     context.Context
	issue   int
	version string
	fresh   bool          // nothing settled: the whole chain, from its root
	he      *HistoryError // the refusal, filled in by refuse
	o       *objects
	decoded map[string]*ledger.Ledger
}

// read returns commit sha and the ledger it holds.
func (pc *pullCheck) read(sha string) (*commitInfo, *ledger.Ledger, error) {
	c, data, err := pc.g.readAt(pc.o, pc.issue, sha)
	if err != nil {
		return nil, nil, err
	}
	if l := pc.decoded[sha]; l != nil {
		return c, l, nil
	}
	l, err := ledger.DecodeIssue(pc.g.Name(pc.issue)+" at "+sha, pc.issue, data)
	if err != nil {
		return nil, nil, err
	}
	pc.decoded[sha] = l
	return c, l, nil
}

// refuse is the HistoryError of commit c, of kind, saying why.
func (pc *pullCheck) refuse(c *commitInfo, kind, why string) error {
	he := pc.he
	he.Kind, he.Commit, he.Why = kind, c.ID, why
	_, he.Host = parseMessage(c.Message)
	return he
}

// walk checks every commit (check) and returns the version's ledger and
// commit: nil when the walk did not reach it, or stopped (see check).
func (pc *pullCheck) walk(commits []revEntry) (*ledger.Ledger, *commitInfo, error) {
	var last *ledger.Ledger
	var lastCommit *commitInfo
	for _, e := range commits {
		c, l, err := pc.check(e.id)
		if err != nil || c == nil {
			return nil, nil, err
		}
		if e.id == pc.version {
			last, lastCommit = l, c
		}
	}
	return last, lastCommit, nil
}

// check reads commit id and checks that its ledger only appends to its
// first parent's (Appends) and, with [remote] require_signed, that git
// can verify its signature. No commit and no error: the head of a fresh
// chain cannot be read, and reading it fails closed with its own, fuller
// error; the check stops there.
func (pc *pullCheck) check(id string) (*commitInfo, *ledger.Ledger, error) {
	c, l, err := pc.read(id)
	if err != nil {
		var ce *ledger.CorruptError
		switch {
		case errors.As(err, &ce) && pc.fresh && id == pc.version:
			return nil, nil, nil
		case errors.As(err, &ce):
			return nil, nil, pc.refuse(&commitInfo{ID: id}, HistoryInvalid, "cannot be read: "+ce.Err.Error())
		}
		return nil, nil, err
	}
	pl := &ledger.Ledger{IssueNumber: pc.issue} // a new chain starts from nothing
	if len(c.Parents) > 0 {
		if _, pl, err = pc.read(c.Parents[0]); err != nil {
			return nil, nil, pc.refuse(c, HistoryInvalid, "has a parent that cannot be read: "+err.Error())
		}
	}
	if err := Appends(pl, l); err != nil {
		return nil, nil, pc.refuse(c, HistoryInvalid, "does not only append: "+err.Error())
	}
	if pc.g.RequireSigned {
		if _, err := pc.g.git(pc.ctx, nil, nil, "verify-commit", id); err != nil {
			return nil, nil, pc.refuse(c, HistoryUnsigned, "has no signature git can verify ([remote] require_signed)")
		}
	}
	return c, l, nil
}

// Keeps checks that final, a version descending from settled, keeps every
// record of settled: under its id, only appended to (Appends), or, when a
// republished chain put another host's record there, under another id
// (renumbered: old id to new). A record is the same record when what was
// asked (who, of whom, topic, when, the first entry) is.
func Keeps(settled, final *ledger.Ledger) (map[string]string, error) {
	byOrigin := map[string]*ledger.Clarification{}
	for _, c := range final.Clarifications {
		w, err := wholeRecord(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.ID, err)
		}
		byOrigin[ledger.Origin(w)] = w
	}
	renumbered := map[string]string{}
	for _, s := range settled.Clarifications {
		sw, err := wholeRecord(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.ID, err)
		}
		if c := final.Find(s.ID); c != nil {
			if cw, err := wholeRecord(c); err == nil && ledger.Origin(cw) == ledger.Origin(sw) && appendsRecord(sw, cw) == nil {
				continue
			}
		}
		c := byOrigin[ledger.Origin(sw)]
		if c == nil {
			return nil, fmt.Errorf("%s is gone", s.ID)
		}
		if err := appendsRecord(sw, c); err != nil {
			return nil, fmt.Errorf("%s, now %s: %w", s.ID, c.ID, err)
		}
		renumbered[s.ID] = c.ID
	}
	return renumbered, nil
}
