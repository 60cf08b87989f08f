package router

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

func always(*ledger.Ledger, *ledger.Clarification, time.Time) string { return "" }

func never(_ *ledger.Ledger, c *ledger.Clarification, _ time.Time) string {
	return c.ID + " moved on"
}

// TestGuardedChanges proves each monitor action re-checks its guard under
// the lock: a guard that says no writes nothing (not even the index), one
// that says yes makes the change with its event.
func TestGuardedChanges(t *testing.T) {
	ctx := context.Background()
	type action func(h *Hub, id string, g Guard) (Record, error)
	tests := []struct {
		name     string
		prepare  func(h *Hub, id string)
		act      action
		status   ledger.Status
		event    EventType
		reasonIn func(c *ledger.Clarification) string
	}{
		{"mark stale", nil,
			func(h *Hub, id string, g Guard) (Record, error) { return h.MarkStale(ctx, id, "stale: overdue", g) },
			ledger.Stale, EventStale, func(c *ledger.Clarification) string { return c.X.Monitor.Reason }},
		{"escalate", nil,
			func(h *Hub, id string, g Guard) (Record, error) { return h.EscalateIf(ctx, id, "deadlock: test", g) },
			ledger.Escalated, EventEscalated, EscalationReason},
		{"abandon", nil,
			func(h *Hub, id string, g Guard) (Record, error) {
				return h.AbandonIf(ctx, id, "abandoned: moved on", g)
			},
			ledger.Abandoned, EventAbandoned, func(c *ledger.Clarification) string { return c.Current(ledger.Resolution).Body }},
		{"resolve", func(h *Hub, id string) {
			_, err := h.Answer(ctx, id, "architect", "SQLite.")
			require.NoError(t, err)
		},
			func(h *Hub, id string, g Guard) (Record, error) { return h.ResolveIf(ctx, id, "finished", g) },
			ledger.Resolved, EventResolved, func(c *ledger.Clarification) string { return c.Current(ledger.Resolution).Body }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newTestHub(t, "")
			rec, err := h.Ask(ctx, askReq("engineer", "architect"))
			require.NoError(t, err)
			if tt.prepare != nil {
				tt.prepare(h, rec.ID)
			}
			before, err := os.ReadFile(h.Store.Path(42))
			require.NoError(t, err)
			beforeIx, err := os.ReadFile(h.Store.IssueIndexPath(42))
			require.NoError(t, err)

			_, err = tt.act(h, rec.ID, never)
			var skip *SkippedError
			require.True(t, errors.As(err, &skip), "got %v", err)
			assert.Equal(t, "CLR-42-001 moved on", skip.Reason)
			after, _ := os.ReadFile(h.Store.Path(42))
			afterIx, _ := os.ReadFile(h.Store.IssueIndexPath(42))
			assert.Equal(t, string(before), string(after))
			assert.Equal(t, string(beforeIx), string(afterIx))

			out, err := tt.act(h, rec.ID, always)
			require.NoError(t, err)
			assert.Equal(t, tt.status, out.Status)
			c, err := h.Store.Get(rec.ID)
			require.NoError(t, err)
			assert.Equal(t, tt.status, c.Status)
			assert.NotEmpty(t, tt.reasonIn(c))
			evs, err := h.Events.Read(EventFilter{ID: rec.ID})
			require.NoError(t, err)
			assert.Equal(t, tt.event, evs.Events[len(evs.Events)-1].Type)
			assert.Equal(t, HubAgent, evs.Events[len(evs.Events)-1].By)
		})
	}
}

// TestRetry proves a claimed retry runs the responder once and records its
// answer; a failing responder leaves the question stale.
func TestRetry(t *testing.T) {
	ctx := context.Background()
	h, fr := newTestHub(t, "")
	rec, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	_, err = h.MarkStale(ctx, rec.ID, "stale", nil)
	require.NoError(t, err)
	assert.False(t, h.CanRetry("architect"))
	_, err = h.Retry(ctx, rec)
	assert.EqualError(t, err, "agent architect has no responder")
	assert.Empty(t, fr.calls)

	h.Rules.Config.Agents["architect"] = agentCmd("./architect.sh")
	assert.True(t, h.CanRetry("architect"))
	claimed, err := h.ClaimRetry(ctx, rec.ID, time.Time{}, always)
	require.NoError(t, err)
	assert.Equal(t, 1, claimed.X.Monitor.Retries)
	assert.Equal(t, t0, claimed.X.Monitor.RetriedAt.Time)

	fr.results = []fakeResult{{err: errors.New("model unavailable")}}
	_, err = h.Retry(ctx, claimed)
	assert.EqualError(t, err, "model unavailable")
	c, _ := h.Store.Get(rec.ID)
	assert.Equal(t, ledger.Stale, c.Status)

	fr.results = []fakeResult{{answer: "SQLite."}}
	res, err := h.Retry(ctx, claimed)
	require.NoError(t, err)
	assert.True(t, res.Answered)
	assert.Equal(t, ledger.Answered, res.Record.Status)
	assert.Len(t, fr.calls, 2, "one run per Retry: no second attempt inside")
}

// TestAskToHumanUsesHumanSLA proves a question to a human gets
// human_sla_minutes, not the step's SLA.
func TestAskToHumanUsesHumanSLA(t *testing.T) {
	ctx := context.Background()
	h, _ := newTestHub(t, "")
	rec, err := h.Ask(ctx, askReq("engineer", ledger.Human))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(24*time.Hour), rec.StaleAfter.Time)
	rec, err = h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(30*time.Minute), rec.StaleAfter.Time)
	h.Rules.Config.HumanSLAMinutes = 90
	rec, err = h.Ask(ctx, askReq("engineer", ledger.Human))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(90*time.Minute), rec.StaleAfter.Time)
}

func TestHook(t *testing.T) {
	ctx := context.Background()
	h, _ := newTestHub(t, "")
	tests := []struct {
		phase, agent string
		want         ledger.AgentState
		err          string
	}{
		{HookStart, "engineer", ledger.Working, ""},
		{HookStart, "reviewer", ledger.Reviewing, ""},
		{HookFinish, "engineer", ledger.Done, ""},
		{HookStart, "Engineer", "", "is not an agent name"},
		{HookStart, ledger.Human, "", "is not an agent that works on issues"},
		{"middle", "engineer", "", `hook phase "middle"`},
	}
	for _, tt := range tests {
		st, err := h.Hook(ctx, tt.phase, tt.agent, 42)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, st)
		m, err := h.Store.ReadAgents()
		require.NoError(t, err)
		assert.Equal(t, tt.want, m[tt.agent].Status)
		assert.Equal(t, 42, *m[tt.agent].Issue)
	}
}

// TestReadyAndListUseTheIndex proves Ready and List (open only) read the
// index, not every ledger, and fall back to the ledgers when it is dirty.
func TestReadyAndListUseTheIndex(t *testing.T) {
	ctx := context.Background()
	h, _ := newTestHub(t, "")
	for _, n := range []int{1, 2, 3} {
		_, err := h.Ask(ctx, AskRequest{Issue: n, From: "engineer", To: "architect", Topic: "t", Question: "q"})
		require.NoError(t, err)
	}
	_, err := h.Answer(ctx, "CLR-2-001", "architect", "a")
	require.NoError(t, err)
	_, err = h.Resolve(ctx, "CLR-2-001", "engineer", "")
	require.NoError(t, err)

	// a ledger the index does not know about (written behind agentx's back)
	l := &ledger.Ledger{IssueNumber: 9, Clarifications: []*ledger.Clarification{{
		ID: "CLR-9-001", From: "engineer", To: "architect", Topic: "t", Blocking: true, Status: ledger.Pending,
		Round: 1, MaxRounds: 5, Created: ledger.T(t0), StaleAfter: ledger.T(t0),
		Thread: []ledger.ThreadEntry{{Round: 1, From: "engineer", Type: ledger.Question, Body: "q", Timestamp: ledger.T(t0)}},
	}}}
	data, err := ledger.Encode(l)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(h.Store.Path(9), data, 0o644))

	issues := func(rs []Readiness) []int {
		out := []int{}
		for _, r := range rs {
			out = append(out, r.Issue)
		}
		return out
	}
	rs, errs, err := h.Ready(nil)
	require.NoError(t, err)
	assert.Empty(t, errs)
	assert.Equal(t, []int{1, 3}, issues(rs), "from the index: open issues only")
	assert.Equal(t, StateBlocked, rs[0].State)
	recs, _, err := h.List(Filter{})
	require.NoError(t, err)
	assert.Len(t, recs, 2)
	recs, _, err = h.List(Filter{All: true})
	require.NoError(t, err)
	assert.Len(t, recs, 4, "--all reads every ledger")

	require.NoError(t, os.Remove(filepath.Join(h.Store.Dir(), filepath.FromSlash(ledger.IndexBuiltFile))))
	rs, _, err = h.Ready(nil)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3, 9}, issues(rs), "an index never built is not trusted: the ledgers are scanned")
	recs, _, err = h.List(Filter{})
	require.NoError(t, err)
	assert.Len(t, recs, 3)
}

func agentCmd(argv ...string) workflow.AgentConfig { return workflow.AgentConfig{Command: argv} }
