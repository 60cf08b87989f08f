package doctor

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// TestDecisionMemoryChecked: once an ask made decision memory, doctor
// compares it with the ledgers: a decision another tool resolved on an
// issue agentx then wrote (so that no reader read that ledger as changed)
// is one it lacks; --fix makes it afresh.
func TestDecisionMemoryChecked(t *testing.T) {
	ctx := context.Background()
	s := ledger.NewStore(t.TempDir(), lock.Options{}, func() time.Time { return t0 })
	_, _, err := s.RebuildIndex(ctx) // as init does
	require.NoError(t, err)
	ask := func(l *ledger.Ledger) error {
		l.Ask(ledger.NewQuestion{From: "engineer", To: "architect", Topic: "Queue", Body: "Kafka or SQS?", MaxRounds: 3, SLA: time.Hour}, t0)
		return nil
	}
	_, err = s.Update(ctx, 1, ask)
	require.NoError(t, err)
	r, err := Run(ctx, s, Options{Now: time.Now})
	require.NoError(t, err)
	assert.Empty(t, r.Findings, "not made yet: nothing to check")

	require.NoError(t, s.RebuildDecisions(ctx))
	// another tool resolves CLR-1-001 in place of agentx
	l, err := s.Read(1)
	require.NoError(t, err)
	c := l.Clarifications[0]
	c.Status = ledger.Resolved
	c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Body: "SQS.", Timestamp: ledger.T(t0)})
	data, err := ledger.Encode(l)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.Path(1), data, 0o644))
	_, err = s.Update(ctx, 1, ask) // then agentx writes the issue
	require.NoError(t, err)

	r, err = Run(ctx, s, Options{Now: time.Now})
	require.NoError(t, err)
	require.Len(t, r.Findings, 1)
	f := r.Findings[0]
	assert.Equal(t, CheckDecisions, f.Check)
	assert.Equal(t, Warning, f.Severity)
	assert.Equal(t, "decision memory lacks 1 resolved clarification(s) (CLR-1-001)", f.Problem)
	assert.Zero(t, r.Remaining)

	r, err = Run(ctx, s, Options{Now: time.Now, Fix: true})
	require.NoError(t, err)
	require.Len(t, r.Findings, 1)
	assert.True(t, r.Findings[0].Fixed)
	got, err := s.FindDecided(ctx, ledger.DecisionQuery{Topic: "queue", Similarity: 0.6})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "CLR-1-001", got[0].ID)
	r, err = Run(ctx, s, Options{Now: time.Now})
	require.NoError(t, err)
	assert.Empty(t, r.Findings)
}
