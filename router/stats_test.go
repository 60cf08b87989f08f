package router

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/ledger"
)

func TestTopicGroupsAreBounded(t *testing.T) {
	var d Digest
	for i := range maxTopicGroups + 500 {
		d.Add(Record{IssueNumber: 1, Clarification: &ledger.Clarification{ID: "CLR-1-001", From: "a", To: "b", Topic: fmt.Sprintf("topic %05d", i), Status: ledger.Pending}})
	}
	assert.Len(t, d.byTopic, maxTopicGroups+1, "the bound, and the group past it")
	assert.Equal(t, Count{otherTopics, 500}, d.Stats().ByTopic[0], "the topics past the bound are counted together")
}

func TestComputeStats(t *testing.T) {
	at := func(m int) ledger.Time { return ledger.T(t0.Add(time.Duration(m) * time.Minute)) }
	rec := func(id, from, to, topic string, st ledger.Status, round int, answerAfter, resolveAfter int, escalated bool) Record {
		c := &ledger.Clarification{ID: id, From: from, To: to, Topic: topic, Status: st, Round: round, MaxRounds: 5, Created: at(0)}
		c.Thread = []ledger.ThreadEntry{{Round: 1, From: from, Type: ledger.Question, Body: "q", Timestamp: at(0)}}
		if answerAfter >= 0 {
			c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 1, From: to, Type: ledger.Answer, Body: "a", Timestamp: at(answerAfter)})
		}
		if escalated {
			c.Thread = append(c.Thread, ledger.ThreadEntry{Round: round, From: HubAgent, Type: ledger.Escalation, Body: "ESCALATED: x", Timestamp: at(50)})
		}
		if resolveAfter >= 0 {
			r := at(resolveAfter)
			c.ResolvedAt = &r
		}
		return Record{IssueNumber: 1, Clarification: c}
	}
	recs := []Record{
		rec("CLR-1-001", "engineer", "architect", "Database adapter", ledger.Resolved, 1, 2, 10, false),
		rec("CLR-1-002", "engineer", "architect", "Database pooling", ledger.Resolved, 3, 4, 30, false),
		rec("CLR-1-003", "engineer", "product-manager", "Export format", ledger.Escalated, 5, 6, -1, true),
		rec("CLR-1-004", "architect", "product-manager", "Tenancy", ledger.Pending, 1, -1, -1, false),
		rec("CLR-1-005", "engineer", "human", "Rollout flag", ledger.Resolved, 2, 8, 60, true),
	}
	st := ComputeStats(recs, at(60).Time)
	assert.Equal(t, 5, st.Total)
	assert.Equal(t, 3, st.ByStatus["resolved"])
	assert.Equal(t, 1, st.ByStatus["pending"])
	assert.Equal(t, 0, st.ByStatus["abandoned"], "every status is present")
	assert.InDelta(t, 0.6, st.ResolvedRate, 1e-9)
	assert.InDelta(t, 0.4, st.EscalatedRate, 1e-9, "escalated ever, even if later resolved")
	assert.InDelta(t, 2.0, st.AvgRounds, 1e-9)
	assert.Equal(t, 3, st.MaxRounds)
	assert.Equal(t, 5*time.Minute, st.MedianAnswer.Duration, "median of 2, 4, 6, 8")
	assert.Equal(t, 30*time.Minute, st.MedianResolve.Duration)
	assert.Equal(t, Count{"database", 2}, st.Topics[0])
	assert.Equal(t, []Count{{"Database adapter", 1}, {"Database pooling", 1}, {"Export format", 1}, {"Rollout flag", 1}, {"Tenancy", 1}}, st.ByTopic)
	assert.Equal(t, PairStats{From: "engineer", To: "architect", Asked: 2, Answered: 2}, st.Pairs[0])
	var pm AgentStats
	for _, a := range st.Agents {
		if a.Agent == "product-manager" {
			pm = a
		}
	}
	assert.Equal(t, 2, pm.Received)
	assert.InDelta(t, 0.5, pm.AnswerRate, 1e-9)

	empty := ComputeStats(nil, t0)
	assert.Equal(t, 0, empty.Total)
	assert.Zero(t, empty.ResolvedRate)
}

// digestRecords is the bench's workspace: 10,000 issues of 3
// clarifications, resolved (question, answer, resolution), 10 pending.
func digestRecords() []Record {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	asker := []string{"engineer", "architect", "reviewer"}
	var out []Record
	for n := 1; n <= 10000; n++ {
		for i := 1; i <= 3; i++ {
			t := base.Add(time.Duration(n*3+i) * time.Minute)
			from := asker[(n+i)%3]
			c := &ledger.Clarification{ID: ledger.FormatID(n, i), From: from, To: "architect-" + from, Topic: fmt.Sprintf("Topic %d", (n*i)%25),
				Status: ledger.Resolved, Round: 1, MaxRounds: 5, Created: ledger.T(t),
				Thread: []ledger.ThreadEntry{{Round: 1, From: from, Type: ledger.Question, Body: "q", Timestamp: ledger.T(t)}}}
			if n <= 10 && i == 3 {
				c.Status = ledger.Pending
			} else {
				rt := ledger.T(t.Add(3 * time.Minute))
				c.ResolvedAt = &rt
				c.Thread = append(c.Thread,
					ledger.ThreadEntry{Round: 1, From: c.To, Type: ledger.Answer, Body: "a", Timestamp: ledger.T(t.Add(2 * time.Minute))},
					ledger.ThreadEntry{Round: 1, From: from, Type: ledger.Resolution, Body: "r", Timestamp: rt})
			}
			out = append(out, Record{IssueNumber: n, Clarification: c})
		}
	}
	return out
}

// BenchmarkDigest30000 is what clarify stats does on the fleet
// benchmark's workspace once the ledgers are decoded.
func BenchmarkDigest30000(b *testing.B) {
	recs := digestRecords()
	b.ReportAllocs()
	for b.Loop() {
		d := Digest{Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Longest: DefaultLongestOpen}
		for _, r := range recs {
			d.Add(r)
		}
		_ = d.Stats()
	}
}
