package router

import (
	"errors"
	"path/filepath"
	"slices"

	"github.com/agentx-cli/agentx/ledger"
)

// List and Ready read the index of open clarifications (ledger.Index) so
// that they cost O(open clarifications) however many ledgers exist; when
// the index was never built they scan the ledgers (ledger.Store.ReadOpen:
// the monitor builds the index).

// listIssues returns the issues List must read for f: when f wants only
// open clarifications, the issues that have one; otherwise every issue
// with a ledger.
func (h *Hub) listIssues(f Filter) ([]int, error) {
	open := !f.All
	for _, s := range f.Statuses {
		open = open && s.Open()
	}
	if open {
		return h.Store.OpenIssues()
	}
	return h.Store.Issues()
}

// readyAll is the readiness of every issue with an open clarification or
// held up by a registered hold (RegisterHolds); an issue whose ledger
// cannot be read is held up by it (other errors are returned in errs).
func (h *Hub) readyAll() ([]Readiness, []error, error) {
	ix, errs, err := h.Store.ReadOpen()
	if err != nil {
		return nil, nil, err
	}
	out := []Readiness{}
	for _, n := range ix.OpenIssues() {
		out = append(out, ReadinessOf(n, Blockers(ix.Issues[n])))
	}
	// A ledger that cannot be read blocks its issue: the gate fails closed.
	var rest []error
	for _, err := range errs {
		var ce *ledger.CorruptError
		n, ok := 0, false
		if errors.As(err, &ce) {
			n, ok = ledger.IssueOfFile(filepath.Base(ce.Path))
		}
		if !ok {
			rest = append(rest, err)
			continue
		}
		out = append(out, ReadinessOf(n, []Blocker{{Rule: BlockUnreadable, Why: err.Error()}}))
	}
	out, err = h.addHolds(out)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(out, func(a, b Readiness) int { return a.Issue - b.Issue })
	return out, rest, nil
}

// addHolds adds to rs, the readiness of the issues with an open
// clarification, what the registered holds hold up: an issue it holds up
// and rs does not list is added.
func (h *Hub) addHolds(rs []Readiness) ([]Readiness, error) {
	for _, s := range registeredHolds() {
		issues, err := s.HeldIssues(h.Store)
		if err != nil {
			return nil, err
		}
		for _, n := range issues {
			bs, err := s.Blockers(h.Store, n)
			if err != nil {
				return nil, err
			}
			if len(bs) == 0 {
				continue
			}
			i := slices.IndexFunc(rs, func(r Readiness) bool { return r.Issue == n })
			if i < 0 {
				rs, i = append(rs, Readiness{Issue: n}), len(rs)
			}
			rs[i] = ReadinessOf(n, append(rs[i].Blockers, bs...))
		}
	}
	return rs, nil
}
