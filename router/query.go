package router

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// Get returns one clarification.
func (h *Hub) Get(id string) (Record, error) {
	c, err := h.Store.Get(id)
	if err != nil {
		return Record{}, err
	}
	issue, _, _ := ledger.ParseID(c.ID)
	return Record{IssueNumber: issue, Clarification: c}, nil
}

// Issue returns every clarification of an issue, oldest first.
func (h *Hub) Issue(issue int) ([]Record, error) {
	l, err := h.Store.Read(issue)
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(l.Clarifications))
	for _, c := range l.Clarifications {
		out = append(out, Record{IssueNumber: issue, Clarification: c})
	}
	return out, nil
}

// Filter selects clarifications for List.
type Filter struct {
	Issue    *int            // only this issue
	Statuses []ledger.Status // only these statuses; empty: open ones unless All
	Agent    string          // only where this agent asks or is asked
	All      bool            // include resolved and abandoned
}

func (f Filter) match(c *ledger.Clarification) bool {
	if len(f.Statuses) > 0 {
		if !slices.Contains(f.Statuses, c.Status) {
			return false
		}
	} else if !f.All && !c.Status.Open() {
		return false
	}
	return f.Agent == "" || c.From == f.Agent || c.To == f.Agent
}

// List returns the clarifications that match f, by issue then id. A ledger
// that cannot be read is reported in errs and the rest still listed.
func (h *Hub) List(f Filter) (recs []Record, errs []error, err error) {
	issues := []int{}
	if f.Issue != nil {
		issues = append(issues, *f.Issue)
	} else if issues, err = h.listIssues(f); err != nil {
		return nil, nil, err
	}
	for _, n := range issues {
		l, err := h.Store.Read(n)
		if err != nil {
			if f.Issue != nil {
				return nil, nil, err
			}
			errs = append(errs, err)
			continue
		}
		for _, c := range l.Clarifications {
			if f.match(c) {
				recs = append(recs, Record{IssueNumber: n, Clarification: c})
			}
		}
	}
	return recs, errs, nil
}

// Settled reports whether the asker has something to act on: the current
// round is answered, or the clarification is escalated, resolved or
// abandoned.
func Settled(c *ledger.Clarification) bool {
	return c.Status != ledger.Pending && c.Status != ledger.Stale
}

// Wait blocks until the clarification is settled or timeout passes (then a
// *WaitTimeoutError) or ctx ends. It polls the ledger, which is cheap: an
// unlocked read of one small file.
func (h *Hub) Wait(ctx context.Context, id string, timeout time.Duration) (Record, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	poll := 50 * time.Millisecond
	for {
		rec, err := h.Get(id)
		if err != nil {
			return Record{}, err
		}
		if Settled(rec.Clarification) {
			return rec, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return rec, &WaitTimeoutError{ID: id, Waited: time.Since(start)}
		}
		t := time.NewTimer(min(poll, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return rec, fmt.Errorf("wait for %s: %w", id, ctx.Err())
		case <-t.C:
		}
		poll = min(poll*2, time.Second)
	}
}

// Ready reports the readiness of every issue with an open clarification
// (or of one issue).
func (h *Hub) Ready(issue *int) ([]Readiness, []error, error) {
	if issue == nil {
		return h.readyAll()
	}
	bs, err := h.Blockers(*issue)
	if err != nil {
		return nil, nil, err
	}
	return []Readiness{ReadinessOf(*issue, bs)}, nil, nil
}
