package router

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// Get returns one clarification a caller names (refused as named may
// refuse it).
func (h *Hub) Get(id string) (Record, error) {
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	return h.get(id)
}

// get returns clarification id, as the ledger holds it.
func (h *Hub) get(id string) (Record, error) {
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
	errs, err = h.Each(f, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return recs, errs, nil
}

// Each calls fn on the clarifications that match f, by issue then id, as
// List returns them, reading one ledger at a time: what fn does not keep
// of a ledger is garbage once the next is read, so a read of every ledger
// holds one ledger, not all of them. A ledger that cannot be read is
// reported in errs and the rest still visited; an error from fn stops the
// walk and is returned.
func (h *Hub) Each(f Filter, fn func(Record) error) (errs []error, err error) {
	issues := []int{}
	if f.Issue != nil {
		issues = append(issues, *f.Issue)
	} else if issues, err = h.listIssues(f); err != nil {
		return nil, err
	}
	err = readAhead(issues, h.Store.Read, func(n int, l *ledger.Ledger, err error) error {
		if err != nil {
			if f.Issue != nil {
				return err
			}
			errs = append(errs, err)
			return nil
		}
		for _, c := range l.Clarifications {
			if f.match(c) {
				if err := fn(Record{IssueNumber: n, Clarification: c}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return errs, err // with f.Issue, errs is nil
}

// readAhead calls fn on each issue's ledger (or the error reading it), in
// the order of issues. Decoding a ledger costs most of a read of every
// ledger, so the ledgers are read on every core, in batches of readBatch
// issues (a batch a hand-over: one per ledger would cost more than it
// saves), a few batches ahead of fn: however many the issues, at most
// about 2×readBatch ledgers per core are held. An error from fn stops the
// reads and is returned.
func readAhead(issues []int, read func(int) (*ledger.Ledger, error), fn func(int, *ledger.Ledger, error) error) error {
	type result struct {
		l   *ledger.Ledger
		err error
	}
	workers := min(runtime.GOMAXPROCS(0), (len(issues)+readBatch-1)/readBatch)
	if workers <= 1 {
		for _, n := range issues {
			l, err := read(n)
			if err := fn(n, l, err); err != nil {
				return err
			}
		}
		return nil
	}
	pending := make(chan chan []result, workers) // batches, in issue order
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(pending)
		busy := make(chan struct{}, workers)
		for start := 0; start < len(issues); start += readBatch {
			part := issues[start:min(start+readBatch, len(issues))]
			r := make(chan []result, 1)
			select {
			case pending <- r:
			case <-stop:
				return
			}
			busy <- struct{}{}
			go func() {
				out := make([]result, len(part))
				for i, n := range part {
					out[i].l, out[i].err = read(n)
				}
				r <- out
				<-busy
			}()
		}
	}()
	i := 0
	for r := range pending {
		for _, got := range <-r {
			if err := fn(issues[i], got.l, got.err); err != nil {
				return err
			}
			i++
		}
	}
	return nil
}

// readBatch is how many ledgers readAhead reads in one go.
const readBatch = 32

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
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	start := time.Now()
	deadline := start.Add(timeout)
	poll := 50 * time.Millisecond
	for {
		rec, err := h.get(id)
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
// or held up otherwise (the registered holds: work sent back for
// revision), or of one issue: the one rule every front end gates on.
// Reason is left to the front end (Readiness.Cause).
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
