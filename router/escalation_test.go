package router

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/ledger"
)

func TestEscalationBody(t *testing.T) {
	q := func(round int, body string) ledger.ThreadEntry {
		return ledger.ThreadEntry{Round: round, From: "engineer", Type: ledger.Question, Body: body}
	}
	a := func(round int, body string) ledger.ThreadEntry {
		return ledger.ThreadEntry{Round: round, From: "architect", Type: ledger.Answer, Body: body}
	}
	tests := []struct {
		name        string
		issue       int
		thread      []ledger.ThreadEntry
		askerLatest string
		want        string
	}{
		{
			name:   "answered: three options",
			issue:  42,
			thread: []ledger.ThreadEntry{q(1, "SQLite or Postgres?"), a(1, "Postgres."), q(2, "Even locally?\nIt is slow."), a(2, "Yes.")},
			want: `ESCALATED: round limit reached
Topic: Database (issue #42, CLR-42-001)
Rounds used: 2 of 2

engineer (asker), latest question:
  > Even locally?
  > It is slow.
architect (asked), latest answer:
  > Yes.

A human decides. Options:
  1. Accept architect's answer.
  2. Accept engineer's proposal.
  3. Give a new decision.

A person resolves it, at a terminal of their own:
  agentx clarify resolve CLR-42-001 --body "decision: ..."`,
		},
		{
			name:   "answered, the asker only asked: no proposal to accept",
			issue:  42,
			thread: []ledger.ThreadEntry{q(1, "Single or multi tenant?"), a(1, "Single for now.")},
			want: `ESCALATED: round limit reached
Topic: Database (issue #42, CLR-42-001)
Rounds used: 2 of 2

engineer (asker), latest question:
  > Single or multi tenant?
architect (asked), latest answer:
  > Single for now.

A human decides. Options:
  1. Accept architect's answer.
  2. Give a new decision.

A person resolves it, at a terminal of their own:
  agentx clarify resolve CLR-42-001 --body "decision: ..."`,
		},
		{
			name:        "answered, a follow-up refused at the round limit is the asker's proposal",
			issue:       42,
			thread:      []ledger.ThreadEntry{q(1, "Single or multi tenant?"), a(1, "Single for now.")},
			askerLatest: "I propose schema-per-tenant.",
			want: `ESCALATED: round limit reached
Topic: Database (issue #42, CLR-42-001)
Rounds used: 2 of 2

engineer (asker), latest question:
  > I propose schema-per-tenant.
architect (asked), latest answer:
  > Single for now.

A human decides. Options:
  1. Accept architect's answer.
  2. Accept engineer's proposal.
  3. Give a new decision.

A person resolves it, at a terminal of their own:
  agentx clarify resolve CLR-42-001 --body "decision: ..."`,
		},
		{
			name:        "unanswered, no issue, refused follow-up as latest position",
			issue:       0,
			thread:      []ledger.ThreadEntry{q(1, "Tabs?")},
			askerLatest: "I propose tabs.",
			want: `ESCALATED: round limit reached
Topic: Database (no issue, CLR-42-001)
Rounds used: 2 of 2

engineer (asker), latest question:
  > I propose tabs.
architect (asked) has not answered.

A human decides. Options:
  1. Answer engineer's question yourself.
  2. Give a new decision.

A person resolves it, at a terminal of their own:
  agentx clarify resolve CLR-42-001 --body "decision: ..."`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &ledger.Clarification{ID: "CLR-42-001", From: "engineer", To: "architect", Topic: "Database", Round: 2, MaxRounds: 2, Thread: tt.thread}
			got := EscalationBody(tt.issue, c, "round limit reached", tt.askerLatest)
			assert.Equal(t, tt.want, got)
			c.Thread = append(c.Thread, ledger.ThreadEntry{Type: ledger.Escalation, Body: got})
			assert.Equal(t, "round limit reached", EscalationReason(c))
		})
	}
}

// TestEscalationBodyFitsTheLedger: however long the positions quoted (and
// however many lines they have), the entry stays within a ledger body.
func TestEscalationBodyFitsTheLedger(t *testing.T) {
	long := strings.Repeat("é", ledger.MaxBodyLen/2)
	lines := strings.Repeat("\n", ledger.MaxBodyLen-1) + "x"
	c := &ledger.Clarification{ID: "CLR-42-001", From: "engineer", To: "architect", Topic: "Database", Round: 1, MaxRounds: 5,
		Thread: []ledger.ThreadEntry{
			{Round: 1, From: "engineer", Type: ledger.Question, Body: lines},
			{Round: 1, From: "architect", Type: ledger.Answer, Body: long},
		}}
	body := EscalationBody(42, c, strings.Repeat("r", ledger.MaxBodyLen), long)
	assert.NoError(t, ledger.ValidateText("escalation", body, ledger.MaxBodyLen))
	assert.Contains(t, body, "bytes in all, the whole text is in the thread")
}
