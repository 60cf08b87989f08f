package router

import (
	"context"
	"fmt"

	"github.com/agentx-cli/agentx/ledger"
)

// SyncAgentStatus makes agent-status.json, the file the AgentX tools
// read, say what AgentStates derives: one entry per agent (AgentStatusView).
// It reads the ledgers' index and the hook records under the file's own
// lock, never an issue's, so it is called after a command's change, not
// inside it. Every process that changed something calls it after its
// change: the last one to hold the lock read every change finished before
// it, and any change after that is followed by its own call, so once the
// workspace is quiet the file agrees with the ledgers.
func (h *Hub) SyncAgentStatus(ctx context.Context) error {
	_, err := h.Store.UpdateAgents(ctx, func(m ledger.AgentStatuses) error {
		rows, _, err := h.AgentStates()
		if err != nil {
			return err
		}
		next := AgentStatusView(rows, m)
		clear(m)
		for k, v := range next {
			m[k] = v
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("agent-status.json: %w", err)
	}
	return nil
}

// statusRank orders the statuses an agent may have on several issues: the
// one agent-status.json shows is the most pressing.
func statusRank(s ledger.AgentState) int {
	switch s {
	case ledger.BlockedClarification:
		return 5
	case ledger.Clarifying:
		return 4
	case ledger.Working, ledger.Reviewing:
		return 3
	case ledger.Stuck:
		return 2
	case ledger.Done:
		return 1
	}
	return 0
}

// AgentStatusView is agent-status.json as derived from rows (AgentStates,
// one per agent and issue) and the file as it was (prev): one entry per
// agent, the AgentX format holding one issue per agent. Of an agent's
// rows the most pressing status wins (blocked on a clarification, then
// clarifying, then at work, then done), the latest activity between equals.
// An agent that has no row is kept as another AgentX tool wrote it, unless
// it showed a clarification that has since closed: an asker goes back to
// working on its issue, a responder to idle.
func AgentStatusView(rows []AgentState, prev ledger.AgentStatuses) ledger.AgentStatuses {
	out := ledger.AgentStatuses{}
	for _, r := range rows {
		if r.AgentStatus == nil || r.Agent == ledger.Human || r.Agent == HubAgent {
			continue
		}
		cur, ok := out[r.Agent]
		if ok {
			a, b := statusRank(r.Status), statusRank(cur.Status)
			if a < b || a == b && !later(r.LastActivity, cur.LastActivity) {
				continue
			}
		}
		st := *r.AgentStatus
		out[r.Agent] = &st
	}
	for name, st := range prev {
		if _, ok := out[name]; ok || st == nil || name == ledger.Human || name == HubAgent {
			continue
		}
		kept := *st
		switch {
		case st.Status == ledger.BlockedClarification || st.WaitingOn != "":
			kept.Status = ledger.Working
		case st.Status == ledger.Clarifying || st.RespondingTo != "":
			kept.Status = ledger.Idle
		}
		if kept.Status != st.Status {
			kept.ClarificationID, kept.WaitingOn, kept.RespondingTo = "", "", ""
		}
		out[name] = &kept
	}
	return out
}

// later reports whether a is after b (a missing time is the earliest).
func later(a, b *ledger.Time) bool {
	switch {
	case a == nil:
		return false
	case b == nil:
		return true
	}
	return a.Time.After(b.Time)
}
