package ledger

import (
	"context"
	"time"
)

// CancelledReason is the reason a cancelled question is abandoned with:
// its thread ends with "Abandoned: cancelled".
const CancelledReason = "cancelled"

// Cancelled reports whether c was withdrawn by a cancel, not abandoned by
// the monitor, a hook or a person.
func Cancelled(c *Clarification) bool {
	if c.Status != Abandoned {
		return false
	}
	e := c.Current(Resolution)
	return e != nil && e.Body == "Abandoned: "+CancelledReason
}

// RunQuestions counts the questions from asked on l in the run that began
// at run (nil: every one), leaving out those it cancelled.
//
// A write reads closed records sealed (id, sender, status: see
// Store.Update), so those this needs are opened: with a run, the records
// from the newest back to the first asked before it (records are appended
// as they are asked), the run's records only; without one, the asker's
// abandoned records, to tell a cancelled one.
func RunQuestions(l *Ledger, from string, run *time.Time) int {
	n := 0
	for i := len(l.Clarifications) - 1; i >= 0; i-- {
		c := l.Clarifications[i]
		if run == nil && c.From != from {
			continue
		}
		if c.Sealed() && (run != nil || c.Status == Abandoned) && !l.open(c) {
			continue // unreadable: Update fails with why
		}
		if run != nil && c.Created.Time.Before(*run) {
			break
		}
		if c.From == from && !Cancelled(c) {
			n++
		}
	}
	return n
}

// Cap is the question cap (max_questions) an ask was checked against: at
// most Max questions of its asker since Since (nil: on the issue at all).
// A change made on a copy that may be behind carries it, so that the
// ledger it lands on is judged by it again (remote mode's intents).
type Cap struct {
	Max   int
	Since *time.Time
}

// Allows reports whether l has room under the cap for one more question
// of from's, beyond more of them that are to land on it with this one
// (a change may carry several of one asker's: the questions handed to its
// writer, see Store.Ask).
func (c Cap) Allows(l *Ledger, from string, more int) bool {
	return c.Max <= 0 || RunQuestions(l, from, c.Since)+more < c.Max
}

// Same reports whether c and o are one question cap.
func (c Cap) Same(o Cap) bool {
	if c.Max != o.Max || (c.Since == nil) != (o.Since == nil) {
		return false
	}
	return c.Since == nil || c.Since.Equal(*o.Since)
}

type capKey struct{}

// WithCap is ctx carrying the question cap of the ask made under it.
func WithCap(ctx context.Context, c Cap) context.Context {
	return context.WithValue(ctx, capKey{}, c)
}

// CapOf is the question cap ctx carries (WithCap); ok false when none.
func CapOf(ctx context.Context) (Cap, bool) {
	c, ok := ctx.Value(capKey{}).(Cap)
	return c, ok
}
