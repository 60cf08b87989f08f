package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/agentx-cli/agentx/ledger"
)

// Pulled is one clarification another host changed, as a fetch brought it
// (ledger.Pulled: the hub makes its events without importing this
// package).
type Pulled = ledger.Pulled

// OnPulled sets what is told, under the issue's lock, of the changes a
// shared version made elsewhere brings: once per version the local copy
// moves to, before the local copy and the sync state record it (so a crash
// between the two may tell them again, never lose them). The changes this
// host made itself (its writes and its outbox) are never among them.
func (r *Replicator) OnPulled(fn func(issue int, changes []Pulled)) { r.onPulled = fn }

// newer reports whether snap may replace the local copy that reflects
// head: it descends from it, or the remote cannot say.
func (r *Replicator) newer(ctx context.Context, snap Snapshot, head string) bool {
	if head == "" || snap.Version == head {
		return true
	}
	if snap.Version == "" {
		return false // read before this host settled a first version: fetch again
	}
	lin, ok := r.transport.(Lineage)
	if !ok {
		return true
	}
	yes, err := lin.Descends(ctx, snap.Version, head)
	return err != nil || yes
}

// tellPulled tells OnPulled's function what snap, the shared ledger at a
// version the local copy does not reflect yet (st.Head), changed: the
// records that differ from the local copy with the outbox's changes
// undone (the shared ledger at st.Head, as this host knows it). The
// questions new here are noted in st.Arrived (another host asked them),
// and the time again when another host's question starts a new round.
// own are records of this host's change that snap holds (they are left
// out).
func (r *Replicator) tellPulled(ctx context.Context, f *ledger.Locked, snap Snapshot, st *SyncState, own []string) {
	issue := f.Issue
	if snap.Version == "" || snap.Version == st.Head {
		return
	}
	after, err := ledger.DecodeIssue(r.transport.Name(issue), issue, snap.Data)
	if err != nil {
		return
	}
	base := &ledger.Ledger{}
	if st.Head != "" {
		if base, err = f.Read(); err != nil {
			return
		}
		undoPending(base, st.Pending)
	}
	changes := slices.DeleteFunc(pulledChanges(base, after), func(c Pulled) bool { return slices.Contains(own, c.After.ID) })
	r.noteArrived(changes, st)
	_ = f.AppendDecided(decidedElsewhere(changes)...) // for decision memory; its failure leaves them out
	if len(changes) == 0 || r.onPulled == nil {
		return
	}
	if o, ok := r.transport.(Origins); ok {
		if hosts, err := o.Hosts(ctx, issue, st.Head, snap.Version); err == nil {
			for i := range changes {
				changes[i].Host = hosts[changes[i].After.ID]
			}
		}
	}
	r.onPulled(issue, changes)
}

// pulledChanges are the records of after that differ from base's, in
// after's order.
func pulledChanges(base, after *ledger.Ledger) []Pulled {
	byID := make(map[string]*ledger.Clarification, len(base.Clarifications))
	for _, b := range base.Clarifications {
		byID[b.ID] = b
	}
	var changes []Pulled
	for _, c := range after.Clarifications {
		if p, ok := pulledRecord(byID[c.ID], c); ok {
			changes = append(changes, p)
		}
	}
	return changes
}

// pulledRecord is the change from b (nil: none) to c, both decoded whole;
// ok false when they are the same record, or one cannot be read.
func pulledRecord(b, c *ledger.Clarification) (Pulled, bool) {
	if b != nil && c.SealedJSON() != nil && bytes.Equal(b.SealedJSON(), c.SealedJSON()) {
		return Pulled{}, false // a closed record, the same bytes on both sides
	}
	now, err := ledger.RecordJSON(c)
	if err != nil {
		return Pulled{}, false
	}
	var was json.RawMessage
	if b != nil {
		was, _ = ledger.RecordJSON(b)
	}
	if was != nil && bytes.Equal(was, now) {
		return Pulled{}, false
	}
	p := Pulled{}
	if p.After, err = ledger.DecodeRecord(now); err != nil {
		return Pulled{}, false
	}
	if was != nil {
		if p.Before, err = ledger.DecodeRecord(was); err != nil {
			return Pulled{}, false
		}
	}
	return p, true
}

// decidedElsewhere are the records changes resolved: on another host.
func decidedElsewhere(changes []Pulled) []*ledger.Clarification {
	var decided []*ledger.Clarification
	for _, p := range changes {
		if p.After.Status == ledger.Resolved && (p.Before == nil || p.Before.Status != ledger.Resolved) {
			decided = append(decided, p.After)
		}
	}
	return decided
}

// noteArrived notes in st.Arrived, at this host's now, the open questions
// changes bring new here (another host asked them), and the time again
// when another host's question starts a new round (a follow-up: its age
// starts again).
func (r *Replicator) noteArrived(changes []Pulled, st *SyncState) {
	for _, p := range changes {
		_, theirs := st.Arrived[p.After.ID]
		newRound := p.Before != nil && theirs && p.After.Round > p.Before.Round
		if (p.Before == nil || newRound) && p.After.Status.Open() {
			if st.Arrived == nil {
				st.Arrived = map[string]ledger.Time{}
			}
			st.Arrived[p.After.ID] = ledger.T(r.store.Now())
		}
	}
}

// undoPending takes the outbox's changes back out of l, newest first: what
// is left is the shared ledger they were made on.
func undoPending(l *ledger.Ledger, pending []Queued) {
	for i := len(pending) - 1; i >= 0; i-- {
		recs := pending[i].Records
		for j := len(recs) - 1; j >= 0; j-- {
			r := recs[j]
			at := -1
			for k, c := range l.Clarifications {
				if c.ID == r.ID {
					at = k
					break
				}
			}
			if created(r.Before) {
				if at >= 0 {
					l.Clarifications = append(l.Clarifications[:at], l.Clarifications[at+1:]...)
				}
				continue
			}
			was, err := ledger.DecodeRecord(r.Before)
			if err != nil {
				continue
			}
			if at >= 0 {
				l.Clarifications[at] = was
			} else {
				l.Clarifications = append(l.Clarifications, was)
			}
		}
	}
}
