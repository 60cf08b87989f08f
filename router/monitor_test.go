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
			func(h *Hub, id string, g Guard) (Record, error) {
				return moveOne(ctx, h, Move{ID: id, To: ledger.Stale, Reason: "stale: overdue", Guard: g})
			},
			ledger.Stale, EventStale, func(c *ledger.Clarification) string { return c.X.Monitor.Reason }},
		{"escalate", nil,
			func(h *Hub, id string, g Guard) (Record, error) {
				return moveOne(ctx, h, Move{ID: id, To: ledger.Escalated, Reason: "deadlock: test", Guard: g})
			},
			ledger.Escalated, EventEscalated, EscalationReason},
		{"abandon", nil,
			func(h *Hub, id string, g Guard) (Record, error) {
				return moveOne(ctx, h, Move{ID: id, To: ledger.Abandoned, Reason: "abandoned: moved on", Guard: g})
			},
			ledger.Abandoned, EventAbandoned, func(c *ledger.Clarification) string { return c.Current(ledger.Resolution).Body }},
		{"resolve", func(h *Hub, id string) {
			_, err := h.Answer(ctx, id, "architect", "SQLite.")
			require.NoError(t, err)
		},
			func(h *Hub, id string, g Guard) (Record, error) {
				return moveOne(ctx, h, Move{ID: id, To: ledger.Resolved, Reason: "finished", Guard: g})
			},
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

// TestApplyMovesInOneUpdate: Apply makes a batch of moves on one issue in
// one ledger update (every guard sees the one ledger read under the lock),
// each guard on the ledger as the moves before it left it; a move that no
// longer applies (its guard, the lifecycle, an unknown id) is reported and
// changes nothing, and the others are written with their events. A batch
// in which nothing applies writes nothing.
func TestApplyMovesInOneUpdate(t *testing.T) {
	ctx := context.Background()
	h, _ := newTestHub(t, "")
	h.Rules().Config.MaxQuestions = 0 // four questions from one agent in one run
	var ids []string
	for range 4 {
		rec, err := h.Ask(ctx, askReq("engineer", "architect"))
		require.NoError(t, err)
		ids = append(ids, rec.ID)
	}
	_, err := h.Answer(ctx, ids[1], "architect", "SQLite.")
	require.NoError(t, err)

	seen := map[*ledger.Ledger]int{}
	track := func(g Guard) Guard {
		return func(l *ledger.Ledger, c *ledger.Clarification, now time.Time) string {
			seen[l]++
			return g(l, c, now)
		}
	}
	stale := func(l *ledger.Ledger, c *ledger.Clarification, _ time.Time) string {
		if c.Status != ledger.Stale {
			return c.ID + " is not stale"
		}
		return ""
	}
	before, err := os.ReadFile(h.Store.Path(42))
	require.NoError(t, err)
	none := h.Apply(ctx, 42, []Move{{ID: ids[2], To: ledger.Stale, Guard: never}, {ID: "CLR-42-099", To: ledger.Stale}})
	require.Len(t, none, 2)
	var skip *SkippedError
	assert.True(t, errors.As(none[0].Err, &skip), "got %v", none[0].Err)
	assert.ErrorIs(t, none[1].Err, ledger.ErrNotFound)
	after, _ := os.ReadFile(h.Store.Path(42))
	assert.Equal(t, string(before), string(after), "nothing applied: nothing written")

	moves := []Move{
		{ID: ids[0], To: ledger.Stale, Reason: "stale: overdue", Guard: track(always)},
		{ID: ids[1], To: ledger.Stale, Reason: "stale: overdue", Guard: track(always)}, // answered: the lifecycle refuses
		{ID: ids[2], To: ledger.Stale, Reason: "stale: overdue", Guard: track(never)},
		{ID: ids[0], To: ledger.Escalated, Reason: "stale too long", Guard: track(stale)}, // stale by the first move
		{ID: ids[3], To: ledger.Abandoned, Reason: "its asker moved on", Guard: track(always)},
	}
	out := h.Apply(ctx, 42, moves)
	require.Len(t, out, len(moves))
	assert.Len(t, seen, 1, "one ledger read, one update, for every move")
	for _, n := range seen {
		assert.Equal(t, len(moves), n, "every guard ran")
	}
	assert.NoError(t, out[0].Err)
	var te *ledger.TransitionError
	assert.True(t, errors.As(out[1].Err, &te), "got %v", out[1].Err)
	assert.True(t, errors.As(out[2].Err, &skip), "got %v", out[2].Err)
	assert.NoError(t, out[3].Err)
	assert.NoError(t, out[4].Err)
	assert.Equal(t, ledger.Escalated, out[3].Status)

	want := []ledger.Status{ledger.Escalated, ledger.Answered, ledger.Pending, ledger.Abandoned}
	for i, id := range ids {
		c, err := h.Store.Get(id)
		require.NoError(t, err)
		assert.Equal(t, want[i], c.Status, id)
	}
	for _, tc := range []struct {
		id     string
		events []EventType
	}{
		{ids[0], []EventType{EventRequested, EventStale, EventEscalated}},
		{ids[2], []EventType{EventRequested}},
		{ids[3], []EventType{EventRequested, EventAbandoned}},
	} {
		evs, err := h.Events.Read(EventFilter{ID: tc.id})
		require.NoError(t, err)
		var got []EventType
		for _, e := range evs.Events {
			got = append(got, e.Type)
		}
		assert.Equal(t, tc.events, got, tc.id)
	}
}

// TestRetry proves a claimed retry runs the responder once and records its
// answer; a failing responder leaves the question stale.
func TestRetry(t *testing.T) {
	ctx := context.Background()
	h, fr := newTestHub(t, "")
	rec, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	_, err = moveOne(ctx, h, Move{ID: rec.ID, To: ledger.Stale, Reason: "stale"})
	require.NoError(t, err)
	assert.False(t, h.CanRetry("architect"))
	_, err = h.Retry(ctx, rec)
	assert.EqualError(t, err, "agent architect has no responder")
	assert.Empty(t, fr.calls)

	h.Rules().Config.Agents["architect"] = agentCmd("./architect.sh")
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
	h.Rules().Config.HumanSLAMinutes = 90
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
		require.NoError(t, h.SyncAgentStatus(ctx))
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
	assert.Equal(t, []int{1, 3, 9}, issues(rs), "from the index, and the ledger it had not seen: open issues only")
	assert.Equal(t, StateBlocked, rs[0].State)
	recs, _, err := h.List(Filter{})
	require.NoError(t, err)
	assert.Len(t, recs, 3)
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

// moveOne makes one move through Apply, as the monitor makes a lone one.
func moveOne(ctx context.Context, h *Hub, mv Move) (Record, error) {
	issue, _, err := ledger.ParseID(mv.ID)
	if err != nil {
		return Record{}, err
	}
	m := h.Apply(ctx, issue, []Move{mv})[0]
	return m.Record, m.Err
}
