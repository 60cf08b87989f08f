package monitor

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

var t0 = time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func tp(t time.Time) *ledger.Time { v := ledger.T(t); return &v }

// clar builds a clarification asked at t0 with a 30-minute SLA; questions
// are the thread's questions, one round each, answered in between.
func clar(id, from, to string, st ledger.Status, questions ...string) *ledger.Clarification {
	if len(questions) == 0 {
		questions = []string{"Which database adapter should the service use?"}
	}
	c := &ledger.Clarification{
		ID: id, From: from, To: to, Topic: "topic", Blocking: true, Status: st,
		Round: len(questions), MaxRounds: 5, Created: ledger.T(t0), StaleAfter: ledger.T(at(30)),
	}
	for i, q := range questions {
		c.Thread = append(c.Thread, ledger.ThreadEntry{Round: i + 1, From: from, Type: ledger.Question, Body: q, Timestamp: ledger.T(t0)})
		if i < len(questions)-1 || st == ledger.Answered {
			c.Thread = append(c.Thread, ledger.ThreadEntry{Round: i + 1, From: to, Type: ledger.Answer, Body: "an answer", Timestamp: ledger.T(t0)})
		}
	}
	return c
}

func ent(issue int, c *ledger.Clarification) ledger.IndexEntry { return ledger.EntryOf(issue, c) }

func withMonitor(e ledger.IndexEntry, m ledger.MonitorState) ledger.IndexEntry {
	e.Monitor = &m
	return e
}

func nonBlocking(e ledger.IndexEntry) ledger.IndexEntry { e.Blocking = false; return e }

func cfg(retry ...string) Config {
	c := ConfigFrom(workflow.DefaultConfig(), func(to string) bool {
		for _, r := range retry {
			if r == to {
				return true
			}
		}
		return false
	})
	return c
}

// summary is a finding reduced to what the tables check.
type summary struct {
	ID     string
	Kind   Kind
	Action Action
}

func summarize(fs []Finding) []summary {
	out := []summary{}
	for _, f := range fs {
		out = append(out, summary{f.ID, f.Kind, f.Action})
	}
	return out
}

func TestCheckStale(t *testing.T) {
	pending := ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending))
	stale := ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Stale))
	human := ent(42, clar("CLR-42-002", "engineer", ledger.Human, ledger.Pending))
	human.StaleAfter = ledger.T(t0.Add(24 * time.Hour))
	tests := []struct {
		name  string
		e     ledger.IndexEntry
		now   time.Time
		retry []string
		want  Action // "" = nothing to do
		retr  bool
	}{
		{"fresh pending is not stale", pending, at(10), []string{"architect"}, "", false},
		{"pending at its staleAfter is not yet stale", pending, at(30), []string{"architect"}, "", false},
		{"overdue pending goes stale, with a retry", pending, at(31), []string{"architect"}, ActMarkStale, true},
		{"overdue pending without a responder goes stale, no retry", pending, at(31), nil, ActMarkStale, false},
		{"stale not yet retried is retried", withMonitor(stale, ledger.MonitorState{StaleAt: tp(at(31))}), at(32), []string{"architect"}, ActRetry, false},
		{"stale and retried waits", withMonitor(stale, ledger.MonitorState{StaleAt: tp(at(31)), Retries: 1, RetriedAt: tp(at(31))}), at(60), []string{"architect"}, "", false},
		{"stale and retried escalates one SLA after going stale", withMonitor(stale, ledger.MonitorState{StaleAt: tp(at(31)), Retries: 1, RetriedAt: tp(at(31))}), at(61), []string{"architect"}, ActEscalate, false},
		{"stale without a responder waits, not retried", withMonitor(stale, ledger.MonitorState{StaleAt: tp(at(31))}), at(45), nil, "", false},
		{"stale without a responder escalates one SLA later", withMonitor(stale, ledger.MonitorState{StaleAt: tp(at(31))}), at(61), nil, ActEscalate, false},
		{"stale marked by another tool counts from staleAfter", stale, at(40), []string{"architect"}, ActRetry, false},
		{"a retry in an earlier round does not count", func() ledger.IndexEntry {
			e := withMonitor(stale, ledger.MonitorState{StaleAt: tp(at(100)), Retries: 1, RetriedAt: tp(at(31))})
			e.Round, e.Asked, e.StaleAfter = 2, ledger.T(at(60)), ledger.T(at(90))
			return e
		}(), at(101), []string{"architect"}, ActRetry, false},
		{"a retry stamped a little before StaleAt (another process's clock) counts", withMonitor(stale, ledger.MonitorState{StaleAt: tp(at(31)), Retries: 1, RetriedAt: tp(at(31).Add(-50 * time.Millisecond))}), at(32), []string{"architect"}, "", false},
		{"answered is never stale", ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Answered)), at(500), []string{"architect"}, "", false},
		{"resolved is never flagged", ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Resolved)), at(5000), []string{"architect"}, "", false},
		{"escalated is never flagged", ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Escalated)), at(5000), []string{"architect"}, "", false},
		{"human is not stale on the agent SLA", human, at(31), []string{ledger.Human}, "", false},
		{"human is stale after the human SLA, re-notified", human, at(24*60 + 1), []string{ledger.Human}, ActMarkStale, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := CheckStale(tt.e, tt.now, cfg(tt.retry...))
			if tt.want == "" {
				assert.False(t, ok, "got %+v", f)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, f.Action)
			assert.Equal(t, KindStale, f.Kind)
			assert.Equal(t, tt.retr, f.Retry)
			assert.Contains(t, f.Reason, "stale")
		})
	}
}

// TestCheckStaleJudged: with a Judge (remote mode's check of the clocks)
// the stale rule runs at the time it gives, and not at all at zero, even
// for a stale question owed its retry.
func TestCheckStaleJudged(t *testing.T) {
	pending := ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending))
	stale := withMonitor(ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Stale)), ledger.MonitorState{StaleAt: tp(at(31))})
	tests := []struct {
		name  string
		e     ledger.IndexEntry
		now   time.Time
		judge func(ledger.IndexEntry, time.Time) time.Time
		want  Action
	}{
		{"judged at now: stale", pending, at(31), func(_ ledger.IndexEntry, now time.Time) time.Time { return now }, ActMarkStale},
		{"judged earlier: not yet", pending, at(31), func(ledger.IndexEntry, time.Time) time.Time { return at(20) }, ""},
		{"held: nothing", pending, at(500), func(ledger.IndexEntry, time.Time) time.Time { return time.Time{} }, ""},
		{"held: no retry owed is made", stale, at(32), func(ledger.IndexEntry, time.Time) time.Time { return time.Time{} }, ""},
		{"held: no escalation", stale, at(500), func(ledger.IndexEntry, time.Time) time.Time { return time.Time{} }, ""},
		{"judged past the escalation", stale, at(32), func(ledger.IndexEntry, time.Time) time.Time { return at(62) }, ActEscalate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg("architect")
			c.Judge = tt.judge
			f, ok := CheckStale(tt.e, tt.now, c)
			if tt.want == "" {
				assert.False(t, ok, "got %+v", f)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, f.Action)
		})
	}
}

// TestStaleLifecycle walks one clarification through the rule as the
// monitor's actions would change it: stale, retried, left alone, escalated.
func TestStaleLifecycle(t *testing.T) {
	c := cfg("architect")
	e := ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending))
	steps := []struct {
		now   time.Time
		want  Action
		apply func(e *ledger.IndexEntry, now time.Time)
	}{
		{at(29), "", nil},
		{at(31), ActMarkStale, func(e *ledger.IndexEntry, now time.Time) {
			e.Status = ledger.Stale
			e.Monitor = &ledger.MonitorState{StaleAt: tp(now)}
		}},
		{at(31), ActRetry, func(e *ledger.IndexEntry, now time.Time) {
			e.Monitor.Retries, e.Monitor.RetriedAt = 1, tp(now)
		}},
		{at(31), "", nil}, // idempotent: nothing more at the same instant
		{at(45), "", nil},
		{at(61), ActEscalate, func(e *ledger.IndexEntry, now time.Time) { e.Status = ledger.Escalated }},
		{at(120), "", nil},
	}
	for i, s := range steps {
		f, ok := CheckStale(e, s.now, c)
		if s.want == "" {
			require.False(t, ok, "step %d: %+v", i, f)
			continue
		}
		require.True(t, ok, "step %d", i)
		require.Equal(t, s.want, f.Action, "step %d", i)
		s.apply(&e, s.now)
	}
}

func TestDetectStuck(t *testing.T) {
	same := []string{"Should the adapter use PostgreSQL or SQLite for local development?", "Should the adapter use PostgreSQL or SQLite for local development today?"}
	different := []string{"Should the adapter use PostgreSQL or SQLite for local development?", "Who owns the connection pool settings in staging?"}
	tests := []struct {
		name    string
		entries []ledger.IndexEntry
		sim     float64
		want    []summary
	}{
		{"near-identical consecutive questions are stuck",
			[]ledger.IndexEntry{ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending, same...))}, 0,
			[]summary{{"CLR-42-001", KindStuck, ActEscalate}}},
		{"different consecutive questions are not",
			[]ledger.IndexEntry{ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending, different...))}, 0, []summary{}},
		{"a threshold of 1 wants identical word sets",
			[]ledger.IndexEntry{ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending, same...))}, 1, []summary{}},
		{"answered but repeated is stuck too",
			[]ledger.IndexEntry{ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Answered, same...))}, 0,
			[]summary{{"CLR-42-001", KindStuck, ActEscalate}}},
		{"escalated is never flagged again",
			[]ledger.IndexEntry{ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Escalated, same...))}, 0, []summary{}},
		{"resolved is never flagged",
			[]ledger.IndexEntry{ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Resolved, same...))}, 0, []summary{}},
		{"the direction flipped: the newer question is stuck",
			[]ledger.IndexEntry{
				ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending, same[0])),
				func() ledger.IndexEntry {
					e := ent(42, clar("CLR-42-002", "architect", "engineer", ledger.Pending, same[1]))
					e.Asked = ledger.T(at(5))
					return e
				}(),
			}, 0, []summary{{"CLR-42-002", KindStuck, ActEscalate}}},
		{"the flip is seen in the previous round too",
			[]ledger.IndexEntry{
				ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Answered, same[0], "Any news on the rollout date?")),
				func() ledger.IndexEntry {
					e := ent(42, clar("CLR-42-002", "architect", "engineer", ledger.Pending, same[1]))
					e.Asked = ledger.T(at(5))
					return e
				}(),
			}, 0, []summary{{"CLR-42-002", KindStuck, ActEscalate}}},
		{"opposite directions with different questions are fine",
			[]ledger.IndexEntry{
				ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending, different[0])),
				ent(42, clar("CLR-42-002", "architect", "engineer", ledger.Pending, different[1])),
			}, 0, []summary{}},
		{"the same direction twice is not a flip",
			[]ledger.IndexEntry{
				ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending, same[0])),
				ent(42, clar("CLR-42-002", "engineer", "architect", ledger.Pending, same[1])),
			}, 0, []summary{}},
		{"a flip across issues is not stuck",
			[]ledger.IndexEntry{
				ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending, same[0])),
				ent(43, clar("CLR-43-001", "architect", "engineer", ledger.Pending, same[1])),
			}, 0, []summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg()
			if tt.sim > 0 {
				c.Similarity = tt.sim
			}
			got := DetectStuck(tt.entries, c)
			assert.Equal(t, tt.want, summarize(got))
			for _, f := range got {
				assert.Contains(t, f.Reason, "stuck: ")
			}
		})
	}
}

func TestDetectDeadlocks(t *testing.T) {
	wait := func(issue int, id, from, to string) ledger.IndexEntry {
		return ent(issue, clar(id, from, to, ledger.Pending))
	}
	global := func(c Config) Config { c.Scope = workflow.ScopeGlobal; return c }
	custom := func(c Config) Config { c.Priority = []string{"engineer", "architect"}; return c }
	tests := []struct {
		name    string
		entries []ledger.IndexEntry
		conf    func(Config) Config
		want    []summary
		cycle   []string
		reason  string
	}{
		{"2-cycle: architect wins, engineer's question escalates",
			[]ledger.IndexEntry{wait(42, "CLR-42-001", "engineer", "architect"), wait(42, "CLR-42-002", "architect", "engineer")},
			nil, []summary{{"CLR-42-001", KindDeadlock, ActEscalate}}, []string{"engineer", "architect"},
			"deadlock: engineer waits on architect (CLR-42-001), architect waits on engineer (CLR-42-002); by precedence architect > engineer, engineer's question is escalated"},
		{"3-cycle: the lowest-precedence agent's question escalates",
			[]ledger.IndexEntry{
				wait(7, "CLR-7-001", "product-manager", "architect"),
				wait(7, "CLR-7-002", "architect", "engineer"),
				wait(7, "CLR-7-003", "engineer", "product-manager"),
			},
			nil, []summary{{"CLR-7-003", KindDeadlock, ActEscalate}}, []string{"engineer", "product-manager", "architect"},
			"by precedence product-manager > architect > engineer"},
		{"3-cycle with a reviewer: the reviewer yields",
			[]ledger.IndexEntry{
				wait(7, "CLR-7-001", "engineer", "reviewer"),
				wait(7, "CLR-7-002", "reviewer", "architect"),
				wait(7, "CLR-7-003", "architect", "engineer"),
			},
			nil, []summary{{"CLR-7-002", KindDeadlock, ActEscalate}}, []string{"reviewer", "architect", "engineer"}, ""},
		{"the priority list decides",
			[]ledger.IndexEntry{wait(42, "CLR-42-001", "engineer", "architect"), wait(42, "CLR-42-002", "architect", "engineer")},
			custom, []summary{{"CLR-42-002", KindDeadlock, ActEscalate}}, []string{"architect", "engineer"}, ""},
		{"unlisted agents come after listed ones",
			[]ledger.IndexEntry{wait(42, "CLR-42-001", "engineer", "security"), wait(42, "CLR-42-002", "security", "engineer")},
			nil, []summary{{"CLR-42-002", KindDeadlock, ActEscalate}}, []string{"security", "engineer"}, ""},
		{"a non-blocking pair is no deadlock",
			[]ledger.IndexEntry{nonBlocking(wait(42, "CLR-42-001", "engineer", "architect")), wait(42, "CLR-42-002", "architect", "engineer")},
			nil, []summary{}, nil, ""},
		{"an answered question waits on nobody",
			[]ledger.IndexEntry{ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Answered)), wait(42, "CLR-42-002", "architect", "engineer")},
			nil, []summary{}, nil, ""},
		{"stale questions still wait",
			[]ledger.IndexEntry{ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Stale)), wait(42, "CLR-42-002", "architect", "engineer")},
			nil, []summary{{"CLR-42-001", KindDeadlock, ActEscalate}}, []string{"engineer", "architect"}, ""},
		{"a chain is no cycle",
			[]ledger.IndexEntry{wait(42, "CLR-42-001", "engineer", "architect"), wait(42, "CLR-42-002", "architect", "product-manager")},
			nil, []summary{}, nil, ""},
		{"different issues: no deadlock per issue",
			[]ledger.IndexEntry{wait(42, "CLR-42-001", "engineer", "architect"), wait(43, "CLR-43-001", "architect", "engineer")},
			nil, []summary{}, nil, ""},
		{"different issues: a deadlock under global scope",
			[]ledger.IndexEntry{wait(42, "CLR-42-001", "engineer", "architect"), wait(43, "CLR-43-001", "architect", "engineer")},
			global, []summary{{"CLR-42-001", KindDeadlock, ActEscalate}}, []string{"engineer", "architect"},
			"architect waits on engineer (CLR-43-001)"},
		{"two cycles on two issues are both broken",
			[]ledger.IndexEntry{
				wait(1, "CLR-1-001", "engineer", "architect"), wait(1, "CLR-1-002", "architect", "engineer"),
				wait(2, "CLR-2-001", "architect", "product-manager"), wait(2, "CLR-2-002", "product-manager", "architect"),
			},
			nil, []summary{{"CLR-1-001", KindDeadlock, ActEscalate}, {"CLR-2-001", KindDeadlock, ActEscalate}}, nil, ""},
		{"parallel questions on the yielding edge all escalate",
			[]ledger.IndexEntry{wait(42, "CLR-42-001", "engineer", "architect"), wait(42, "CLR-42-002", "engineer", "architect"), wait(42, "CLR-42-003", "architect", "engineer")},
			nil, []summary{{"CLR-42-001", KindDeadlock, ActEscalate}, {"CLR-42-002", KindDeadlock, ActEscalate}}, nil, ""},
		{"overlapping cycles are all broken",
			[]ledger.IndexEntry{
				wait(42, "CLR-42-001", "engineer", "architect"), wait(42, "CLR-42-002", "architect", "engineer"),
				wait(42, "CLR-42-003", "reviewer", "engineer"), wait(42, "CLR-42-004", "engineer", "reviewer"),
			},
			nil, []summary{{"CLR-42-001", KindDeadlock, ActEscalate}, {"CLR-42-003", KindDeadlock, ActEscalate}}, nil, ""},
		{"a human is never in a deadlock",
			[]ledger.IndexEntry{wait(42, "CLR-42-001", "engineer", ledger.Human)},
			nil, []summary{}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg()
			if tt.conf != nil {
				c = tt.conf(c)
			}
			got := DetectDeadlocks(tt.entries, c)
			assert.Equal(t, tt.want, summarize(got))
			if tt.cycle != nil {
				require.NotEmpty(t, got)
				assert.Equal(t, tt.cycle, got[0].Cycle)
			}
			if tt.reason != "" {
				require.NotEmpty(t, got)
				assert.Contains(t, got[0].Reason, tt.reason)
			}
		})
	}
}

// TestDetectAbandoned: only what the hooking agent provably left is
// closed: its own questions on the issue it finished. An agent is its role
// on an issue, so a hook on another issue, or a start, closes nothing; and a
// question to a human stays open for the person to answer.
func TestDetectAbandoned(t *testing.T) {
	entries := []ledger.IndexEntry{
		ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending)),
		ent(42, clar("CLR-42-002", "engineer", "architect", ledger.Answered)),
		ent(42, clar("CLR-42-003", "engineer", "architect", ledger.Stale)),
		ent(42, clar("CLR-42-004", "engineer", "architect", ledger.Escalated)),
		ent(42, clar("CLR-42-005", "architect", "product-manager", ledger.Pending)),
		ent(42, clar("CLR-42-006", "engineer", ledger.Human, ledger.Pending)),
		ent(42, clar("CLR-42-007", "engineer", ledger.Human, ledger.Stale)),
		ent(42, clar("CLR-42-008", "engineer", ledger.Human, ledger.Answered)),
		ent(42, clar("CLR-42-009", "reviewer", "engineer", ledger.Pending)),
		ent(43, clar("CLR-43-001", "engineer", "architect", ledger.Pending)),
		ent(43, clar("CLR-43-002", "engineer", "architect", ledger.Answered)),
		ent(43, clar("CLR-43-003", "engineer", ledger.Human, ledger.Pending)),
	}
	tests := []struct {
		name string
		hook Hook
		want []summary
	}{
		{"start on another issue closes nothing (another engineer may work #42)", Hook{PhaseStart, "engineer", 43}, []summary{}},
		{"start on the same issue closes nothing", Hook{PhaseStart, "engineer", 42}, []summary{}},
		{"start on a new issue closes nothing", Hook{PhaseStart, "engineer", 44}, []summary{}},
		{"another agent's finish closes its own question, not the engineer's", Hook{PhaseFinish, "reviewer", 42}, []summary{
			{"CLR-42-009", KindAbandoned, ActAbandon},
		}},
		{"finish abandons its pending and stale, resolves its answered (to a human too), leaves the human's pending", Hook{PhaseFinish, "engineer", 42}, []summary{
			{"CLR-42-001", KindAbandoned, ActAbandon},
			{"CLR-42-002", KindAbandoned, ActResolve},
			{"CLR-42-003", KindAbandoned, ActAbandon},
			{"CLR-42-008", KindAbandoned, ActResolve},
		}},
		{"finish on #43 touches only #43", Hook{PhaseFinish, "engineer", 43}, []summary{
			{"CLR-43-001", KindAbandoned, ActAbandon},
			{"CLR-43-002", KindAbandoned, ActResolve},
		}},
		{"finish on an issue it has no questions on closes nothing", Hook{PhaseFinish, "engineer", 44}, []summary{}},
		{"an unknown phase closes nothing", Hook{"pause", "engineer", 42}, []summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DetectAbandoned(entries, tt.hook)
			assert.Equal(t, tt.want, summarize(got))
		})
	}
	f := DetectAbandoned(entries, Hook{PhaseFinish, "engineer", 43})
	require.Len(t, f, 2)
	assert.Equal(t, "abandoned: engineer finished issue #43 while this question was still pending", f[0].Reason)
	assert.Equal(t, "engineer finished issue #43 without resolving it", f[1].Reason)
}

// TestDetectOneActionEach proves a clarification that is several things at
// once gets one action: abandoned beats deadlock beats stuck beats stale.
func TestDetectOneActionEach(t *testing.T) {
	same := []string{"PostgreSQL or SQLite for local development?", "PostgreSQL or SQLite for local development, today?"}
	entries := []ledger.IndexEntry{
		ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending, same...)), // deadlocked, stuck, stale
		ent(42, clar("CLR-42-002", "architect", "engineer", ledger.Pending)),          // stale
	}
	got := Detect(entries, at(45), cfg("architect", "engineer"), nil)
	assert.Equal(t, []summary{
		{"CLR-42-001", KindDeadlock, ActEscalate},
		{"CLR-42-002", KindStale, ActMarkStale},
	}, summarize(got))

	got = Detect(entries, at(45), cfg(), &Hook{PhaseFinish, "engineer", 42})
	assert.Equal(t, []summary{
		{"CLR-42-001", KindAbandoned, ActAbandon},
		{"CLR-42-002", KindStale, ActMarkStale},
	}, summarize(got), "abandoning engineer's question also ends the deadlock")

	assert.Equal(t, []summary{{"CLR-42-001", KindDeadlock, ActEscalate}}, summarize(Detect(entries, at(10), cfg(), nil)), "before the SLA only the deadlock")
}

// TestDetectLeavesItsEntries: Detect changes a copy of the entries as its
// findings act (an escalated question, one abandoned), never the caller's,
// which other readers may share.
func TestDetectLeavesItsEntries(t *testing.T) {
	entries := []ledger.IndexEntry{
		ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending)),
		ent(42, clar("CLR-42-002", "architect", "engineer", ledger.Pending)),
		ent(42, clar("CLR-42-003", "engineer", "qa", ledger.Pending)),
	}
	was := slices.Clone(entries)
	for _, hook := range []*Hook{nil, {PhaseFinish, "engineer", 42}} {
		require.NotEmpty(t, Detect(entries, at(45), cfg("architect", "engineer"), hook))
		require.Equal(t, was, entries)
	}
	assert.Empty(t, Detect(entries[2:], at(1), cfg(), nil), "nothing found")
}

// TestNextDueJudged: with a Judge, a question judged at a time of its own
// falls due when that time has covered what it has left (so no sooner
// than this clock covers it), one held is looked at again after
// judgedRecheck, and one judged at now is due as without a Judge.
func TestNextDueJudged(t *testing.T) {
	pending := ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Pending)) // stale after at(30)
	answered := ent(42, clar("CLR-42-001", "engineer", "architect", ledger.Answered))
	behind := func(d time.Duration) func(ledger.IndexEntry, time.Time) time.Time {
		return func(_ ledger.IndexEntry, now time.Time) time.Time { return now.Add(-d) }
	}
	held := func(ledger.IndexEntry, time.Time) time.Time { return time.Time{} }
	for _, tc := range []struct {
		name  string
		e     ledger.IndexEntry
		now   time.Time
		judge func(ledger.IndexEntry, time.Time) time.Time
		want  time.Time
	}{
		{"judged at now", pending, at(10), behind(0), at(30).Add(time.Millisecond)},
		{"judged ten minutes behind", pending, at(25), behind(10 * time.Minute), at(40).Add(time.Millisecond)},
		{"past its staleAfter here, not by the judge", pending, at(31), behind(10 * time.Minute), at(40).Add(time.Millisecond)},
		{"held", pending, at(31), held, at(31).Add(judgedRecheck)},
		{"held, waiting on nothing", answered, at(31), held, time.Time{}},
		{"judged behind, waiting on nothing", answered, at(31), behind(time.Minute), time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg("architect")
			c.Judge = tc.judge
			assert.Equal(t, tc.want, NextDue(tc.e, tc.now, c))
		})
	}
}
