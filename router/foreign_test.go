package router

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/ledger"
)

// TestForeignEvents: what another AgentX tool wrote becomes the events
// agentx would have logged for it, marked via foreign: only what the index
// did not know.
func TestForeignEvents(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	at := ledger.T(now.Add(-time.Hour))
	q := func(round int) ledger.ThreadEntry {
		return ledger.ThreadEntry{Round: round, From: "engineer", Type: ledger.Question, Body: "q", Timestamp: at}
	}
	a := func(round int) ledger.ThreadEntry {
		return ledger.ThreadEntry{Round: round, From: "architect", Type: ledger.Answer, Body: "a", Timestamp: at}
	}
	rec := func(st ledger.Status, round int, thread ...ledger.ThreadEntry) *ledger.Clarification {
		return &ledger.Clarification{ID: "CLR-7-001", From: "engineer", To: "architect", Topic: "Cache", Status: st, Round: round, Created: at, Thread: thread}
	}
	known := func(st ledger.Status, round int) []ledger.IndexEntry {
		return []ledger.IndexEntry{{ID: "CLR-7-001", Status: st, Round: round}}
	}
	tests := []struct {
		name   string
		before []ledger.IndexEntry
		now    *ledger.Clarification
		want   []string // type round by
	}{
		{"asked where agentx knew nothing", nil, rec(ledger.Pending, 1, q(1)),
			[]string{"clarification-requested 1 engineer"}},
		{"asked and answered at once", nil, rec(ledger.Answered, 1, q(1), a(1)),
			[]string{"clarification-requested 1 engineer", "clarification-answered 1 architect"}},
		{"a closed record agentx never knew open: history", nil, rec(ledger.Resolved, 1, q(1), a(1)), nil},
		{"an answer to a question agentx knew pending", known(ledger.Pending, 1), rec(ledger.Answered, 1, q(1), a(1)),
			[]string{"clarification-answered 1 architect"}},
		{"a follow-up on an answered one", known(ledger.Answered, 1), rec(ledger.Pending, 2, q(1), a(1), q(2)),
			[]string{"clarification-followed-up 2 engineer"}},
		{"nothing agentx did not know", known(ledger.Answered, 1), rec(ledger.Answered, 1, q(1), a(1)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &ledger.Ledger{IssueNumber: 7, Clarifications: []*ledger.Clarification{tt.now}}
			var got []string
			for _, e := range ForeignEvents([]ledger.ForeignChange{{Issue: 7, Before: tt.before, Ledger: l}}, now) {
				assert.Equal(t, ViaForeign, e.Via)
				assert.Equal(t, 7, e.IssueNumber)
				got = append(got, string(e.Type)+" "+itoa(e.Round)+" "+e.By)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
