package monitor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/ledger"
)

// TestStaleAndStuck proves `clarify stale` lists exactly the stale (or
// overdue) and stuck clarifications, acted on or not.
func TestStaleAndStuck(t *testing.T) {
	same := []string{"PostgreSQL or SQLite for local development?", "PostgreSQL or SQLite for local development, today?"}
	escalatedBy := func(e ledger.IndexEntry, reason string) ledger.IndexEntry {
		e.Status = ledger.Escalated
		return withMonitor(e, ledger.MonitorState{Reason: reason})
	}
	entries := []ledger.IndexEntry{
		ent(1, clar("CLR-1-001", "engineer", "architect", ledger.Pending)), // overdue, not yet marked
		withMonitor(ent(1, clar("CLR-1-002", "engineer", "architect", ledger.Stale)), ledger.MonitorState{StaleAt: tp(at(31)), Reason: "stale: overdue"}),
		ent(2, clar("CLR-2-001", "engineer", "architect", ledger.Answered, same...)), // stuck, not yet escalated
		escalatedBy(ent(2, clar("CLR-2-002", "engineer", "architect", ledger.Pending)), "stuck: round 2 asks what round 1 asked"),
		escalatedBy(ent(3, clar("CLR-3-001", "engineer", "architect", ledger.Pending)), "stale: still no answer"),
		escalatedBy(ent(3, clar("CLR-3-002", "engineer", "architect", ledger.Pending)), "deadlock: engineer waits on architect"),
		escalatedBy(ent(3, clar("CLR-3-003", "engineer", "architect", ledger.Pending)), ""), // by hand
		ent(4, clar("CLR-4-001", "engineer", "architect", ledger.Answered)),
	}
	got := StaleAndStuck(entries, at(45), cfg())
	var ids []string
	for _, it := range got {
		ids = append(ids, it.ID+" "+string(it.Kind))
	}
	assert.Equal(t, []string{"CLR-1-001 stale", "CLR-1-002 stale", "CLR-2-001 stuck", "CLR-2-002 stuck", "CLR-3-001 stale"}, ids)
	assert.Equal(t, at(61), got[1].EscalatesAt.Time)
	assert.Equal(t, "stale: overdue", got[1].Reason)
	assert.Nil(t, got[0].EscalatesAt, "not marked yet: no escalation time")
	assert.Empty(t, StaleAndStuck(entries[7:], at(500), cfg()))
}
