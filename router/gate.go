package router

import (
	"context"
	"fmt"

	"github.com/agentx-cli/agentx/ledger"
)

// WorkEscalation is work a gate hands to a person: an agent's attempts at
// a step that did not pass.
type WorkEscalation struct {
	Issue    int
	Agent    string // the worker: the clarification's asker
	Workflow string
	Step     string
	Topic    string // one line, at most ledger.MaxTopicLen bytes
	Position string // the worker's side: what it did and what the checks said
	Reason   string // why it is escalated, the escalation's first line
}

// EscalateWork records a clarification from the worker to human that is
// escalated at once, in one ledger write: its question is the worker's
// position (the evaluations) and its escalation entry the summary a person
// acts on. It is settled like any escalation, by a person's
// `agentx clarify resolve ID --from human`, and gates `ready` until then.
// No question cap or blocking rule applies: the hub, not the agent, asks.
func (h *Hub) EscalateWork(ctx context.Context, w WorkEscalation) (Record, error) {
	if err := ledger.ValidateIssue(w.Issue); err != nil {
		return Record{}, err
	}
	if err := ledger.ValidateAgent("agent", w.Agent); err != nil {
		return Record{}, err
	}
	if err := ledger.ValidateText("topic", w.Topic, ledger.MaxTopicLen); err != nil {
		return Record{}, err
	}
	if err := ledger.ValidateText("position", w.Position, ledger.MaxBodyLen); err != nil {
		return Record{}, err
	}
	var rec Record
	_, err := h.Store.Update(ctx, w.Issue, func(l *ledger.Ledger) error {
		now := h.now()
		c := l.Ask(ledger.NewQuestion{
			From: w.Agent, To: ledger.Human, Topic: w.Topic, Body: w.Position,
			Blocking: true, MaxRounds: 1, SLA: h.Rules().Config.HumanSLA(),
			Workflow: w.Workflow, Step: w.Step,
		}, now)
		if err := escalate(c, w.Issue, w.Reason, "", now); err != nil {
			return fmt.Errorf("escalate %s: %w", c.ID, err) // nothing is written
		}
		rec = Record{IssueNumber: w.Issue, Clarification: c}
		return nil
	})
	if err != nil {
		return Record{}, h.lockTimedOut(err, func() Event {
			return Event{IssueNumber: w.Issue, FromAgent: w.Agent, ToAgent: ledger.Human, Topic: w.Topic, Blocking: true, By: HubAgent}
		})
	}
	h.changed(EventRequested, rec, w.Agent, "")
	h.escalated(ctx, rec)
	return rec, nil
}
