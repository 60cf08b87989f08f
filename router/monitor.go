package router

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/agentx-cli/agentx/ledger"
)

// The monitor (package monitor) decides; these methods act. Each one
// re-checks the decision with a Guard inside the ledger update, under the
// ledger's lock, so that any number of monitors running at once change a
// clarification once: the first to take the lock acts, the others find the
// guard no longer holds and write nothing.

func monitorState(c *ledger.Clarification) *ledger.MonitorState {
	x := c.Ext()
	if x.Monitor == nil {
		x.Monitor = &ledger.MonitorState{}
	}
	return x.Monitor
}

// MarkStale moves a pending clarification to stale, recording when and why
// in its monitor state, and logs a clarification-stale event.
func (h *Hub) MarkStale(ctx context.Context, id, reason string, guard Guard) (Record, error) {
	rec, err := h.changeIf(ctx, id, guard, func(c *ledger.Clarification, now time.Time) error {
		if err := c.Move(ledger.Stale); err != nil {
			return err
		}
		m := monitorState(c)
		t := ledger.T(now)
		m.StaleAt, m.Reason = &t, reason
		return nil
	})
	if err != nil {
		return Record{}, err
	}
	h.changed(EventStale, rec, HubAgent, reason)
	return rec, nil
}

// ClaimRetry records, under the lock, that an automatic retry of a
// clarification is being made (Retries and RetriedAt), so that no other
// monitor makes it too. The caller then runs it with Retry, without the
// lock, and gives it back with ReleaseRetry if the run is cut off. A
// non-zero until (ClaimUntil) is when the claim of a scheduled retry (see
// ScheduledRetry) lapses, should the claimant die before it is done: then
// another process may make it.
func (h *Hub) ClaimRetry(ctx context.Context, id string, until time.Time, guard Guard) (Record, error) {
	return h.changeIf(ctx, id, guard, func(c *ledger.Clarification, now time.Time) error {
		if c.Status.Final() {
			return &ledger.TransitionError{ID: c.ID, From: c.Status, To: c.Status}
		}
		m := monitorState(c)
		t := ledger.T(now)
		m.Retries++
		m.RetriedAt = &t
		m.RetryUntil = nil
		if !until.IsZero() {
			u := ledger.T(until)
			m.RetryUntil = &u
		}
		return nil
	})
}

// CanRetry reports whether a question to target can be retried: an agent
// with a responder is run again, a human is notified again (when a notify
// command is configured).
func (h *Hub) CanRetry(target string) bool {
	if target == ledger.Human {
		n := h.Rules.Config.Notify
		return n != nil && len(n.Command) > 0
	}
	_, ok := h.responder(target)
	return ok
}

// RetryResult is what an automatic retry did.
type RetryResult struct {
	Via      string // "responder" or "notify"
	Answered bool   // the responder answered and the answer was recorded
	CutOff   bool   // ctx ended the run first: nothing recorded, the claim given back
	Detail   string // what happened, for the report
	Record   Record // the record afterwards
}

// Retry makes the automatic retry claimed with ClaimRetry: the target's
// responder is run once more (no lock is held meanwhile) and what came of
// it recorded as for the first run (see attempt: the answer; a failure,
// which escalates when it is the round's second; nothing when the
// clarification moved on meanwhile), or for a human the notify command is
// run again. A failed run that leaves the question as it was is an error.
// A run that ctx cuts off (a budget, Ctrl-C) is given back (ReleaseRetry)
// for the next command to make, and reported as CutOff.
func (h *Hub) Retry(ctx context.Context, rec Record) (RetryResult, error) {
	c := rec.Clarification
	if c.To == ledger.Human {
		res := RetryResult{Via: "notify", Record: rec}
		n := h.Rules.Config.Notify
		if n == nil || len(n.Command) == 0 {
			return res, errors.New("no notify command is configured")
		}
		payload := struct {
			Kind string `json:"kind"`
			Record
		}{"question", rec}
		if err := Notify(ctx, n.Command, h.Dir, payload, n.Timeout.Duration); err != nil {
			if ctx.Err() != nil {
				return h.cutOff(res, rec)
			}
			return res, fmt.Errorf("re-notify %s: %w", c.ID, err)
		}
		res.Detail = "notified the human again"
		return res, nil
	}
	res := RetryResult{Via: "responder", Record: rec}
	r, ok := h.responder(c.To)
	if !ok {
		return res, fmt.Errorf("agent %s has no responder", c.To)
	}
	out, err := h.attempt(ctx, rec, r, 0)
	var cut *CutOffError
	if errors.As(err, &cut) {
		return h.cutOff(res, rec)
	}
	if err != nil {
		return res, err // a *ResponderError names the agent and what went wrong
	}
	res.Record = out
	switch out.Outcome {
	case OutcomeAnswered:
		res.Answered = true
		res.Detail = fmt.Sprintf("the %s responder answered", c.To)
	default:
		res.Detail = out.Detail
	}
	return res, nil
}

// cutOff gives back a claimed retry whose run was cut off.
func (h *Hub) cutOff(res RetryResult, claimed Record) (RetryResult, error) {
	res.CutOff = true
	res.Detail = "the run was cut off before it finished; the retry is left for the next command"
	if err := h.ReleaseRetry(claimed); err != nil {
		return res, fmt.Errorf("%s: give back the retry cut off: %w", claimed.ID, err)
	}
	return res, nil
}

// EscalateIf escalates a clarification for the monitor (stale too long,
// stuck, deadlocked), with reason in the escalation entry and its monitor
// state.
func (h *Hub) EscalateIf(ctx context.Context, id, reason string, guard Guard) (Record, error) {
	rec, err := h.changeIf(ctx, id, guard, func(c *ledger.Clarification, now time.Time) error {
		if err := escalate(c, issueOf(c), reason, "", now); err != nil {
			return err
		}
		monitorState(c).Reason = reason
		return nil
	})
	if err != nil {
		return Record{}, err
	}
	h.escalated(ctx, rec)
	return rec, nil
}

// AbandonIf abandons a clarification for the monitor (its asker moved on).
func (h *Hub) AbandonIf(ctx context.Context, id, reason string, guard Guard) (Record, error) {
	rec, err := h.changeIf(ctx, id, guard, func(c *ledger.Clarification, now time.Time) error {
		if err := c.Move(ledger.Abandoned); err != nil {
			return err
		}
		c.Thread = append(c.Thread, entry(c, HubAgent, ledger.Resolution, "Abandoned: "+reason, now))
		monitorState(c).Reason = reason
		return nil
	})
	if err != nil {
		return Record{}, err
	}
	h.changed(EventAbandoned, rec, HubAgent, reason)
	return rec, nil
}

// ResolveIf resolves an answered clarification for the monitor, with its
// last answer as the resolution (its asker finished without resolving it).
func (h *Hub) ResolveIf(ctx context.Context, id, reason string, guard Guard) (Record, error) {
	rec, err := h.changeIf(ctx, id, guard, func(c *ledger.Clarification, now time.Time) error {
		if err := c.Move(ledger.Resolved); err != nil {
			return err
		}
		text := "Resolved automatically: " + reason + "."
		if a := c.Current(ledger.Answer); a != nil {
			text += " The last answer stands: " + a.Body
		}
		c.Thread = append(c.Thread, entry(c, HubAgent, ledger.Resolution, clip(text, ledger.MaxBodyLen), now))
		t := ledger.T(now)
		c.ResolvedAt = &t
		monitorState(c).Reason = reason
		return nil
	})
	if err != nil {
		return Record{}, err
	}
	h.changed(EventResolved, rec, HubAgent, reason)
	return rec, nil
}

// clip cuts s to at most max bytes, at a rune boundary.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}
