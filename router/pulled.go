package router

import (
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// entryEvents is the event of each thread entry (the first question is
// EventRequested).
var entryEvents = map[ledger.EntryType]EventType{
	ledger.Question:   EventFollowedUp,
	ledger.Answer:     EventAnswered,
	ledger.Escalation: EventEscalated,
	ledger.Resolution: EventResolved,
}

// statusEvents is the event of each move no thread entry makes.
var statusEvents = map[ledger.Status]EventType{
	ledger.Stale:     EventStale,
	ledger.Escalated: EventEscalated,
	ledger.Resolved:  EventResolved,
	ledger.Abandoned: EventAbandoned,
}

// PulledEvents are the events of the changes another host made to issue's
// clarifications (ledger.Store.OnPulled), at now, marked ViaRemote: one
// per new thread entry (the question that asks it, each further question,
// answer, escalation and resolution), and one for a move to stale,
// escalated, resolved or abandoned that no entry made.
func PulledEvents(issue int, changes []ledger.Pulled, now time.Time) []Event {
	var out []Event
	for _, p := range changes {
		c := p.After
		add := func(t EventType, round int, by, reason string) {
			e := EventFor(t, issue, c, now)
			e.Round, e.By, e.Reason = round, by, reason
			e.Via, e.Host = ViaRemote, p.Host
			out = append(out, e)
		}
		seen, was := 0, ledger.Status("")
		if p.Before != nil {
			seen, was = len(p.Before.Thread), p.Before.Status
		}
		made := map[EventType]bool{}
		for i := seen; i < len(c.Thread); i++ {
			en := c.Thread[i]
			t, ok := entryEvents[en.Type]
			if !ok {
				continue
			}
			if t == EventFollowedUp && i == 0 {
				t = EventRequested
			}
			reason := ""
			if t == EventEscalated {
				reason = EscalationReason(c)
			}
			add(t, en.Round, en.From, reason)
			made[t] = true
		}
		if c.Status == was {
			continue
		}
		t, ok := statusEvents[c.Status]
		if !ok {
			continue
		}
		if !made[t] {
			reason := ""
			if m := c.X; m != nil && m.Monitor != nil {
				reason = m.Monitor.Reason
			}
			add(t, c.Round, HubAgent, reason)
		}
	}
	return out
}
