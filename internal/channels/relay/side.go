package relay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// Mode is one outside mode as a side effect of one piece of work on the
// hub (a command that runs the monitor, an MCP tool call): Read takes what
// people wrote (before the work), Send mirrors what changed (after it).
// Each runs within Timeout; Interval is how often Read does anything at
// most. A failure goes to Warn once per Mode (a second failure in the same
// piece of work says nothing new), and the work stays queued: it never
// fails the command or the call.
//
// A Mode is for one goroutine; Modes sharing one Busy (an MCP server's
// calls at once) take turns: one of them reads or sends at a time, the
// others leave it to that one, as other processes do (ErrBusy).
type Mode struct {
	Name     string // "github": how the queued warning names its status command
	Interval time.Duration
	Timeout  time.Duration
	Read     func(ctx context.Context, force bool) error // nil: the mode is off, or could not be opened (Err)
	Send     func(ctx context.Context, force bool) error
	Warn     func(error)
	Busy     *sync.Mutex
	// Err is why the mode could not be opened (no token), said once.
	Err error

	failed bool
}

// On reports whether the mode does anything.
func (m *Mode) On() bool { return m != nil && m.Read != nil }

// Side runs Read (in) or Send within Timeout.
func (m *Mode) Side(ctx context.Context, in bool) {
	if m == nil || m.failed {
		return // off, or it failed already in this piece of work: once is enough
	}
	if !m.On() {
		if m.Err != nil {
			m.failed = true
			m.warn(m.Err)
		}
		return
	}
	if m.Busy != nil {
		if !m.Busy.TryLock() {
			return // another goroutine of this process is at it
		}
		defer m.Busy.Unlock()
	}
	ctx, cancel := context.WithTimeout(ctx, m.Timeout)
	defer cancel()
	var err error
	if in {
		err = m.Read(ctx, false)
	} else {
		err = m.Send(ctx, false)
	}
	if err != nil && !errors.Is(err, ErrBusy) {
		m.failed = true
		m.warn(fmt.Errorf("%w (queued: agentx %s status shows what is behind)", err, m.Name))
	}
}

func (m *Mode) warn(err error) {
	if m.Warn != nil {
		m.Warn(err)
	}
}

// Modes are the outside modes of one piece of work (nil ones are off).
type Modes []*Mode

// Read runs every mode's Read.
func (ms Modes) Read(ctx context.Context) {
	for _, m := range ms {
		m.Side(ctx, true)
	}
}

// Push runs every mode's Send.
func (ms Modes) Push(ctx context.Context) {
	for _, m := range ms {
		m.Side(ctx, false)
	}
}

// Wait is h.Wait for clarification id that reads every mode that is on
// (Read) at most each interval, at least a second apart, while it waits,
// so that an answer given on a service reaches the waiting asker.
func (ms Modes) Wait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	return ms.WaitWith(ctx, h.Wait, id, timeout)
}

// WaitWith is Wait over another way of waiting for the answer (wait: one
// that also watches a shared remote).
func (ms Modes) WaitWith(ctx context.Context, wait func(ctx context.Context, id string, timeout time.Duration) (router.Record, error), id string, timeout time.Duration) (router.Record, error) {
	step := time.Duration(-1)
	for _, m := range ms {
		if m.On() && (step < 0 || m.Interval < step) {
			step = m.Interval
		}
	}
	if step < 0 {
		return wait(ctx, id, timeout)
	}
	step = max(step, time.Second)
	start := time.Now()
	for {
		ms.Read(ctx)
		left := timeout - time.Since(start)
		rec, err := wait(ctx, id, max(min(step, left), 0))
		var te *router.WaitTimeoutError
		if !errors.As(err, &te) || time.Since(start) >= timeout {
			if te != nil {
				te.Waited = time.Since(start)
			}
			return rec, err
		}
	}
}

// Refusable reports whether err, from a hub action taken for a person on a
// service, is about the action itself (an id, the clarification's status,
// who may do it, an option it does not offer), which the person is told, rather than a local failure,
// after which what they wrote is read again.
func Refusable(err error) bool {
	var ie *ledger.InputError
	var te *ledger.TransitionError
	var re *router.RuleError
	var id *router.IdentityError
	var oe *router.OptionError
	return errors.As(err, &ie) || errors.As(err, &te) || errors.As(err, &re) || errors.As(err, &id) || errors.As(err, &oe) || errors.Is(err, ledger.ErrNotFound)
}
