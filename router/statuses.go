package router

import (
	"context"
	"fmt"

	"github.com/agentx-cli/agentx/ledger"
)

// changed is what follows every recorded change: the event is appended and
// the two agents' statuses brought in step. Neither can undo the change, so
// failures go to Warn.
func (h *Hub) changed(ctx context.Context, t EventType, rec Record, by, reason string) {
	ev := EventFor(t, rec.IssueNumber, rec.Clarification, h.now())
	ev.By, ev.Reason = by, reason
	if err := h.Events.Append(ev); err != nil {
		h.Warn(fmt.Errorf("event log: %w", err))
	}
	if err := h.syncStatuses(ctx, rec); err != nil {
		h.Warn(fmt.Errorf("agent status: %w", err))
	}
}

// syncStatuses sets the agents' statuses from the clarification: while a
// blocking question is open and unanswered, the asker is
// blocked-clarification and the target clarifying; after that, an agent
// still marked for this clarification goes back to working.
func (h *Hub) syncStatuses(ctx context.Context, rec Record) error {
	c := rec.Clarification
	issue := rec.IssueNumber
	now := ledger.T(h.now())
	waiting := c.Blocking && (c.Status == ledger.Pending || c.Status == ledger.Stale)
	_, err := h.Store.UpdateAgents(ctx, func(m ledger.AgentStatuses) error {
		set := func(agent string, st *ledger.AgentStatus) {
			if agent == ledger.Human || agent == HubAgent {
				return
			}
			m[agent] = st
		}
		if waiting {
			set(c.From, &ledger.AgentStatus{Status: ledger.BlockedClarification, Issue: &issue, LastActivity: &now, ClarificationID: c.ID, WaitingOn: c.To})
			set(c.To, &ledger.AgentStatus{Status: ledger.Clarifying, Issue: &issue, LastActivity: &now, ClarificationID: c.ID, RespondingTo: c.From})
			return nil
		}
		for _, agent := range []string{c.From, c.To} {
			if st, ok := m[agent]; ok && st.ClarificationID == c.ID {
				set(agent, &ledger.AgentStatus{Status: ledger.Working, Issue: &issue, LastActivity: &now})
			}
		}
		return nil
	})
	return err
}

// notify runs the configured notify command, if any, for a question to a
// human or an escalation.
func (h *Hub) notify(ctx context.Context, kind string, rec Record) {
	n := h.Rules.Config.Notify
	if n == nil || len(n.Command) == 0 {
		return
	}
	payload := struct {
		Kind string `json:"kind"`
		Record
	}{kind, rec}
	if err := Notify(ctx, n.Command, h.Dir, payload, 0); err != nil {
		h.Warn(fmt.Errorf("notify: %w", err))
	}
}
