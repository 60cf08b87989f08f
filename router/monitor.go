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
		return h.Notifier() != nil
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
		n := h.Notifier()
		if n == nil {
			return res, errors.New("no notify command is configured and trusted")
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

// Move is one change the monitor decided on a clarification: to stale,
// escalated, abandoned or resolved, for reason, if Guard (run under the
// ledger's lock) still allows it.
type Move struct {
	ID     string
	To     ledger.Status
	Reason string
	Guard  Guard
}

// Moved is what came of one Move: the record as written, or why not (a
// *SkippedError when its guard no longer held).
type Moved struct {
	Record
	Err error
}

// errNoMove ends a ledger update in which no move applied: nothing to
// write.
var errNoMove = errors.New("no move applied")

// Apply makes moves on one issue's clarifications inside one ledger update:
// one lock, one read and one write however many there are (200 questions
// going stale at once took 200 locked writes, 0.7 s, where one takes
// milliseconds). Each move's guard runs on the ledger as the moves before it
// left it, as it would with a write each. A move that no longer applies (its
// guard, or the status it would leave) changes nothing and says why in its
// Moved; the others are written. A failed update (a lock wait that timed
// out, a corrupt ledger) fails every move. After the write, each move made is
// logged as an event, and an escalation notifies a human.
func (h *Hub) Apply(ctx context.Context, issue int, moves []Move) []Moved {
	out := make([]Moved, len(moves))
	_, err := h.Store.Update(ctx, issue, func(l *ledger.Ledger) error {
		made := false
		now := h.now()
		for i, mv := range moves {
			out[i] = Moved{Err: applyMove(l, mv, now)} // a remote retry starts afresh
			if out[i].Err == nil {
				out[i].Record = Record{IssueNumber: issue, Clarification: l.Find(mv.ID)}
				made = true
			}
		}
		if !made {
			return errNoMove
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoMove) {
		err = h.lockTimedOut(err, func() Event {
			e := Event{IssueNumber: issue}
			if len(moves) > 0 {
				e = h.about(issue, moves[0].ID)
			}
			e.By = HubAgent
			return e
		})
		for i := range out {
			out[i] = Moved{Err: err}
		}
		return out
	}
	for i, mv := range moves {
		if out[i].Err != nil {
			continue
		}
		rec := out[i].Record
		switch mv.To {
		case ledger.Stale:
			h.changed(EventStale, rec, HubAgent, mv.Reason)
		case ledger.Escalated:
			h.escalated(ctx, rec)
		case ledger.Abandoned:
			h.changed(EventAbandoned, rec, HubAgent, mv.Reason)
		case ledger.Resolved:
			h.changed(EventResolved, rec, HubAgent, mv.Reason)
		}
	}
	return out
}

// applyMove makes one move on l, or nothing when it does not apply.
func applyMove(l *ledger.Ledger, mv Move, now time.Time) error {
	c := l.Find(mv.ID)
	if c == nil {
		return fmt.Errorf("clarification %s: %w", mv.ID, ledger.ErrNotFound)
	}
	if mv.Guard != nil {
		if why := mv.Guard(l, c, now); why != "" {
			return &SkippedError{ID: mv.ID, Reason: why}
		}
	}
	// Each case moves first: a move the lifecycle refuses changes nothing.
	switch mv.To {
	case ledger.Stale:
		if err := c.Move(ledger.Stale); err != nil {
			return err
		}
		m := monitorState(c)
		t := ledger.T(now)
		m.StaleAt = &t
	case ledger.Escalated:
		// with mv.Reason in the escalation entry
		if err := escalate(c, issueOf(c), mv.Reason, "", now); err != nil {
			return err
		}
	case ledger.Abandoned: // its asker moved on
		if err := c.Move(ledger.Abandoned); err != nil {
			return err
		}
		c.Thread = append(c.Thread, entry(c, HubAgent, ledger.Resolution, "Abandoned: "+mv.Reason, now))
	case ledger.Resolved: // its asker finished without resolving it: the last answer stands
		if err := c.Move(ledger.Resolved); err != nil {
			return err
		}
		text := "Resolved automatically: " + mv.Reason + "."
		if a := c.Current(ledger.Answer); a != nil {
			text += " The last answer stands: " + a.Body
		}
		c.Thread = append(c.Thread, entry(c, HubAgent, ledger.Resolution, clip(text, ledger.MaxBodyLen), now))
		t := ledger.T(now)
		c.ResolvedAt = &t
	default:
		return fmt.Errorf("%s: the monitor does not move a clarification to %q", mv.ID, mv.To)
	}
	monitorState(c).Reason = mv.Reason
	return nil
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
