package router

import (
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// entryEvent is the event of a thread entry (the first question is
// EventRequested).
func entryEvent(t ledger.EntryType) (EventType, bool) {
	switch t {
	case ledger.Question:
		return EventFollowedUp, true
	case ledger.Answer:
		return EventAnswered, true
	case ledger.Escalation:
		return EventEscalated, true
	case ledger.Resolution:
		return EventResolved, true
	}
	return "", false
}

// statusEvent is the event of a move no thread entry makes.
func statusEvent(s ledger.Status) (EventType, bool) {
	switch s {
	case ledger.Stale:
		return EventStale, true
	case ledger.Escalated:
		return EventEscalated, true
	case ledger.Resolved:
		return EventResolved, true
	case ledger.Abandoned:
		return EventAbandoned, true
	}
	return "", false
}

// PulledEvents are the events of the changes another host made to issue's
// clarifications (remote.Replicator.OnPulled), at now, marked ViaRemote: one
// per new thread entry (the question that asks it, each further question,
// answer, escalation and resolution), and one for a move to stale,
// escalated, resolved or abandoned that no entry made.
func PulledEvents(issue int, changes []ledger.Pulled, now time.Time) []Event {
	var out []Event
	for _, p := range changes {
		out = append(out, changeEvents(issue, p.Before, p.After, now, ViaRemote, p.Host)...)
	}
	return out
}

// changeEvents are the events of one clarification's change from before
// (nil: new) to c, made elsewhere (via, host): one per new thread entry,
// and one for a move to stale, escalated, resolved or abandoned that no
// entry made.
func changeEvents(issue int, before, c *ledger.Clarification, now time.Time, via, host string) []Event {
	var out []Event
	add := func(t EventType, round int, by, reason string) {
		e := EventFor(t, issue, c, now)
		e.Round, e.By, e.Reason = round, by, reason
		e.Via, e.Host = via, host
		out = append(out, e)
	}
	seen, was := 0, ledger.Status("")
	if before != nil {
		seen, was = len(before.Thread), before.Status
	}
	made := map[EventType]bool{}
	for i := seen; i < len(c.Thread); i++ {
		en := c.Thread[i]
		t, ok := entryEvent(en.Type)
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
		return out
	}
	t, ok := statusEvent(c.Status)
	if !ok || made[t] {
		return out
	}
	reason := ""
	if m := c.X; m != nil && m.Monitor != nil {
		reason = m.Monitor.Reason
	}
	add(t, c.Round, HubAgent, reason)
	return out
}

// OvertakenEvents are the events of the queued changes of issue that a
// delivery of the outbox could not deliver as made
// (remote.Replicator.OnOutcomes), l being the shared ledger as delivered:
// a question given another id (EventRenumbered, for its asker) and a
// change another host got to first (EventChangeSuperseded, for its
// author), so that the agent that was told "unsynced" learns what became
// of it.
func OvertakenEvents(issue int, outs []ledger.Outcome, l *ledger.Ledger, now time.Time) []Event {
	var out []Event
	for _, o := range outs {
		switch o.Outcome {
		case ledger.OutcomeRenumbered:
			c := l.Find(o.As)
			if c == nil {
				continue
			}
			e := EventFor(EventRenumbered, issue, c, now)
			e.By, e.Was, e.Reason = o.By, o.ID, o.Message
			out = append(out, e)
		case ledger.OutcomeSuperseded:
			c := l.Find(o.ID)
			if c == nil {
				continue
			}
			e := EventFor(EventChangeSuperseded, issue, c, now)
			e.By, e.Reason = o.By, o.Message
			out = append(out, e)
		}
	}
	return out
}
