package router

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/ledger"
)

// TestBlocks is the rule on one clarification, for every status: only a
// blocking question holds its issue up, while pending, stale or escalated.
func TestBlocks(t *testing.T) {
	want := map[ledger.Status]BlockRule{
		ledger.Pending:   BlockUnanswered,
		ledger.Stale:     BlockUnanswered,
		ledger.Escalated: BlockEscalated,
	}
	for _, st := range ledger.Statuses {
		for _, blocking := range []bool{true, false} {
			rule, ok := Blocks(blocking, st)
			w, wok := want[st]
			if !blocking {
				w, wok = "", false // a suggestion never gates, whatever its status
			}
			assert.Equal(t, wok, ok, "blocking=%v %s", blocking, st)
			assert.Equal(t, w, rule, "blocking=%v %s", blocking, st)
		}
	}
}

func TestBlockersAndReadiness(t *testing.T) {
	mk := func(id string, st ledger.Status, blocking bool) ledger.IndexEntry {
		return ledger.IndexEntry{ID: id, From: "engineer", To: "architect", Status: st, Blocking: blocking}
	}
	sent := Blocker{ID: "EVAL-1-1", Rule: BlockSentBack, From: "engineer", On: "engineer", Why: "sent back"}
	tests := []struct {
		name  string
		es    []ledger.IndexEntry
		more  []Blocker
		rules []BlockRule
		on    []string
		state string
		cause string // the id of the blocker that gives the state
	}{
		{"empty", nil, nil, nil, nil, StateReady, ""},
		{"answered", []ledger.IndexEntry{mk("CLR-1-001", ledger.Answered, true)}, nil, nil, nil, StateReady, ""},
		{"resolved", []ledger.IndexEntry{mk("CLR-1-001", ledger.Resolved, true)}, nil, nil, nil, StateReady, ""},
		{"non-blocking pending", []ledger.IndexEntry{mk("CLR-1-001", ledger.Pending, false)}, nil, nil, nil, StateReady, ""},
		{"non-blocking stale", []ledger.IndexEntry{mk("CLR-1-001", ledger.Stale, false)}, nil, nil, nil, StateReady, ""},
		{"non-blocking escalated", []ledger.IndexEntry{mk("CLR-1-001", ledger.Escalated, false)}, nil, nil, nil, StateReady, ""},
		{"blocking pending", []ledger.IndexEntry{mk("CLR-1-001", ledger.Pending, true)}, nil,
			[]BlockRule{BlockUnanswered}, []string{"architect"}, StateBlocked, "CLR-1-001"},
		{"blocking stale", []ledger.IndexEntry{mk("CLR-1-002", ledger.Stale, true)}, nil,
			[]BlockRule{BlockUnanswered}, []string{"architect"}, StateBlocked, "CLR-1-002"},
		{"blocking escalated waits on a person", []ledger.IndexEntry{mk("CLR-1-001", ledger.Escalated, true)}, nil,
			[]BlockRule{BlockEscalated}, []string{ledger.Human}, StateEscalated, "CLR-1-001"},
		{"escalated wins", []ledger.IndexEntry{mk("CLR-1-001", ledger.Pending, true), mk("CLR-1-002", ledger.Escalated, true)}, nil,
			[]BlockRule{BlockUnanswered, BlockEscalated}, []string{"architect", ledger.Human}, StateEscalated, "CLR-1-002"},
		{"a non-blocking escalated one does not make it escalated", []ledger.IndexEntry{mk("CLR-1-001", ledger.Pending, true), mk("CLR-1-002", ledger.Escalated, false)}, nil,
			[]BlockRule{BlockUnanswered}, []string{"architect"}, StateBlocked, "CLR-1-001"},
		{"sent back", nil, []Blocker{sent},
			[]BlockRule{BlockSentBack}, []string{"engineer"}, StateBlocked, "EVAL-1-1"},
		{"a clarification before work sent back", []ledger.IndexEntry{mk("CLR-1-001", ledger.Stale, true)}, []Blocker{sent},
			[]BlockRule{BlockUnanswered, BlockSentBack}, []string{"architect", "engineer"}, StateBlocked, "CLR-1-001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs := append(Blockers(tt.es), tt.more...)
			var rules []BlockRule
			var on, ids []string
			for _, b := range bs {
				rules, on, ids = append(rules, b.Rule), append(on, b.On), append(ids, b.ID)
			}
			assert.Equal(t, tt.rules, rules)
			assert.Equal(t, tt.on, on)
			r := ReadinessOf(1, bs)
			assert.Equal(t, tt.state, r.State)
			if ids == nil {
				ids = []string{}
			}
			assert.Equal(t, ids, r.Blocked)
			b, ok := r.Cause()
			assert.Equal(t, tt.cause != "", ok)
			assert.Equal(t, tt.cause, b.ID)
		})
	}
}

// An unreadable ledger holds its issue up, with no id to name.
func TestReadinessUnreadable(t *testing.T) {
	r := ReadinessOf(7, []Blocker{{Rule: BlockUnreadable, Why: "bad JSON"}})
	assert.Equal(t, StateBlocked, r.State)
	assert.Equal(t, []string{}, r.Blocked)
	b, ok := r.Cause()
	assert.True(t, ok)
	assert.Equal(t, BlockUnreadable, b.Rule)
}
