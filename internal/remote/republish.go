package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/ledger"
)

// Republished is what Republish did for one issue.
type Republished struct {
	Issue      int      `json:"issue"`
	Was        string   `json:"was"`                  // what the remote held ("" deleted)
	Head       string   `json:"head"`                 // what it holds now
	Merged     bool     `json:"merged"`               // what the other chain added was kept
	Renumbered []string `json:"renumbered,omitempty"` // "CLR-5-002 as CLR-5-004"
	Superseded []string `json:"superseded,omitempty"` // other chain's changes that no longer applied
}

// republisher is a Transport that can put a chain back on a ref that was
// moved off it: a commit of data on parents, pushed with a lease on found
// (what the ref holds; "" that it does not exist).
type republisher interface {
	Read(ctx context.Context, issue int, sha string) (Snapshot, error)
	ForkPoint(ctx context.Context, a, b string) (string, error)
	Republish(ctx context.Context, issue int, parents []string, found string, c Commit) (Snapshot, error)
}

// ErrNothingRefused is Republish on an issue whose remote holds a version
// this host adopts: there is nothing to put back.
var ErrNothingRefused = errors.New("the remote holds a version this host adopts: nothing to republish")

// Republish puts back on the remote the chain this host last settled for
// issue, when the remote's ref was refused (rewound, deleted, or given a
// commit that does not only append). What a rewound or recreated chain
// added since it forked from this one (another host's acknowledged
// questions and answers) is kept: replayed on this host's version like an
// outbox (a new question takes the next free id, renumbered; a change to a
// record this host's version moved on is superseded), in one merge commit
// whose parents are this host's version and the other chain, so that the
// hosts that settled either adopt it. A refused commit is left out, with
// what followed it. The push leases the ref at what was found: a ref that
// moved meanwhile is not overwritten.
//
// Another host moving the ref meanwhile (pushing, or putting its own chain
// back) makes it look again, up to [remote] attempts times, then a
// *BusyError: nothing written, run it again.
func (r *Replicator) Republish(ctx context.Context, issue int) (Republished, error) {
	pub, ok := r.transport.(republisher)
	if !ok || r.offline {
		return Republished{Issue: issue}, errors.New("republish needs the remote (not --offline)")
	}
	f, err := r.store.Lock(ctx, issue)
	if err != nil {
		return Republished{Issue: issue}, err
	}
	defer func() { _ = f.Release() }()
	attempts := max(r.transport.Attempts(), 1)
	for attempt := 1; ; attempt++ {
		out, err := r.republish(ctx, f, pub)
		switch {
		case !errors.Is(err, ErrMoved):
			return out, err
		case attempt >= attempts:
			return out, &BusyError{Remote: r.transport.Name(issue), Attempts: attempt}
		}
		if err := sleepJitter(ctx, attempt); err != nil {
			return out, err
		}
	}
}

// republish is one try of Republish, under the issue's lock (f).
func (r *Replicator) republish(ctx context.Context, f *ledger.Locked, pub republisher) (Republished, error) {
	issue := f.Issue
	out := Republished{Issue: issue}
	st, err := ReadSync(r.store, issue)
	if err != nil {
		return out, err
	}
	if st.Head == "" {
		return out, fmt.Errorf("issue %d: this host has settled no version of the shared ledger: nothing to republish", issue)
	}
	snap, err := r.transport.Fetch(ctx, issue)
	if err != nil {
		return out, err
	}
	out.Was = snap.Version
	he, err := r.refusal(ctx, f, snap, st)
	if err != nil {
		return out, err
	}
	mine, err := pub.Read(ctx, issue, st.Head)
	if err != nil {
		return out, err
	}
	name := r.transport.Name(issue)
	l, err := ledger.DecodeIssue(name+" at "+st.Head, issue, mine.Data)
	if err != nil {
		return out, err
	}
	parents := []string{st.Head}
	if he.Kind == HistoryRewound {
		merged, err := r.mergeOther(ctx, pub, issue, l, st.Head, snap, &out)
		if err != nil {
			return out, err
		}
		if merged {
			parents = append(parents, snap.Version)
		}
	}
	data, err := ledger.Encode(l)
	if err != nil {
		return out, err
	}
	msg := fmt.Sprintf("issue-%d: republished over %s", issue, shortID(snap.Version))
	if len(out.Renumbered) > 0 {
		msg += "; renumbered " + strings.Join(out.Renumbered, ", ")
	}
	pushed, err := pub.Republish(ctx, issue, parents, snap.Version, Commit{Data: data, Message: msg})
	if err != nil {
		return out, err
	}
	out.Head = pushed.Version
	// Adopt it as any version pulled (checked, the outbox replayed on it).
	if _, err := r.update(ctx, f, nil, &prefetch{snap: &pushed}); err != nil {
		return out, err
	}
	return out, nil
}

// refusal is why the shared ledger at snap is refused (checkHistory):
// ErrNothingRefused when it is not.
func (r *Replicator) refusal(ctx context.Context, f *ledger.Locked, snap Snapshot, st *SyncState) (*HistoryError, error) {
	herr := r.checkHistory(ctx, f, snap, st)
	var he *HistoryError
	if !errors.As(herr, &he) {
		if herr != nil {
			return nil, herr
		}
		return nil, fmt.Errorf("issue %d: %w", f.Issue, ErrNothingRefused)
	}
	return he, nil
}

// mergeOther replays on l, this host's version, what other (a chain that
// does not descend from settled) added since the two forked: whole new
// records under the next free ids, changes to shared records where l
// still holds them as the fork did. A chain with a commit that does not
// only append is not merged (false).
func (r *Replicator) mergeOther(ctx context.Context, pub republisher, issue int, l *ledger.Ledger, settled string, other Snapshot, out *Republished) (bool, error) {
	base, theirs, err := r.forked(ctx, pub, issue, settled, other)
	if theirs == nil || err != nil {
		return false, err
	}
	m := &chainMerge{r: r, l: l, base: base, other: other, out: out, ours: map[string]int{}}
	// What was asked identifies a record whatever its id: an earlier
	// republish may have given it another id on one side.
	for i, c := range l.Clarifications {
		if w, err := wholeRecord(c); err == nil {
			m.ours[ledger.Origin(w)] = i
		}
	}
	for _, c := range theirs.Clarifications {
		if ok, err := m.take(c); !ok || err != nil {
			return false, err
		}
	}
	out.Merged = true
	return true, nil
}

// forked returns the version settled and other forked from (base; empty
// when they share none) and other's ledger: nil, and no error, when other
// is not to be merged (it does not only append since the fork, or cannot
// be read).
func (r *Replicator) forked(ctx context.Context, pub republisher, issue int, settled string, other Snapshot) (base, theirs *ledger.Ledger, err error) {
	name := r.transport.Name(issue)
	fork, err := pub.ForkPoint(ctx, settled, other.Version)
	if err != nil {
		return nil, nil, err
	}
	base = &ledger.Ledger{IssueNumber: issue}
	if fork != "" {
		snap, err := pub.Read(ctx, issue, fork)
		if err != nil {
			return nil, nil, err
		}
		if base, err = ledger.DecodeIssue(name+" at "+fork, issue, snap.Data); err != nil {
			return nil, nil, err
		}
	}
	if c, ok := r.transport.(Checker); ok && fork != "" {
		if _, err := c.CheckPulled(ctx, issue, fork, other.Version); err != nil {
			return nil, nil, nil
		}
	}
	theirs, err = ledger.DecodeIssue(name+" at "+other.Version, issue, other.Data)
	if err != nil {
		return nil, nil, nil
	}
	return base, theirs, nil
}

// chainMerge is mergeOther's replay of another chain's records on l,
// this host's version.
type chainMerge struct {
	r     *Replicator
	l     *ledger.Ledger
	base  *ledger.Ledger // the version the two chains forked from
	other Snapshot
	ours  map[string]int // where l holds each question, by what was asked (origin)
	out   *Republished
}

// take merges c, a record of the other chain; false when it cannot be
// read (then the chain is not merged).
func (m *chainMerge) take(c *ledger.Clarification) (bool, error) {
	w, err := wholeRecord(c)
	if err != nil {
		return false, nil
	}
	if i, ok := m.ours[ledger.Origin(w)]; ok && (m.l.Clarifications[i].ID != c.ID || m.base.Find(c.ID) == nil) {
		return true, m.addTo(i, w)
	}
	return true, m.replayRecord(c, w)
}

// addTo takes w, the same question as l's record i (under another id, or
// both chains took it after the fork), only as what it adds to this
// host's record (an answer, a close), never again.
func (m *chainMerge) addTo(i int, w *ledger.Clarification) error {
	mine, err := wholeRecord(m.l.Clarifications[i])
	if err != nil {
		return err
	}
	if appendsRecord(mine, w) == nil && len(w.Thread) > len(mine.Thread) {
		moved := *w
		moved.ID = mine.ID
		m.l.Clarifications[i] = &moved
	}
	return nil
}

// replayRecord replays c (w whole) on l as a queued change of the fork's
// record under its id, when that is the same question and c changed it,
// or as a new record; Republished notes what was renumbered or
// superseded.
func (m *chainMerge) replayRecord(c, w *ledger.Clarification) error {
	after, err := ledger.RecordJSON(c)
	if err != nil {
		return err
	}
	var before json.RawMessage
	// The fork's record under this id, if it is the same question: a
	// chain merged before may hold another question there.
	if b := m.base.Find(c.ID); b != nil {
		if bw, err := wholeRecord(b); err == nil && ledger.Origin(bw) == ledger.Origin(w) {
			if before, err = ledger.RecordJSON(b); err != nil {
				return err
			}
			if bytes.Equal(before, after) {
				return nil
			}
		}
	}
	q := Queued{Message: c.ID + " from " + shortID(m.other.Version), Records: []QueuedRecord{{ID: c.ID, Before: before, After: after}}}
	_, outs, err := replay(m.l, q, m.r.store.Now(), map[string]string{}) // each record comes whole: nothing queued after it follows a renumbering
	if err != nil {
		return err
	}
	for _, o := range outs {
		switch o.Outcome {
		case OutcomeRenumbered:
			m.out.Renumbered = append(m.out.Renumbered, o.ID+" as "+o.As)
		case OutcomeSuperseded:
			m.out.Superseded = append(m.out.Superseded, o.ID)
		}
	}
	return nil
}

// shortID is a commit id as people read it.
func shortID(sha string) string {
	if sha == "" {
		return "a deleted ref"
	}
	return sha[:min(len(sha), 12)]
}

// ForkPoint returns the newest commit both a and b descend from ("" when
// none): git merge-base.
func (g *Git) ForkPoint(ctx context.Context, a, b string) (string, error) {
	out, err := g.git(ctx, nil, nil, "merge-base", a, b)
	var ge *GitError
	if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "" {
		return "", nil // no common ancestor
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Republish makes c a commit on parents and pushes it onto issue's ref
// with a lease on found (what the ref was seen to hold; "": that it does
// not exist): it replaces what the ref holds only if that is still found
// (a lease lets a push that is not a fast-forward through).
func (g *Git) Republish(ctx context.Context, issue int, parents []string, found string, c Commit) (Snapshot, error) {
	head, err := g.publish(ctx, issue, parents, []Commit{c}, func(head string) error {
		return g.pushHead(ctx, issue, Snapshot{Version: found}, head, nil)
	})
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Version: head, Data: c.Data}, nil
}
