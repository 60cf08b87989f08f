package monitor

import (
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// Item is a clarification `agentx clarify stale` lists: stale (or
// overdue), or stuck, whether or not the monitor has acted on it yet.
type Item struct {
	ID          string        `json:"id"`
	Issue       int           `json:"issueNumber"`
	From        string        `json:"from"`
	To          string        `json:"to"`
	Status      ledger.Status `json:"status"`
	Kind        Kind          `json:"kind"` // stale or stuck
	Reason      string        `json:"reason"`
	StaleSince  *ledger.Time  `json:"staleSince,omitempty"`
	EscalatesAt *ledger.Time  `json:"escalatesAt,omitempty"` // a stale one not yet escalated
}

// StaleAndStuck lists the open clarifications that are stale (or pending
// past their SLA), or stuck, including those the monitor escalated for
// either reason and a human has not resolved yet; by issue, then id.
func StaleAndStuck(entries []ledger.IndexEntry, now time.Time, cfg Config) []Item {
	stuck := map[string]Finding{}
	for _, f := range DetectStuck(entries, cfg) {
		stuck[f.ID] = f
	}
	out := []Item{}
	for _, e := range entries {
		it := Item{ID: e.ID, Issue: e.Issue, From: e.From, To: e.To, Status: e.Status}
		reason := ""
		if e.Monitor != nil {
			reason = e.Monitor.Reason
		}
		switch {
		case stuck[e.ID].ID != "":
			it.Kind, it.Reason = KindStuck, stuck[e.ID].Reason
		case e.Status == ledger.Escalated && strings.HasPrefix(reason, string(KindStuck)+":"):
			it.Kind, it.Reason = KindStuck, reason
		case e.Status == ledger.Escalated && strings.HasPrefix(reason, string(KindStale)+":"):
			it.Kind, it.Reason = KindStale, reason
		case e.Status == ledger.Stale:
			since, at := ledger.T(StaleSince(e)), ledger.T(EscalatesAt(e))
			it.Kind, it.StaleSince, it.EscalatesAt = KindStale, &since, &at
			it.Reason = reason
			if it.Reason == "" {
				it.Reason = "stale: no answer from " + e.To + " within its SLA"
			}
		case e.Status == ledger.Pending:
			f, ok := CheckStale(e, now, cfg)
			if !ok {
				continue
			}
			it.Kind, it.Reason = KindStale, f.Reason
		default:
			continue
		}
		out = append(out, it)
	}
	slices.SortStableFunc(out, func(a, b Item) int { return a.Issue - b.Issue })
	return out
}

// OpenEntries returns the open clarifications (ledger.Store.ReadOpen);
// those that cannot be read are returned in skipped. It never writes.
func OpenEntries(s *ledger.Store) (entries []ledger.IndexEntry, skipped []error, err error) {
	ix, skipped, err := s.ReadOpen()
	if err != nil {
		return nil, nil, err
	}
	return ix.Entries(), skipped, nil
}
