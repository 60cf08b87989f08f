package router

import (
	"errors"
	"fmt"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// What was refused or failed with nothing changed is logged too, so that a
// person sees it (agentx events, the digest, agentx doctor): the clarification
// protocol has a scope violation rejected "and logged", and a lock that
// stays held past the retries "logged and escalated". Such an event is not
// a change: Changes does not count it, and it makes no inbox item and
// nothing to mirror (Event.Refusal).

// refused appends e, an event of something refused or failed; a failure
// to append goes to Warn (the refusal stands either way).
func (h *Hub) refused(e Event) {
	if e.Timestamp.IsZero() {
		e.Timestamp = ledger.T(h.now())
	}
	if err := h.Events.Append(e); err != nil {
		h.Warn(fmt.Errorf("event log: %w", err))
	}
}

// ScopeRefused logs that agent's workflow step refused what it tried
// (EventScopeRefused): an ask of someone its can_clarify does not list
// (to, and the question's topic), or a write outside its write scope (to
// "", the file as topic); why is the refusal.
func (h *Hub) ScopeRefused(issue int, agent, to, topic, why string) {
	if topic == "" {
		topic = "(none)"
	}
	h.refused(Event{Type: EventScopeRefused, IssueNumber: issue, FromAgent: agent, ToAgent: to, Topic: topic, By: agent, Reason: why})
}

// lockTimedOut logs a write to an issue's ledger that gave up waiting for
// the issue's lock (err is, or wraps, a *lock.TimeoutError; any other err
// is left alone) as an EventLockTimeout: about what was being written
// (what about returns, only then: its issue and what is known of the
// clarification or question), its reason who held the lock and for how
// long. It returns err.
func (h *Hub) lockTimedOut(err error, about func() Event) error {
	var te *lock.TimeoutError
	if !errors.As(err, &te) {
		return err
	}
	e := about()
	e.Type, e.Reason = EventLockTimeout, te.Summary()
	if e.Topic == "" {
		e.Topic = fmt.Sprintf("the ledger of issue #%d", e.IssueNumber)
	}
	h.refused(e)
	return err
}

// about is what an event says of clarification id of issue: as its
// ledger holds it (read without the lock, which another holds), or its id
// alone.
func (h *Hub) about(issue int, id string) Event {
	if c, err := h.Store.Get(id); err == nil {
		return EventFor("", issue, c, h.now())
	}
	return Event{IssueNumber: issue, ClarificationID: id}
}
