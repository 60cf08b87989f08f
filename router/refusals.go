package router

import (
	"fmt"

	"github.com/agentx-cli/agentx/ledger"
)

// What was refused or failed with nothing changed is logged too, so that a
// person sees it (agentx events, the digest): the clarification protocol
// has a scope violation rejected "and logged". Such an event is not a
// change: Changes does not count it, and it makes no inbox item and
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
