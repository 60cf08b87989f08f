package router

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// TestAgentStatusView proves which of an agent's rows agent-status.json
// shows, and what becomes of an entry no row derives any more.
func TestAgentStatusView(t *testing.T) {
	at := func(m int) *ledger.Time { v := ledger.T(t0.Add(time.Duration(m) * time.Minute)); return &v }
	n := func(i int) *int { return &i }
	row := func(agent string, st ledger.AgentState, issue, min int) AgentState {
		return AgentState{Agent: agent, AgentStatus: &ledger.AgentStatus{Status: st, Issue: n(issue), LastActivity: at(min)}}
	}
	blocked := row("engineer", ledger.BlockedClarification, 7, 1)
	blocked.ClarificationID, blocked.WaitingOn = "CLR-7-001", "architect"
	tests := []struct {
		name string
		rows []AgentState
		prev ledger.AgentStatuses
		want map[string]string // agent -> status@issue
	}{
		{"blocked beats a later hook on another issue",
			[]AgentState{row("engineer", ledger.Working, 8, 9), blocked}, nil,
			map[string]string{"engineer": "blocked-clarification@7"}},
		{"clarifying beats working",
			[]AgentState{row("architect", ledger.Working, 1, 9), row("architect", ledger.Clarifying, 2, 1)}, nil,
			map[string]string{"architect": "clarifying@2"}},
		{"between equals the latest",
			[]AgentState{row("engineer", ledger.Working, 1, 1), row("engineer", ledger.Working, 2, 5), row("engineer", ledger.Working, 3, 2)}, nil,
			map[string]string{"engineer": "working@2"}},
		{"at work beats done",
			[]AgentState{row("engineer", ledger.Done, 1, 9), row("engineer", ledger.Working, 2, 1)}, nil,
			map[string]string{"engineer": "working@2"}},
		{"people and the hub never appear",
			[]AgentState{row(ledger.Human, ledger.Clarifying, 1, 1), row(HubAgent, ledger.Working, 1, 1)}, ledger.AgentStatuses{ledger.Human: {Status: ledger.Idle}},
			map[string]string{}},
		{"a closed clarification: the asker works, the responder is idle; another tool's entry kept",
			nil, ledger.AgentStatuses{
				"engineer":  {Status: ledger.BlockedClarification, Issue: n(7), ClarificationID: "CLR-7-001", WaitingOn: "architect"},
				"architect": {Status: ledger.Clarifying, Issue: n(7), ClarificationID: "CLR-7-001", RespondingTo: "engineer"},
				"tester":    {Status: ledger.Stuck, Issue: n(3)},
			},
			map[string]string{"engineer": "working@7", "architect": "idle@7", "tester": "stuck@3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for name, st := range AgentStatusView(tt.rows, tt.prev) {
				got[name] = string(st.Status) + "@" + itoa(*st.Issue)
				if st.Status != ledger.BlockedClarification && st.Status != ledger.Clarifying {
					assert.Empty(t, st.ClarificationID+st.WaitingOn+st.RespondingTo, "%s: no clarification fields", name)
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestSyncAgentStatus is the file after each step of an ask: hook start,
// a blocking question, its answer, its resolution. Before the file was
// derived it said "working" throughout.
func TestSyncAgentStatus(t *testing.T) {
	ctx := context.Background()
	h, _ := newTestHub(t, "")
	status := func() ledger.AgentStatuses {
		t.Helper()
		require.NoError(t, h.SyncAgentStatus(ctx))
		m, err := h.Store.ReadAgents()
		require.NoError(t, err)
		return m
	}
	_, err := h.Hook(ctx, HookStart, "engineer", 42)
	require.NoError(t, err)
	assert.Equal(t, ledger.Working, status()["engineer"].Status)

	rec, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	m := status()
	eng, arch := m["engineer"], m["architect"]
	require.NotNil(t, eng)
	require.NotNil(t, arch)
	assert.Equal(t, ledger.AgentStatus{Status: ledger.BlockedClarification, Issue: eng.Issue, LastActivity: eng.LastActivity, ClarificationID: rec.Clarification.ID, WaitingOn: "architect"}, *eng)
	assert.Equal(t, ledger.AgentStatus{Status: ledger.Clarifying, Issue: arch.Issue, LastActivity: arch.LastActivity, ClarificationID: rec.Clarification.ID, RespondingTo: "engineer"}, *arch)
	assert.Equal(t, 42, *eng.Issue)

	_, err = h.Answer(ctx, rec.Clarification.ID, "architect", "Repository pattern.")
	require.NoError(t, err)
	m = status()
	assert.Equal(t, ledger.Working, m["engineer"].Status)
	assert.Empty(t, m["engineer"].WaitingOn)
	assert.Equal(t, ledger.Idle, m["architect"].Status)

	_, err = h.Resolve(ctx, rec.Clarification.ID, "engineer", "")
	require.NoError(t, err)
	m = status()
	assert.Equal(t, ledger.Working, m["engineer"].Status)
	assert.Equal(t, int64(4), h.Changes(), "hook, ask, answer, resolve")
}
