package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/eventlog"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// TestVanishedAndMissingEvents: a writer that takes no lock writes issue
// 1's ledger as it read it before two asks agentx acknowledged, plus its
// own question under the id one of them had: doctor reports both asks as
// vanished, with what the event log knows (id, asker, one asked, topic,
// time). A change in issue 2's ledger whose event was never appended is
// reported, appended once by --fix (a second --fix appends nothing), and a
// change younger than the stale age is left alone.
func TestVanishedAndMissingEvents(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := t0.Add(time.Hour)
	s := ledger.NewStore(dir, lock.Options{}, func() time.Time { return t0 })
	log := eventlog.EventLog{Path: filepath.Join(dir, eventlog.File)}
	ask := func(n int, from, topic string, at time.Time, logged bool) *ledger.Clarification {
		var c *ledger.Clarification
		_, err := s.Update(ctx, n, func(l *ledger.Ledger) error {
			c = &ledger.Clarification{ID: l.NextID(), From: from, To: "architect", Topic: topic, Status: ledger.Pending,
				Round: 1, MaxRounds: 5, Created: ledger.T(at), StaleAfter: ledger.T(at.Add(time.Hour)),
				Thread: []ledger.ThreadEntry{{Round: 1, From: from, Type: ledger.Question, Body: "q", Timestamp: ledger.T(at)}}}
			l.Clarifications = append(l.Clarifications, c)
			return nil
		})
		require.NoError(t, err)
		if logged {
			e := eventlog.EventFor(eventlog.EventRequested, n, c, at)
			e.By = from
			require.NoError(t, log.Append(e))
		}
		return c
	}
	ask(1, "engineer", "kept", t0, true)
	before, err := os.ReadFile(s.Path(1)) // what the foreign writer read
	require.NoError(t, err)
	ask(1, "engineer", "lost one", t0.Add(time.Second), true)
	ask(1, "reviewer", "lost two", t0.Add(2*time.Second), true)
	foreign := strings.Replace(string(before), `"clarifications": [`, `"clarifications": [{"id": "CLR-1-002", "from": "pm", "to": "architect", "topic": "theirs", "blocking": false, "status": "pending", "round": 1, "maxRounds": 5, "created": "2026-02-26T10:00:05.000Z", "staleAfter": "2026-02-26T11:00:05.000Z", "thread": [{"round": 1, "from": "pm", "type": "question", "body": "x", "timestamp": "2026-02-26T10:00:05.000Z"}]},`, 1)
	require.NotEqual(t, string(before), foreign)
	require.NoError(t, os.WriteFile(s.Path(1), []byte(foreign), 0o644))

	c := ask(2, "engineer", "answered", t0, true)
	_, err = s.Update(ctx, 2, func(l *ledger.Ledger) error {
		r := l.Find(c.ID)
		r.Status = ledger.Answered
		r.Thread = append(r.Thread, ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Body: "yes", Timestamp: ledger.T(t0.Add(time.Minute))})
		return nil
	})
	require.NoError(t, err) // and the writer was killed before its event
	ask(2, "engineer", "just now", now.Add(-time.Second), false)

	_, _, err = s.RebuildIndex(ctx)
	require.NoError(t, err)
	r, err := Run(ctx, s, Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	var vanishedText, missingText []string
	for _, f := range r.Findings {
		switch f.Check {
		case CheckVanished:
			vanishedText = append(vanishedText, f.Problem)
		case CheckEvents:
			missingText = append(missingText, f.Problem)
		}
	}
	require.Len(t, vanishedText, 2, "%v", r.Findings)
	assert.Contains(t, vanishedText[0], `CLR-1-002 (asked by engineer of architect, topic "lost one", at 2026-02-26T10:00:01.000Z)`)
	assert.Contains(t, vanishedText[0], `another question (asked by pm of architect, topic "theirs")`)
	assert.Contains(t, vanishedText[1], `CLR-1-003 (asked by reviewer of architect, topic "lost two", at 2026-02-26T10:00:02.000Z)`)
	require.Len(t, missingText, 1, "%v", r.Findings)
	assert.Contains(t, missingText[0], "clarification-answered of CLR-2-001 (round 1, 2026-02-26T10:01:00.000Z, by architect)")
	assert.Positive(t, r.Remaining)

	for range 2 {
		_, err = Run(ctx, s, Options{Now: func() time.Time { return now }, Fix: true})
		require.NoError(t, err)
	}
	res, err := log.Read(eventlog.EventFilter{ID: c.ID})
	require.NoError(t, err)
	require.Len(t, res.Events, 2, "requested, then the answered event appended once")
	assert.Equal(t, eventlog.EventAnswered, res.Events[1].Type)
	assert.Equal(t, "architect", res.Events[1].By)
	assert.True(t, res.Events[1].Timestamp.Equal(t0.Add(time.Minute)), "dated as the ledger's entry")
}

// TestALoggedTwiceQuestionIsNotVanished: a question whose requested event
// is in the log twice (a pull paused, then killed, logged another host's
// question again), minutes apart, is matched once and the second log is
// no question of its own: no vanished finding.
func TestALoggedTwiceQuestionIsNotVanished(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := ledger.NewStore(dir, lock.Options{}, func() time.Time { return t0 })
	log := eventlog.EventLog{Path: filepath.Join(dir, eventlog.File)}
	var c *ledger.Clarification
	_, err := s.Update(ctx, 4, func(l *ledger.Ledger) error {
		c = &ledger.Clarification{ID: l.NextID(), From: "engineer", To: "architect", Topic: "twice", Status: ledger.Pending,
			Round: 1, MaxRounds: 5, Created: ledger.T(t0), StaleAfter: ledger.T(t0.Add(time.Hour)),
			Thread: []ledger.ThreadEntry{{Round: 1, From: "engineer", Type: ledger.Question, Body: "q", Timestamp: ledger.T(t0)}}}
		l.Clarifications = append(l.Clarifications, c)
		return nil
	})
	require.NoError(t, err)
	for _, at := range []time.Time{t0, t0.Add(5 * time.Minute)} {
		e := eventlog.EventFor(eventlog.EventRequested, 4, c, at)
		e.By = "engineer"
		require.NoError(t, log.Append(e))
	}
	_, _, err = s.RebuildIndex(ctx)
	require.NoError(t, err)
	r, err := Run(ctx, s, Options{Now: func() time.Time { return t0.Add(time.Hour) }})
	require.NoError(t, err)
	for _, f := range r.Findings {
		assert.NotEqual(t, CheckVanished, f.Check, "%v", f)
	}
}

// TestALogThatMatchesNothing: an event log from elsewhere (every question
// it names is in no ledger) is reported by its first maxVanished questions
// and one line counting the rest, whatever its length; past maxLeft the
// questions are counted, not kept.
func TestALogThatMatchesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := ledger.NewStore(dir, lock.Options{}, func() time.Time { return t0 })
	_, err := s.Update(ctx, 1, func(l *ledger.Ledger) error {
		l.Clarifications = append(l.Clarifications, &ledger.Clarification{ID: "CLR-1-001", From: "engineer", To: "architect", Topic: "kept",
			Status: ledger.Pending, Round: 1, MaxRounds: 5, Created: ledger.T(t0), StaleAfter: ledger.T(t0.Add(time.Hour)),
			Thread: []ledger.ThreadEntry{{Round: 1, From: "engineer", Type: ledger.Question, Body: "q", Timestamp: ledger.T(t0)}}})
		return nil
	})
	require.NoError(t, err)
	f, err := os.Create(filepath.Join(dir, eventlog.File))
	require.NoError(t, err)
	n := maxLeft + 500
	for i := range n {
		c := &ledger.Clarification{ID: ledger.FormatID(2+i%7, 1+i/7), From: "pm", To: "architect", Topic: "elsewhere"}
		e := eventlog.EventFor(eventlog.EventRequested, 2+i%7, c, t0.Add(time.Duration(i)*time.Second))
		b, err := json.Marshal(e)
		require.NoError(t, err)
		_, err = f.Write(append(b, '\n'))
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())

	r, err := Run(ctx, s, Options{Now: func() time.Time { return t0.Add(48 * time.Hour) }})
	require.NoError(t, err)
	var listed int
	var last Finding
	for _, f := range r.Findings {
		if f.Check == CheckVanished {
			listed++
			last = f
		}
	}
	assert.Equal(t, maxVanished+1, listed, "the first ones, and one line for the rest")
	assert.Contains(t, last.Problem, fmt.Sprintf("up to %d more questions", n-maxVanished))
}

// TestTheLogReadInParts: a long log read in parts, on several cores, says
// what it says read whole: the same findings in the same order (questions
// vanished and kept past maxLeft, one logged twice across the parts, a
// change logged only in the second part, lock timeouts in both).
func TestTheLogReadInParts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := ledger.NewStore(dir, lock.Options{}, func() time.Time { return t0 })
	var asked []*ledger.Clarification
	for n := 1; n <= 3; n++ {
		_, err := s.Update(ctx, n, func(l *ledger.Ledger) error {
			c := &ledger.Clarification{ID: l.NextID(), From: "engineer", To: "architect", Topic: fmt.Sprint("kept ", n), Status: ledger.Answered,
				Round: 1, MaxRounds: 5, Created: ledger.T(t0), StaleAfter: ledger.T(t0.Add(time.Hour)),
				Thread: []ledger.ThreadEntry{{Round: 1, From: "engineer", Type: ledger.Question, Body: "q", Timestamp: ledger.T(t0)},
					{Round: 1, From: "architect", Type: ledger.Answer, Body: "a", Timestamp: ledger.T(t0.Add(time.Minute))}}}
			l.Clarifications = append(l.Clarifications, c)
			asked = append(asked, c)
			return nil
		})
		require.NoError(t, err)
	}
	_, _, err := s.RebuildIndex(ctx)
	require.NoError(t, err)

	var lines []byte
	add := func(e eventlog.Event) {
		b, err := json.Marshal(e)
		require.NoError(t, err)
		lines = append(append(lines, b...), '\n')
	}
	now := t0.Add(time.Hour)
	timeout := func(n int) {
		e := eventlog.EventFor(eventlog.EventLockTimeout, n, nil, now.Add(-time.Duration(n)*time.Minute))
		e.Reason = fmt.Sprint("held by ", n)
		add(e)
	}
	add(eventlog.EventFor(eventlog.EventRequested, 1, asked[0], t0))
	add(eventlog.EventFor(eventlog.EventRequested, 2, asked[1], t0))
	add(eventlog.EventFor(eventlog.EventAnswered, 1, asked[0], t0.Add(time.Minute)))
	timeout(1)
	const filler = 3 * maxLeft / 2 // questions no ledger holds: past maxLeft, in every part
	pad := &ledger.Clarification{ID: "CLR-9-001", Topic: strings.Repeat("x", 500)}
	for i := range filler {
		c := &ledger.Clarification{ID: ledger.FormatID(4+i%5, 1+i/5), From: "pm", To: "architect", Topic: "elsewhere"}
		add(eventlog.EventFor(eventlog.EventRequested, 4+i%5, c, t0.Add(time.Duration(i)*time.Millisecond)))
		add(eventlog.EventFor(eventlog.EventStale, 9, pad, t0)) // to make the log long enough for three parts
		if i == filler/2 {
			timeout(2)
			add(eventlog.EventFor(eventlog.EventRequested, 1, asked[0], t0)) // logged twice
			again := *asked[0]
			again.ID = "CLR-1-009" // its question again, under an id no ledger holds: the record was claimed in the first part
			add(eventlog.EventFor(eventlog.EventRequested, 1, &again, t0.Add(30*time.Second)))
			add(eventlog.EventFor(eventlog.EventAnswered, 2, asked[1], t0.Add(time.Minute)))
			gone := *asked[2]
			gone.ID, gone.Topic = "CLR-3-002", "vanished"
			add(eventlog.EventFor(eventlog.EventRequested, 3, &gone, t0))
		}
	}
	path := filepath.Join(dir, eventlog.File)
	require.NoError(t, os.WriteFile(path, lines, 0o644))
	parts, err := eventlog.EventLog{Path: path}.Parts(4)
	require.NoError(t, err)
	require.Len(t, parts.List, 3)
	require.NoError(t, parts.Close())

	run := func(procs int) *Report {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		r, err := Run(ctx, s, Options{Now: func() time.Time { return now }})
		require.NoError(t, err)
		return r
	}
	whole, inParts := run(1), run(4)
	assert.Equal(t, whole, inParts)
	checks := map[string]int{}
	for _, f := range whole.Findings {
		checks[f.Check]++
	}
	// issue 3's question and answer were never logged
	assert.Equal(t, map[string]int{CheckVanished: maxVanished + 1, CheckEvents: 2, CheckLockTimeouts: 2}, checks)
}
