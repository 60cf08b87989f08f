package realclient

import (
	"context"
	"fmt"
	"sync"
)

// recorder keeps the requests a stand-in API received, in order, and
// wakes those waiting for one (WaitFor) without polling. Its methods are
// safe for concurrent use.
type recorder[T any] struct {
	mu      sync.Mutex
	reqs    []T
	arrived chan struct{} // closed (and replaced) when a request is recorded
}

// add records r, after setSeq has been given its number (its index), and
// wakes the waiters.
func (rc *recorder[T]) add(r T, setSeq func(int)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	setSeq(len(rc.reqs))
	rc.reqs = append(rc.reqs, r)
	if rc.arrived != nil {
		close(rc.arrived)
	}
	rc.arrived = make(chan struct{})
}

// all is the requests received so far, in order.
func (rc *recorder[T]) all() []T {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]T(nil), rc.reqs...)
}

// waitFor returns the first request, received so far or to come, that
// pred accepts; or ctx's error, with how many requests came, when ctx
// ends first (api names the stand-in in the error).
func (rc *recorder[T]) waitFor(ctx context.Context, api string, pred func(T) bool) (T, error) {
	next := 0
	for {
		rc.mu.Lock()
		if rc.arrived == nil {
			rc.arrived = make(chan struct{})
		}
		reqs, arrived := rc.reqs[next:], rc.arrived
		next = len(rc.reqs)
		rc.mu.Unlock()
		for _, r := range reqs {
			if pred(r) {
				return r, nil
			}
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			var zero T
			return zero, fmt.Errorf("%s: no matching request among %d: %w", api, next, ctx.Err())
		}
	}
}
