package ledger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLedgerAsk(t *testing.T) {
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	l := &Ledger{IssueNumber: 42}
	tests := []struct {
		q  NewQuestion
		id string
	}{
		{NewQuestion{From: "engineer", To: "architect", Topic: "Cache", Body: "Redis?", Blocking: true, MaxRounds: 3, SLA: time.Hour, Workflow: "feature", Step: "implement"}, "CLR-42-001"},
		{NewQuestion{From: "engineer", To: Human, Topic: "Plan", Body: "Which?", MaxRounds: 1, SLA: 24 * time.Hour, Options: []string{"A", "B"}}, "CLR-42-002"},
	}
	for i, tt := range tests {
		c := l.Ask(tt.q, now)
		require.Len(t, l.Clarifications, i+1)
		assert.Same(t, c, l.Clarifications[i])
		want := &Clarification{
			ID: tt.id, From: tt.q.From, To: tt.q.To, Topic: tt.q.Topic, Blocking: tt.q.Blocking,
			Status: Pending, Round: 1, MaxRounds: tt.q.MaxRounds, Created: T(now), StaleAfter: T(now.Add(tt.q.SLA)),
			Thread: []ThreadEntry{{Round: 1, From: tt.q.From, Type: Question, Body: tt.q.Body, Timestamp: T(now)}},
			X:      &Extra{Workflow: tt.q.Workflow, Step: tt.q.Step, Options: tt.q.Options},
		}
		assert.Equal(t, want, c)
	}
	assert.NoError(t, l.Validate())
}
