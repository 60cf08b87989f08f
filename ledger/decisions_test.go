package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/lock"
)

// decide asks a question on issue and resolves it at "at", through Update,
// as the hub does: its id.
func decide(t *testing.T, s *Store, issue int, topic, question, answer string, at time.Time) string {
	t.Helper()
	var id string
	_, err := s.Update(context.Background(), issue, func(l *Ledger) error {
		c := l.Ask(NewQuestion{From: "engineer", To: "architect", Topic: topic, Body: question, MaxRounds: 3, SLA: time.Hour}, at.Add(-time.Minute))
		id = c.ID
		return nil
	})
	require.NoError(t, err)
	_, err = s.Update(context.Background(), issue, func(l *Ledger) error {
		c := l.Find(id)
		c.Status = Answered
		c.Thread = append(c.Thread, ThreadEntry{Round: 1, From: "architect", Type: Answer, Body: answer, Timestamp: T(at)})
		return nil
	})
	require.NoError(t, err)
	_, err = s.Update(context.Background(), issue, func(l *Ledger) error {
		c := l.Find(id)
		c.Status = Resolved
		c.Thread = append(c.Thread, ThreadEntry{Round: 1, From: "engineer", Type: Resolution, Body: "Resolved with the answer: " + answer, Timestamp: T(at)})
		r := T(at)
		c.ResolvedAt = &r
		return nil
	})
	require.NoError(t, err)
	return id
}

func ids(ms []DecisionMatch) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// TestFindDecided is the matching: the same topic once normalised, or a
// question similar at or above the threshold; newest first, at most Max.
func TestFindDecided(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	require.NoError(t, s.RebuildDecisions(ctx))
	db := decide(t, s, 42, "Database adapter", "Should local development use PostgreSQL or SQLite?", "PostgreSQL, as in production.", t0)
	cache := decide(t, s, 43, "Caching", "Which cache eviction policy for the session store?", "LRU with a one-hour TTL.", t0.Add(time.Hour))
	db2 := decide(t, s, 44, "Local database", "PostgreSQL or SQLite for local development?", "SQLite is fine for tests.", t0.Add(2*time.Hour))
	flags := decide(t, s, 45, "Feature flags", "Which feature flag library do we use?", "LaunchDarkly.", t0.Add(3*time.Hour))

	tests := []struct {
		name            string
		topic, question string
		similarity      float64
		max             int
		want            []string
	}{
		{"the same topic, spelt otherwise", "the database-adapter?", "Something else entirely", 0.6, 0, []string{db}},
		{"a similar question, newest first", "DB", "PostgreSQL or SQLite for local development?", 0.6, 0, []string{db2, db}},
		{"a threshold the older one does not reach", "DB", "PostgreSQL or SQLite for local development?", 0.9, 0, []string{db2}},
		{"the same topic or a similar question", "Caching", "PostgreSQL or SQLite for local development?", 0.6, 0, []string{db2, cache, db}},
		{"at most max", "Caching", "PostgreSQL or SQLite for local development?", 0.6, 2, []string{db2, cache}},
		{"nothing alike", "Rollout", "Ship behind a flag on Friday?", 0.6, 0, []string{}},
		{"stopwords alone are not a question", "Rollout", "What should we do with this?", 0.1, 0, []string{}},
		{"a topic with no words of three letters is its text", "UI", "?", 0.6, 0, []string{}},
		{"feature flags", "flags", "Which feature flag library?", 0.6, 0, []string{flags}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.FindDecided(ctx, DecisionQuery{Topic: tt.topic, Question: tt.question, Similarity: tt.similarity, Max: tt.max})
			require.NoError(t, err)
			assert.Equal(t, tt.want, ids(got))
		})
	}

	got, err := s.FindDecided(ctx, DecisionQuery{Topic: "Database adapter", Question: "x", Similarity: 0.6})
	require.NoError(t, err)
	require.Len(t, got, 1)
	m := got[0]
	assert.True(t, m.SameTopic)
	assert.Equal(t, 42, m.Issue)
	assert.Equal(t, "Database adapter", m.Topic)
	assert.Equal(t, "Resolved with the answer: PostgreSQL, as in production.", m.Summary, "Clarification.Decision: the first sentence of the last answer or resolution")
	assert.True(t, m.Resolved.Equal(t0))
}

// TestDecisionsKeepWhatIsShown: the summary, the commit and the files a
// question came with survive the file, whatever their text.
func TestDecisionsKeepWhatIsShown(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	require.NoError(t, s.RebuildDecisions(ctx))
	id := decide(t, s, 7, "Tabs\tand\nlines \"quoted\"", "Tabs or spaces?", "x", t0)
	_, err := s.Update(ctx, 7, func(l *Ledger) error {
		c := l.Find(id)
		c.Ext().Summary = "Tabs\there; a \"quote\", a line\nbreak, und Größe."
		c.X.Context = &Context{Commit: "0123abc", Refs: []ContextRef{{Kind: "ref", Path: "docs/a\tb.md", Lines: "1-4", SHA256: strings.Repeat("a", 64)}}}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, s.RebuildDecisions(ctx)) // the summary was given after the line was written
	got, err := s.FindDecided(ctx, DecisionQuery{Topic: "tabs and lines quoted", Similarity: 0.6})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "Tabs\there; a \"quote\", a line\nbreak, und Größe.", got[0].Summary)
	assert.Equal(t, "Tabs\tand\nlines \"quoted\"", got[0].Topic)
	assert.Equal(t, "0123abc", got[0].Commit)
	assert.Equal(t, []ContextRef{{Kind: "ref", Path: "docs/a\tb.md", Lines: "1-4", SHA256: strings.Repeat("a", 64)}}, got[0].Refs)
	data, err := os.ReadFile(s.DecisionsPath())
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(data), "\n"), "one line a decision, after the first")
}

// TestDecisionsBuiltFromTheLedgers: an ask on a workspace with no decision
// file (an older version's, or one nobody asked in yet) makes it from every
// ledger; one of another version is made afresh.
func TestDecisionsBuiltFromTheLedgers(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	a := decide(t, s, 1, "Queue", "Kafka or SQS?", "SQS.", t0)
	b := decide(t, s, 2, "Queue", "Kafka or SQS for events?", "SQS, FIFO.", t0.Add(time.Minute))
	assert.False(t, s.DecisionsBuilt(), "resolving appends only to a file that is there")
	got, err := s.FindDecided(ctx, DecisionQuery{Topic: "queue", Similarity: 0.6})
	require.NoError(t, err)
	assert.Equal(t, []string{b, a}, ids(got))
	assert.True(t, s.DecisionsBuilt())

	data, err := os.ReadFile(s.DecisionsPath())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.DecisionsPath(), []byte("agentx-decisions 0\nCLR-9-001\tjunk\n"), 0o644))
	assert.False(t, s.DecisionsBuilt())
	got, err = s.FindDecided(ctx, DecisionQuery{Topic: "queue", Similarity: 0.6})
	require.NoError(t, err)
	assert.Equal(t, []string{b, a}, ids(got), "another version's file is made afresh")

	// files not made together: the text of another make
	require.NoError(t, os.WriteFile(s.DecisionsPath(), data, 0o644))
	assert.False(t, s.DecisionsBuilt())
	got, err = s.FindDecided(ctx, DecisionQuery{Topic: "queue", Similarity: 0.6})
	require.NoError(t, err)
	assert.Equal(t, []string{b, a}, ids(got), "made afresh")
	assert.True(t, s.DecisionsBuilt())
}

// TestDecisionsSkipWhatDoesNotHold: a line cut short or changed (its
// checksum fails) is skipped, one struck out is not offered, and one whose
// ledger is gone neither.
func TestDecisionsSkipWhatDoesNotHold(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	require.NoError(t, s.RebuildDecisions(ctx))
	a := decide(t, s, 1, "Queue", "Kafka or SQS?", "SQS.", t0)
	b := decide(t, s, 2, "Queue", "Kafka or SQS?", "Kafka.", t0.Add(time.Minute))
	c := decide(t, s, 3, "Queue", "Kafka or SQS?", "Both.", t0.Add(2*time.Minute))
	find := func() []string {
		got, err := s.FindDecided(ctx, DecisionQuery{Topic: "queue", Similarity: 0.6})
		require.NoError(t, err)
		return ids(got)
	}
	require.Equal(t, []string{c, b, a}, find())

	text, err := os.ReadFile(s.decisionsTextPath())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.decisionsTextPath(), []byte(strings.Replace(string(text), "Kafka.", "Kafkb.", 1)), 0o644))
	assert.Equal(t, []string{c, a}, find(), "a text line whose checksum fails")
	require.NoError(t, os.WriteFile(s.decisionsTextPath(), text, 0o644))

	data, err := os.ReadFile(s.DecisionsPath())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.DecisionsPath(), []byte(strings.Replace(string(data), "\n"+b+"\t", "\nCLR-2-009\t", 1)), 0o644))
	assert.Equal(t, []string{c, a}, find(), "a line whose checksum fails")

	require.NoError(t, os.WriteFile(s.DecisionsPath(), append(data, string(appendStrike(nil, a))[:10]...), 0o644))
	assert.Equal(t, []string{c, b, a}, find(), "a strike cut short strikes nothing")
	_, err = s.appendTo(s.DecisionsPath(), []byte("\n"))
	require.NoError(t, err)
	require.NoError(t, s.appendDecided(nil, []string{a}))
	assert.Equal(t, []string{c, b}, find(), "struck out")

	require.NoError(t, os.Remove(s.Path(3)))
	assert.Equal(t, []string{b}, find(), "its ledger is gone")
}

// TestDecisionsFollowForeignWrites: a ledger another AgentX tool changed is
// read again by the next reader that may write, which brings decision
// memory in step: a decision it added is offered, one it took back is not.
func TestDecisionsFollowForeignWrites(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	_, _, _, err := s.LoadOpen(ctx)
	require.NoError(t, err)
	require.NoError(t, s.RebuildDecisions(ctx))
	a := decide(t, s, 1, "Queue", "Kafka or SQS?", "SQS.", t0)
	_, err = s.Update(ctx, 2, ask(s, "engineer", "architect", "Anything?"))
	require.NoError(t, err)
	_, _, _, err = s.LoadOpen(ctx) // the monitor after a command
	require.NoError(t, err)

	// another tool resolves a question of issue 2 and rewrites issue 1
	// without its decision
	l, err := s.Read(2)
	require.NoError(t, err)
	c := l.Clarifications[0]
	c.Topic, c.Status = "Queue", Resolved
	c.Thread = append(c.Thread, ThreadEntry{Round: 1, From: "architect", Type: Answer, Body: "Kafka, for replay.", Timestamp: T(t0.Add(time.Hour))})
	r := T(t0.Add(time.Hour))
	c.ResolvedAt = &r
	foreign := func(issue int, l *Ledger) {
		data, err := Encode(l)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(s.Path(issue)+".tmp", data, 0o644))
		require.NoError(t, os.Rename(s.Path(issue)+".tmp", s.Path(issue)))
	}
	foreign(2, l)
	l1, err := s.Read(1)
	require.NoError(t, err)
	l1.Clarifications[0].ID = "CLR-1-002"
	l1.Clarifications[0].Status = Abandoned
	foreign(1, l1)
	time.Sleep(20 * time.Millisecond) // the ledger directory's time moves on

	find := func() []string {
		got, err := s.FindDecided(ctx, DecisionQuery{Topic: "queue", Similarity: 0.6})
		require.NoError(t, err)
		return ids(got)
	}
	assert.Equal(t, []string{a}, find(), "until a reader that may write reads them")
	_, _, _, err = s.LoadOpen(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"CLR-2-001"}, find())
	got, err := s.FindDecided(ctx, DecisionQuery{Topic: "queue", Similarity: 0.6})
	require.NoError(t, err)
	assert.Equal(t, "Kafka, for replay.", got[0].Summary)

	// and a rebuild keeps only what holds
	require.NoError(t, s.RebuildDecisions(ctx))
	assert.Equal(t, []string{"CLR-2-001"}, find())
	data, err := os.ReadFile(s.DecisionsPath())
	require.NoError(t, err)
	assert.NotContains(t, string(data), "-\t", "a rebuild drops the strikes")
}

// TestDecidedOnlyOnce: a write that reads resolved records whole does not
// note them again; only the write that resolves one does.
func TestDecidedOnlyOnce(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	require.NoError(t, s.RebuildDecisions(ctx))
	for i := range 3 {
		decide(t, s, 5, fmt.Sprintf("Topic %d", i), "Question?", "Answer.", t0.Add(time.Duration(i)*time.Minute))
	}
	_, err := s.Update(ctx, 5, func(l *Ledger) error {
		_ = l.Whole()
		return ask(s, "engineer", "architect", "More?")(l)
	})
	require.NoError(t, err)
	data, err := os.ReadFile(s.DecisionsPath())
	require.NoError(t, err)
	assert.Equal(t, 4, strings.Count(string(data), "\n"))
}

// resolvedWorkspace writes n resolved clarifications straight into the
// ledgers of s (a hundred an issue), with topics and questions drawn from a
// small vocabulary so that some ask alike, and makes the decision file.
func resolvedWorkspace(tb testing.TB, s *Store, n int) {
	tb.Helper()
	words := strings.Fields("database cache queue retry timeout schema index token session export import adapter " +
		"migration rollout flag billing invoice search ranking upload storage bucket region replica backup")
	perIssue := 100
	for issue := 1; (issue-1)*perIssue < n; issue++ {
		l := &Ledger{IssueNumber: issue}
		for k := 0; k < perIssue && (issue-1)*perIssue+k < n; k++ {
			i := (issue-1)*perIssue + k
			w := func(j int) string { return words[(i*7+j*13)%len(words)] }
			at := T(t0.Add(time.Duration(i) * time.Minute))
			c := l.Ask(NewQuestion{From: "engineer", To: "architect", Topic: w(0) + " " + w(1),
				Body: fmt.Sprintf("Should the %s use the %s or the %s for the %s, given the %s?", w(0), w(1), w(2), w(3), w(4)), MaxRounds: 3, SLA: time.Hour}, at.Time)
			c.Status = Resolved
			c.Thread = append(c.Thread, ThreadEntry{Round: 1, From: "architect", Type: Answer, Body: "The " + w(2) + ", with a " + w(5) + ".", Timestamp: at})
			c.ResolvedAt = &at
		}
		data, err := Encode(l)
		require.NoError(tb, err)
		require.NoError(tb, os.MkdirAll(filepath.Dir(s.Path(issue)), 0o755))
		require.NoError(tb, os.WriteFile(s.Path(issue), data, 0o644))
	}
	require.NoError(tb, s.RebuildDecisions(context.Background()))
}

// BenchmarkFindDecided is decision memory's share of an ask: the decisions
// that ask what a new question asks, among 10 and among 10,000.
func BenchmarkFindDecided(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("decisions=%d", n), func(b *testing.B) {
			s := NewStore(b.TempDir(), lock.Options{}, func() time.Time { return t0 })
			resolvedWorkspace(b, s, n)
			q := DecisionQuery{Topic: "cache queue", Question: "Should the cache use the queue or the retry for the timeout, given the schema?", Similarity: 0.6}
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.FindDecided(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReused: the reuse a person may overturn is the asker's last
// assumption, citing a decision, in the current round of a question that
// still waits for its answer.
func TestReused(t *testing.T) {
	reuse := Assumption{Round: 1, By: "engineer", Body: "As decided in CLR-42-003.", Reuses: &Reuse{ID: "CLR-42-003", Summary: "PostgreSQL."}}
	plain := Assumption{Round: 1, By: "engineer", Body: "SQLite for now."}
	tests := []struct {
		name   string
		status Status
		round  int
		as     []Assumption
		want   bool
	}{
		{"pending, reused", Pending, 1, []Assumption{reuse}, true},
		{"stale, reused", Stale, 1, []Assumption{plain, reuse}, true},
		{"no assumption", Pending, 1, nil, false},
		{"a plain assumption last", Pending, 1, []Assumption{reuse, plain}, false},
		{"answered since", Answered, 1, []Assumption{reuse}, false},
		{"a reuse of an earlier round", Pending, 2, []Assumption{reuse}, false},
		{"escalated", Escalated, 1, []Assumption{reuse}, false},
		{"resolved", Resolved, 1, []Assumption{reuse}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Clarification{ID: "CLR-7-001", Status: tt.status, Round: tt.round}
			if tt.as != nil {
				c.Ext().Assumptions = tt.as
			}
			assert.Equal(t, tt.want, c.Reused() != nil)
			assert.Equal(t, tt.want, EntryOf(7, c).Reused, "the index entry says so")
		})
	}
}

// TestDecisionsBeyondTheNewest: the newest candidates are kept as they
// come; when those are struck out, the older ones are looked at.
func TestDecisionsBeyondTheNewest(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	require.NoError(t, s.RebuildDecisions(ctx))
	var all []string
	for i := range 15 {
		all = append(all, decide(t, s, 1, "Queue", "Kafka or SQS?", "SQS.", t0.Add(time.Duration(i)*time.Minute)))
	}
	require.NoError(t, s.appendDecided(nil, all[2:]))
	got, err := s.FindDecided(ctx, DecisionQuery{Topic: "queue", Similarity: 0.6})
	require.NoError(t, err)
	assert.Equal(t, []string{all[1], all[0]}, ids(got))
}

// TestDecisionsConcurrentWriters: writers of different issues resolve at
// once; each decision's lines land whole, and each text where its line
// says.
func TestDecisionsConcurrentWriters(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	require.NoError(t, s.RebuildDecisions(ctx))
	const writers, each = 8, 5
	done := make(chan []string, writers)
	for w := range writers {
		go func() {
			var got []string
			for i := range each {
				got = append(got, decide(t, s, 100+w, fmt.Sprintf("Queue %d", i), "Kafka or SQS?", fmt.Sprintf("Answer %d of writer %d.", i, w), t0.Add(time.Duration(i)*time.Minute)))
			}
			done <- got
		}()
	}
	want := map[string]bool{}
	for range writers {
		for _, id := range <-done {
			want[id] = true
		}
	}
	got, err := s.FindDecided(ctx, DecisionQuery{Question: "Kafka or SQS?", Similarity: 0.6, Max: 100})
	require.NoError(t, err)
	require.Len(t, got, writers*each)
	for _, d := range got {
		assert.True(t, want[d.ID], d.ID)
		n, _, err := ParseID(d.ID)
		require.NoError(t, err)
		assert.Contains(t, d.Summary, fmt.Sprintf("of writer %d.", n-100), "its own text")
	}
}
