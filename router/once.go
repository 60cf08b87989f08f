package router

import (
	"context"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// Once makes an action that comes from outside agentx (a person's comment
// on a GitHub issue, read by every agentx process that polls it) take
// effect at most once. Inside the ledger update the action makes, under
// the ledger's lock: Done reports whether the ledger records it already
// (the action is then skipped with a *SkippedError, reason OnceDone), and
// Mark records it on the clarification the action changed, in the same
// write (an error from either: nothing is written, and the action returns
// it: a ledger whose record of outside actions cannot be read takes none).
type Once struct {
	Done func(l *ledger.Ledger) (bool, error)
	Mark func(c *ledger.Clarification) error
}

// OnceDone is the reason of the *SkippedError an action returns when its
// Once says it took effect already.
const OnceDone = "already done"

type onceKey struct{}

// WithOnce returns ctx carrying o for the hub actions made with it
// (Answer, Resolve, Followup, Escalate, Abandon, Assume).
func WithOnce(ctx context.Context, o *Once) context.Context {
	return context.WithValue(ctx, onceKey{}, o)
}

// onceGuarded wraps a change with ctx's Once, if it carries one.
func onceGuarded(ctx context.Context, fn func(c *ledger.Clarification, now time.Time) error) (Guard, func(c *ledger.Clarification, now time.Time) error) {
	o, _ := ctx.Value(onceKey{}).(*Once)
	if o == nil {
		return nil, fn
	}
	var doneErr error // Done's failure, returned by the change the guard lets run
	guard := func(l *ledger.Ledger, _ *ledger.Clarification, _ time.Time) string {
		if o.Done == nil {
			return ""
		}
		done, err := o.Done(l)
		doneErr = err
		if done && err == nil {
			return OnceDone
		}
		return ""
	}
	return guard, func(c *ledger.Clarification, now time.Time) error {
		if doneErr != nil {
			return doneErr
		}
		if err := fn(c, now); err != nil {
			return err
		}
		if o.Mark != nil {
			return o.Mark(c)
		}
		return nil
	}
}
