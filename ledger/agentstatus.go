package ledger

import (
	"context"
	"path/filepath"
	"sort"
)

// AgentState is an agent's status value in agent-status.json.
type AgentState string

// The agent statuses of the AgentX format.
const (
	Idle                 AgentState = "idle"
	Working              AgentState = "working"
	Reviewing            AgentState = "reviewing"
	Clarifying           AgentState = "clarifying"
	BlockedClarification AgentState = "blocked-clarification"
	Done                 AgentState = "done"
	Stuck                AgentState = "stuck"
)

// AgentStates lists every agent status.
var AgentStates = []AgentState{Idle, Working, Reviewing, Clarifying, BlockedClarification, Done, Stuck}

// Valid reports whether s is a known agent status.
func (s AgentState) Valid() bool {
	for _, v := range AgentStates {
		if v == s {
			return true
		}
	}
	return false
}

// AgentStatus is one agent's entry in agent-status.json.
type AgentStatus struct {
	Status          AgentState `json:"status"`
	Issue           *int       `json:"issue,omitempty"`
	LastActivity    *Time      `json:"lastActivity,omitempty"`
	ClarificationID string     `json:"clarificationId,omitempty"`
	WaitingOn       string     `json:"waitingOn,omitempty"`
	RespondingTo    string     `json:"respondingTo,omitempty"`
}

// AgentStatuses is the content of agent-status.json, keyed by agent name.
type AgentStatuses map[string]*AgentStatus

// Names returns the agent names, sorted.
func (m AgentStatuses) Names() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// AgentStatusFile is the file name of the agent status store.
const AgentStatusFile = "agent-status.json"

// AgentStatusPath is the agent status file of the store.
func (s *Store) AgentStatusPath() string { return filepath.Join(s.dir, AgentStatusFile) }

// ReadAgents returns the agent statuses without locking (a missing file is empty).
func (s *Store) ReadAgents() (AgentStatuses, error) {
	m := AgentStatuses{}
	if err := s.ReadState(AgentStatusFile, &m); err != nil {
		return nil, err
	}
	for k, v := range m {
		if v == nil {
			delete(m, k)
		}
	}
	return m, nil
}

// UpdateAgents changes agent-status.json under its lock, atomically.
func (s *Store) UpdateAgents(ctx context.Context, fn func(AgentStatuses) error) (AgentStatuses, error) {
	m := AgentStatuses{}
	err := s.UpdateState(ctx, AgentStatusFile, &m, func() error {
		for k, v := range m {
			if v == nil {
				delete(m, k)
			}
		}
		if err := fn(m); err != nil {
			return err
		}
		for name, st := range m {
			if err := ValidateAgent("agent", name); err != nil {
				return err
			}
			if !st.Status.Valid() {
				return &InputError{Field: "status of " + name, Value: string(st.Status), Msg: "is not an agent status"}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}
