package relay

import (
	"context"
	"errors"
	"time"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// Mode is one outside mode as a command runs it as a side effect: Read
// takes what people wrote (before the monitor), Send mirrors what changed
// (after it). Each runs within Timeout; Interval is how often Read does
// anything at most.
type Mode struct {
	Name     string // "github": how warnings name it
	Interval time.Duration
	Timeout  time.Duration
	Read     func(ctx context.Context, force bool) error
	Send     func(ctx context.Context, force bool) error
	// Warn prints a warning; the command's exit code is never changed.
	Warn func(format string, args ...any)

	failed bool
}

// Side runs Read (in) or Send within Timeout. A failure other than
// ErrBusy is one warning, and the mode does nothing more in this command:
// what is behind stays queued.
func (m *Mode) Side(ctx context.Context, in bool) {
	if m.failed {
		return
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
		m.Warn("%s: %v (queued: agentx %s status shows what is behind)", m.Name, err, m.Name)
	}
}

// Wait is wait (a wait for an answer of at most its argument) that reads
// every mode at most each interval (at least a second apart) while it
// waits, so that an answer given on a service reaches the waiting asker.
// isTimeout tells a wait that timed out with no answer from one that
// ended; Wait returns the last wait's result.
func Wait[T any](ctx context.Context, modes []*Mode, timeout time.Duration, wait func(d time.Duration) (T, error), isTimeout func(error) bool) (T, error) {
	if len(modes) == 0 {
		return wait(timeout)
	}
	start := time.Now()
	step := time.Duration(0)
	for _, m := range modes {
		if step == 0 || m.Interval < step {
			step = m.Interval
		}
	}
	step = max(step, time.Second)
	for {
		for _, m := range modes {
			m.Side(ctx, true)
		}
		left := timeout - time.Since(start)
		rec, err := wait(max(min(step, left), 0))
		if !isTimeout(err) || time.Since(start) >= timeout {
			return rec, err
		}
	}
}

// Refusable reports whether err, from a hub action taken for a person on a
// service, is about the action itself (an id, the clarification's status,
// who may do it), which the person is told, rather than a local failure,
// after which what they wrote is read again.
func Refusable(err error) bool {
	var ie *ledger.InputError
	var te *ledger.TransitionError
	var re *router.RuleError
	var id *router.IdentityError
	return errors.As(err, &ie) || errors.As(err, &te) || errors.As(err, &re) || errors.As(err, &id) || errors.Is(err, ledger.ErrNotFound)
}
