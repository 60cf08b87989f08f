package monitor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// minRunGap is the least time between two monitor runs of one wait, so
// that an action that keeps failing cannot make a wait spin.
const minRunGap = time.Second

// Waiter waits up to d for clarification id to settle: router.Hub.Wait, or
// a front end's own (one that also reads answers given elsewhere).
type Waiter func(ctx context.Context, id string, d time.Duration) (router.Record, error)

// Wait waits up to timeout for clarification id to settle, through wait
// (nil: router.Hub.Wait), and meanwhile runs the monitor (Run) whenever
// its next action on that clarification comes due (NextDue): a failed
// responder's retry above all, so that an asker waiting alone gets its
// answer when the retry is due rather than when some other command
// happens to run. Each run's budget is what is left of the wait; each
// gets every run's report, if not nil.
func (m *Monitor) Wait(ctx context.Context, id string, timeout time.Duration, wait Waiter, each func(*Report)) (router.Record, error) {
	h := m.Hub
	if wait == nil {
		wait = h.Wait
	}
	start := time.Now()
	deadline := start.Add(timeout)
	var lastRun time.Time
	for {
		rec, err := h.Get(id)
		if err != nil {
			return router.Record{}, err
		}
		left := time.Until(deadline)
		if router.Settled(rec.Clarification) {
			return rec, nil
		}
		if left <= 0 {
			return rec, &router.WaitTimeoutError{ID: id, Waited: time.Since(start)}
		}
		now := h.Store.Now()
		next := NextDue(ledger.EntryOf(rec.IssueNumber, rec.Clarification), now, m.Config)
		chunk := left
		if !next.IsZero() && left >= minRetryRun { // less: no time to make a retry
			sinceRun := time.Since(lastRun)
			if !next.After(now) && sinceRun >= minRunGap {
				lastRun = time.Now()
				run := *m
				run.Budget = left
				r := run.Run(ctx, nil)
				if each != nil {
					each(r)
				}
				if err := ctx.Err(); err != nil {
					return rec, fmt.Errorf("wait for %s: %w", id, err)
				}
				continue
			}
			chunk = min(chunk, max(next.Sub(now), minRunGap-sinceRun, 10*time.Millisecond))
		}
		got, err := wait(ctx, id, chunk)
		var te *router.WaitTimeoutError
		switch {
		case errors.As(err, &te):
			continue // the chunk is over: look again
		case err != nil:
			return got, err
		}
		return got, nil
	}
}
