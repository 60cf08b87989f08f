package router

import (
	"context"
	"fmt"

	"github.com/agentx-cli/agentx/ledger"
)

// The hook phases: an agent starts or finishes its work on an issue.
const (
	HookStart  = "start"
	HookFinish = "finish"
)

// Hook records an agent starting or finishing work on an issue in the
// issue's hook record: at start it is working (a reviewer: reviewing), at
// finish done. It returns the status set. agent-status.json is derived
// from these records and the open questions afterwards (SyncAgentStatus).
func (h *Hub) Hook(ctx context.Context, phase, agent string, issue int) (ledger.AgentState, error) {
	if err := ledger.ValidateAgent("agent", agent); err != nil {
		return "", err
	}
	if agent == ledger.Human || agent == HubAgent {
		return "", &ledger.InputError{Field: "agent", Value: agent, Msg: "is not an agent that works on issues"}
	}
	if err := ledger.ValidateIssue(issue); err != nil {
		return "", err
	}
	var st ledger.AgentState
	switch phase {
	case HookStart:
		st = ledger.Working
		if agent == "reviewer" {
			st = ledger.Reviewing
		}
	case HookFinish:
		st = ledger.Done
	default:
		return "", fmt.Errorf("hook phase %q: want %s or %s", phase, HookStart, HookFinish)
	}
	now := ledger.T(h.now())
	// The record `agentx state` derives from: per issue, so that agents
	// on different issues never wait on each other's file.
	m := ledger.AgentStatuses{}
	err := h.Store.UpdateState(ctx, HooksFile(issue), &m, func() error {
		m[agent] = &ledger.AgentStatus{Status: st, LastActivity: &now}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hook %s: status of %s on #%d: %w", phase, agent, issue, err)
	}
	h.changes.Add(1)
	return st, nil
}
