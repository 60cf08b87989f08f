package relay

import (
	"context"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// Hold is when a service allows calls again after it rate-limited one (a
// 429 and its Retry-After), kept in a file of the mode's state directory
// so that every process of the workspace honours it: a command's side
// work, a sync run by hand, the listener. A mode's client consults it
// before each call and sets it from each 429; its reader and outbox skip
// their unforced runs while it holds.
type Hold struct {
	File File
}

// HoldState is the hold's file.
type HoldState struct {
	WaitUntil *ledger.Time `json:"waitUntil,omitempty"` // no call before this
	Call      string       `json:"call,omitempty"`      // the call the service limited
}

// Until is the time calls are held until; zero when none is known (no
// file, or one that cannot be read: the service says again).
func (h *Hold) Until() time.Time {
	if h == nil {
		return time.Time{}
	}
	var st HoldState
	if err := h.File.Read(&st); err != nil || st.WaitUntil == nil {
		return time.Time{}
	}
	return st.WaitUntil.Time
}

// Held says why a call may not be made at now ("" when it may): the
// service and the time the hold lifts.
func (h *Hold) Held(service string, now time.Time) string {
	if until := h.Until(); until.After(now) {
		return service + " rate limit: not before " + until.UTC().Format(time.RFC3339)
	}
	return ""
}

// Set holds calls until until, after call was limited: a later hold
// already in the file stands.
func (h *Hold) Set(ctx context.Context, until time.Time, call string) error {
	if h == nil {
		return nil
	}
	var st HoldState
	return h.File.Update(ctx, &st, true, func() error {
		if st.WaitUntil == nil || until.After(st.WaitUntil.Time) {
			u := ledger.T(until)
			st.WaitUntil, st.Call = &u, call
		}
		return nil
	})
}
