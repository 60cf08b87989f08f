package router

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/ledger"
)

// ent is a thread entry m minutes after t0.
func ent(round int, from string, typ ledger.EntryType, m int) ledger.ThreadEntry {
	return ledger.ThreadEntry{Round: round, From: from, Type: typ, Body: "x", Timestamp: ledger.T(t0.Add(time.Duration(m) * time.Minute))}
}

// waitRec is a clarification of the engineer to to, in status st, with
// thread and the people who wrote its entries as human (entry index: name).
func waitRec(id, to string, st ledger.Status, thread []ledger.ThreadEntry, people map[int]string) *ledger.Clarification {
	c := &ledger.Clarification{ID: id, From: "engineer", To: to, Topic: "t", Status: st, MaxRounds: 3, Created: ledger.T(t0), Thread: thread}
	for _, e := range thread {
		c.Round = max(c.Round, e.Round)
	}
	for i, name := range people {
		c.Ext().People = append(c.Ext().People, ledger.Person{Entry: i, Name: name})
	}
	return c
}

func TestRoundWaits(t *testing.T) {
	const (
		q, a, esc, res = ledger.Question, ledger.Answer, ledger.Escalation, ledger.Resolution
		eng, arch, hum = "engineer", "architect", ledger.Human
	)
	type reply struct {
		round  int
		waited time.Duration
		by     string // the reply's from
	}
	tests := []struct {
		name    string
		to      string
		status  ledger.Status
		thread  []ledger.ThreadEntry
		replied []reply
		open    int // minutes after t0 the open round was asked; -1: none open
	}{
		{"answered in its first round", arch, ledger.Answered,
			[]ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, arch, a, 4)},
			[]reply{{1, 4 * time.Minute, arch}}, -1},
		{"follow-ups: each round waits from its own question", arch, ledger.Resolved,
			[]ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, arch, a, 2), ent(2, eng, q, 10), ent(2, arch, a, 40), ent(3, eng, q, 50), ent(3, arch, a, 51), ent(3, eng, res, 60)},
			[]reply{{1, 2 * time.Minute, arch}, {2, 30 * time.Minute, arch}, {3, time.Minute, arch}}, -1},
		{"a follow-up not replied to yet is open", arch, ledger.Pending,
			[]ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, arch, a, 2), ent(2, eng, q, 10)},
			[]reply{{1, 2 * time.Minute, arch}}, 10},
		{"answered by a person", hum, ledger.Answered,
			[]ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, hum, a, 90)},
			[]reply{{1, 90 * time.Minute, hum}}, -1},
		{"a person's second reply to the round is not its first", arch, ledger.Answered,
			[]ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, arch, a, 3), ent(1, hum, a, 9)},
			[]reply{{1, 3 * time.Minute, arch}}, -1},
		{"never answered: pending", arch, ledger.Pending,
			[]ledger.ThreadEntry{ent(1, eng, q, 5)},
			nil, 5},
		{"never answered: stale", hum, ledger.Stale,
			[]ledger.ThreadEntry{ent(1, eng, q, 5)},
			nil, 5},
		{"never answered: abandoned is no reply, and not open", arch, ledger.Abandoned,
			[]ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, HubAgent, res, 600)},
			nil, -1},
		{"abandoned after an answer: the answer was the reply", arch, ledger.Abandoned,
			[]ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, arch, a, 7), ent(1, eng, res, 600)},
			[]reply{{1, 7 * time.Minute, arch}}, -1},
		{"escalated unanswered: the escalation is the reply", arch, ledger.Escalated,
			[]ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, HubAgent, esc, 45)},
			[]reply{{1, 45 * time.Minute, HubAgent}}, -1},
		{"escalated, then a person resolves: the escalation was the reply", arch, ledger.Resolved,
			[]ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, HubAgent, esc, 45), ent(1, hum, res, 200)},
			[]reply{{1, 45 * time.Minute, HubAgent}}, -1},
		{"escalated at the round limit: the round was answered already", arch, ledger.Escalated,
			[]ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, arch, a, 1), ent(2, eng, q, 2), ent(2, arch, a, 5), ent(2, HubAgent, esc, 9)},
			[]reply{{1, time.Minute, arch}, {2, 3 * time.Minute, arch}}, -1},
		{"a reply stamped before its question waited nothing", arch, ledger.Answered,
			[]ledger.ThreadEntry{ent(1, eng, q, 10), ent(1, arch, a, 8)},
			[]reply{{1, 0, arch}}, -1},
		{"another tool's record with no thread waits for nothing", arch, ledger.Pending,
			nil, nil, -1},
		{"another tool's rounds all numbered 0", arch, ledger.Pending,
			[]ledger.ThreadEntry{ent(0, eng, q, 0), ent(0, arch, a, 6), ent(0, eng, q, 8)},
			[]reply{{0, 6 * time.Minute, arch}}, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := waitRec("CLR-1-001", tt.to, tt.status, tt.thread, nil)
			var got []reply
			open := -1
			roundWaits(c, func(round int, waited time.Duration, i int) {
				got = append(got, reply{round, waited, c.Thread[i].From})
			}, func(e *ledger.ThreadEntry) {
				open = int(e.Timestamp.Sub(t0) / time.Minute)
			})
			assert.Equal(t, tt.replied, got, "replied rounds")
			assert.Equal(t, tt.open, open, "the open round's question")
		})
	}
}

func TestPercentile(t *testing.T) {
	ds := func(ms ...int) []time.Duration {
		out := make([]time.Duration, len(ms))
		for i, m := range ms {
			out[i] = time.Duration(m) * time.Minute
		}
		return out
	}
	tests := []struct {
		s    []time.Duration
		want WaitFigures
	}{
		{nil, WaitFigures{}},
		{ds(7), WaitFigures{1, Duration{7 * time.Minute}, Duration{7 * time.Minute}, Duration{7 * time.Minute}}},
		{ds(9, 1), WaitFigures{2, Duration{5 * time.Minute}, Duration{9 * time.Minute}, Duration{10 * time.Minute}}},
		{ds(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), WaitFigures{10, Duration{5*time.Minute + 30*time.Second}, Duration{9 * time.Minute}, Duration{55 * time.Minute}}},
		{ds(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100), WaitFigures{11, Duration{6 * time.Minute}, Duration{10 * time.Minute}, Duration{155 * time.Minute}}},
	}
	for _, tt := range tests {
		in := fmt.Sprint(tt.s)
		assert.Equal(t, tt.want, figures(tt.s), "%v", in)
		assert.Equal(t, tt.want, figures(tt.s), "%v: again, sorted", in)
	}
}

// TestDigestWaits: the waits per asker, answerer and person, and the
// longest open ones, bounded.
func TestDigestWaits(t *testing.T) {
	const (
		q, a, esc = ledger.Question, ledger.Answer, ledger.Escalation
		eng, hum  = "engineer", ledger.Human
	)
	now := t0.Add(10 * time.Hour)
	recs := []*ledger.Clarification{
		// the architect answers in 4 minutes, then 20 for the follow-up
		waitRec("CLR-1-001", "architect", ledger.Resolved, []ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, "architect", a, 4), ent(2, eng, q, 10), ent(2, "architect", a, 30)}, nil),
		// a person (alice) answers for the architect after an hour
		waitRec("CLR-1-002", "architect", ledger.Answered, []ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, hum, a, 60)}, map[int]string{1: "alice"}),
		// asked of a person: alice answers in 2 hours, someone unnamed in 3
		waitRec("CLR-1-003", hum, ledger.Answered, []ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, hum, a, 120)}, map[int]string{1: "alice"}),
		waitRec("CLR-1-004", hum, ledger.Answered, []ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, hum, a, 180)}, nil),
		// escalated after 30 minutes: the hub replied, no person
		waitRec("CLR-2-001", "product-manager", ledger.Escalated, []ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, HubAgent, esc, 30)}, nil),
		// open: asked 1, 2 and 3 hours in; one abandoned unanswered
		waitRec("CLR-2-002", "architect", ledger.Pending, []ledger.ThreadEntry{ent(1, eng, q, 60)}, nil),
		waitRec("CLR-3-001", hum, ledger.Stale, []ledger.ThreadEntry{ent(1, eng, q, 120)}, nil),
		waitRec("CLR-3-002", "architect", ledger.Pending, []ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, "architect", a, 1), ent(2, eng, q, 180)}, nil),
		waitRec("CLR-4-001", "architect", ledger.Abandoned, []ledger.ThreadEntry{ent(1, eng, q, 0), ent(1, HubAgent, ledger.Resolution, 500)}, nil),
	}
	d := Digest{Now: now, Longest: 2}
	for _, c := range recs {
		issue, _, _ := ledger.ParseID(c.ID)
		d.Add(Record{IssueNumber: issue, Clarification: c})
	}
	w := d.Stats().Waits
	m := func(n int) Duration { return Duration{time.Duration(n) * time.Minute} }
	assert.Equal(t, WaitFigures{Rounds: 7, Median: m(30), P90: m(180), Total: m(4 + 20 + 60 + 120 + 180 + 30 + 1)}, w.Replied)
	assert.Equal(t, WaitFigures{Rounds: 3, Median: m(480), P90: m(540), Total: m(540 + 480 + 420)}, w.Open)

	assert.Equal(t, []AgentWaits{{Agent: "engineer", Replied: w.Replied, Open: w.Open}}, w.ByAsker)
	assert.Equal(t, []AgentWaits{
		{Agent: "architect", Replied: WaitFigures{Rounds: 4, Median: m(12), P90: m(60), Total: m(85)}, Open: WaitFigures{Rounds: 2, Median: m(480), P90: m(540), Total: m(960)}},
		{Agent: "human", Replied: WaitFigures{Rounds: 2, Median: m(150), P90: m(180), Total: m(300)}, Open: WaitFigures{Rounds: 1, Median: m(480), P90: m(480), Total: m(480)}},
		{Agent: "product-manager", Replied: WaitFigures{Rounds: 1, Median: m(30), P90: m(30), Total: m(30)}},
	}, w.ByAnswerer, "most waited on first; whoever replied for the agent asked")
	assert.Equal(t, []PersonWaits{
		{Person: "alice", Replied: WaitFigures{Rounds: 2, Median: m(90), P90: m(120), Total: m(180)}},
		{Person: "human", Replied: WaitFigures{Rounds: 1, Median: m(180), P90: m(180), Total: m(180)}},
	}, w.ByPerson, "by name; an unnamed person as human; equal totals by name")

	assert.Equal(t, []OpenWait{
		{ID: "CLR-2-002", IssueNumber: 2, From: "engineer", To: "architect", Round: 1, Since: ledger.T(t0.Add(time.Hour)), Waited: m(540)},
		{ID: "CLR-3-001", IssueNumber: 3, From: "engineer", To: "human", Round: 1, Since: ledger.T(t0.Add(2 * time.Hour)), Waited: m(480)},
	}, w.LongestOpen, "the two longest, longest first")

	var none Digest
	assert.Empty(t, none.Stats().Waits.LongestOpen)
	assert.NotNil(t, none.Stats().Waits.LongestOpen, "an empty list in JSON, not null")
}

// TestLongestOpenKeepsTheLongest: whatever the order the records come in,
// the digest keeps the Longest longest open waits, ties by issue and id.
func TestLongestOpenKeepsTheLongest(t *testing.T) {
	now := t0.Add(1000 * time.Minute)
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}, {3, 7, 0, 5, 1, 6, 2, 4}} {
		d := Digest{Now: now, Longest: 3}
		for _, i := range order {
			asked := (i / 2) * 100 // two records asked at each time: ties
			c := waitRec(ledger.FormatID(i+1, 1), "architect", ledger.Pending, []ledger.ThreadEntry{ent(1, "engineer", ledger.Question, asked)}, nil)
			d.Add(Record{IssueNumber: i + 1, Clarification: c})
		}
		var got []string
		for _, o := range d.Stats().Waits.LongestOpen {
			got = append(got, fmt.Sprintf("%s %v", o.ID, o.Waited.Duration))
		}
		assert.Equal(t, []string{"CLR-1-001 16h40m0s", "CLR-2-001 16h40m0s", "CLR-3-001 15h0m0s"}, got, "order %v", order)
	}
}
