package relay

import (
	"context"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// Throttle is where reading a service got to, as a mode's inbound file
// keeps it (embedded beside what the mode keeps of its own).
type Throttle struct {
	// Polled is when the service was last read: the interval counts from
	// there.
	Polled    *ledger.Time `json:"polled,omitempty"`
	WaitUntil *ledger.Time `json:"waitUntil,omitempty"`
	Error     string       `json:"error,omitempty"` // why the last read failed
}

// Reader reads a service at most once per Interval.
type Reader struct {
	File     File
	Service  string // names the service in what Read reports ("GitHub")
	Interval time.Duration
	Hold     *Hold // the service's rate limit, shared with the other calls (nil: none)
}

// Read runs read at most once per interval (force: now), and not while
// the service's rate limit holds (t's, or Hold's: force does not lift
// them; the mode's client refuses its calls meanwhile), under the inbound
// file's lock: v is the
// whole file, t its throttle. Processes reading at once leave it to one
// (ErrBusy for the others, unless force). skipped says why read did not
// run. read's error is kept in the file (with the wait a Waiter asks for)
// and returned.
func (r *Reader) Read(ctx context.Context, now time.Time, v any, t *Throttle, force bool, read func() error) (skipped string, err error) {
	if !force {
		if why := r.Hold.Held(r.Service, now); why != "" {
			return why, nil
		}
		var cur Throttle
		if err := r.File.Read(&cur); err == nil {
			if why := r.held(cur, now); why != "" {
				return why, nil
			}
		}
	}
	err = r.File.Update(ctx, v, force, func() error {
		if !force && t.Polled != nil && now.Sub(t.Polled.Time) < r.Interval {
			skipped = "read by another process just now"
			return nil
		}
		err := read()
		p := ledger.T(now)
		t.Polled = &p
		if err != nil {
			t.Error = err.Error()
			if until, ok := WaitOf(err); ok {
				u := ledger.T(until)
				t.WaitUntil = &u
			}
			return err
		}
		t.Error, t.WaitUntil = "", nil
		return nil
	})
	return skipped, err
}

// held says why a read may not run at now, or "".
func (r *Reader) held(t Throttle, now time.Time) string {
	switch {
	case t.WaitUntil != nil && t.WaitUntil.After(now):
		return r.Service + " rate limit: not before " + t.WaitUntil.UTC().Format(time.RFC3339)
	case t.Polled != nil && now.Sub(t.Polled.Time) < r.Interval:
		return "read less than " + r.Interval.String() + " ago"
	}
	return ""
}
