package router

import (
	"github.com/agentx-cli/agentx/ledger"
)

// List and Ready read the index of open clarifications (ledger.Index) so
// that they cost O(open clarifications) however many ledgers exist. When
// the index cannot be trusted (missing, marked dirty, corrupt) they scan
// the ledgers instead; the monitor rebuilds it.

// openIndex returns the index, or nil when it cannot be trusted.
func (h *Hub) openIndex() *ledger.Index {
	ix, err := h.Store.ReadIndex()
	if err != nil {
		return nil
	}
	return ix
}

// listIssues returns the issues List must read for f: when f wants only
// open clarifications and the index can be trusted, the issues that have
// one; otherwise every issue with a ledger.
func (h *Hub) listIssues(f Filter) ([]int, error) {
	open := !f.All
	for _, s := range f.Statuses {
		open = open && s.Open()
	}
	if open {
		if ix := h.openIndex(); ix != nil {
			return ix.OpenIssues(), nil
		}
	}
	return h.Store.Issues()
}

// readyAll is the readiness of every issue with an open clarification,
// from the index alone; without a usable index, from a scan of the
// ledgers (those that cannot be read are returned in errs).
func (h *Hub) readyAll() ([]Readiness, []error, error) {
	ix := h.openIndex()
	var errs []error
	if ix == nil {
		var err error
		if ix, errs, err = h.Store.BuildIndex(); err != nil {
			return nil, nil, err
		}
	}
	out := []Readiness{}
	for _, n := range ix.OpenIssues() {
		es := ix.Issues[n]
		cs := make([]*ledger.Clarification, len(es))
		for i, e := range es {
			cs[i] = &ledger.Clarification{ID: e.ID, From: e.From, To: e.To, Blocking: e.Blocking, Status: e.Status}
		}
		out = append(out, IssueReadiness(n, cs))
	}
	return out, errs, nil
}
