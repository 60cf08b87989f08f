package router

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// decided asks a question on issue, has it answered and resolves it, the
// clock moved on a minute: its id.
func decided(t *testing.T, h *Hub, now *time.Time, issue int, topic, question, answer string) string {
	t.Helper()
	ctx := context.Background()
	*now = now.Add(time.Minute)
	rec, err := h.Ask(ctx, AskRequest{Issue: issue, From: "engineer", To: "architect", Topic: topic, Question: question, NonBlocking: true})
	require.NoError(t, err)
	_, err = h.Answer(ctx, rec.ID, "architect", answer)
	require.NoError(t, err)
	_, err = h.Resolve(ctx, rec.ID, "engineer", "")
	require.NoError(t, err)
	return rec.ID
}

func decidedIDs(ds []Decided) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// TestDecidedBefore is the matching an ask is told of, table-driven: the
// same topic as clarify stats groups topics, or a question at least
// [memory] similarity alike; newest first, at most three; none when
// [memory] reuse is off.
func TestDecidedBefore(t *testing.T) {
	now := t0
	h, _ := newTestHubAt(t, "", &now)
	db := decided(t, h, &now, 42, "Database adapter", "Should local development use PostgreSQL or SQLite?", "PostgreSQL, as in production.")
	cache := decided(t, h, &now, 43, "Caching", "Which cache eviction policy for the session store?", "LRU.")
	db2 := decided(t, h, &now, 44, "Local database", "PostgreSQL or SQLite for local development?", "SQLite for tests.")
	q1 := decided(t, h, &now, 45, "Queue", "Kafka or SQS?", "SQS.")
	q2 := decided(t, h, &now, 46, "queue", "Which queue for the events?", "SQS, FIFO.")
	q3 := decided(t, h, &now, 47, "The queue?", "Do we keep the queue?", "Yes.")
	q4 := decided(t, h, &now, 48, "QUEUE", "Dead letters in the queue?", "After three tries.")
	_ = q1

	tests := []struct {
		name            string
		config          string
		topic, question string
		want            []string
		match           []string
	}{
		{"the same topic once normalised", "", "database-adapter", "Anything else?", []string{db}, []string{MatchTopic}},
		{"a question alike, newest first", "", "DB", "PostgreSQL or SQLite for local development?", []string{db2, db}, []string{MatchQuestion, MatchQuestion}},
		{"a threshold only the closest reaches", "[memory]\nsimilarity = 0.95\n", "DB", "PostgreSQL or SQLite for local development?", []string{db2}, []string{MatchQuestion}},
		{"a lower threshold", "[memory]\nsimilarity = 0.1\n", "Sessions", "Which eviction policy?", []string{cache}, []string{MatchQuestion}},
		{"at most three, newest first", "", "Queue", "Kafka or SQS?", []string{q4, q3, q2}, []string{MatchTopic, MatchTopic, MatchTopic}},
		{"nothing alike", "", "Rollout", "Ship on Friday behind a flag?", []string{}, nil},
		{"reuse off", "[memory]\nreuse = \"off\"\n", "Queue", "Kafka or SQS?", []string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := h
			if tt.config != "" {
				other, _ := newTestHubAt(t, tt.config, &now)
				other.Store = h.Store
				h = other
			}
			got, err := h.DecidedBefore(context.Background(), tt.topic, tt.question)
			require.NoError(t, err)
			assert.Equal(t, tt.want, decidedIDs(got))
			for i, d := range got {
				assert.Equal(t, tt.match[i], d.Match, d.ID)
				assert.False(t, d.Outdated, "no files recorded: nothing known to have changed")
			}
		})
	}

	// what an ask returns
	rec, err := h.Ask(context.Background(), AskRequest{Issue: 50, From: "engineer", To: "architect", Topic: "Database adapter", Question: "Postgres or SQLite?", NonBlocking: true})
	require.NoError(t, err)
	require.Len(t, rec.DecidedBefore, 1)
	d := rec.DecidedBefore[0]
	assert.Equal(t, db, d.ID)
	assert.Equal(t, 42, d.Issue)
	assert.Equal(t, "Database adapter", d.Topic)
	assert.Equal(t, "Resolved with the answer: PostgreSQL, as in production.", d.Summary)
	assert.True(t, d.ResolvedAt.Equal(t0.Add(time.Minute)))
}

// TestChangedRefs is the outdated check: a decision's files whose SHA-256
// now differs, or that are gone, and nothing outside the repository.
func TestChangedRefs(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		sum := sha256.Sum256([]byte(text))
		return hex.EncodeToString(sum[:])
	}
	same := write("docs/adr/001.md", "Use PostgreSQL.\n")
	old := write("internal/db/db.go", "package db\n")
	write("internal/db/db.go", "package db // changed\n")
	gone := write("notes.md", "gone soon")
	require.NoError(t, os.Remove(filepath.Join(root, "notes.md")))
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("x"), 0o644))
	sumOutside := sha256.Sum256([]byte("x"))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "link")))

	tests := []struct {
		name string
		refs []ledger.ContextRef
		want []string
	}{
		{"none", nil, nil},
		{"unchanged", []ledger.ContextRef{{Kind: "ref", Path: "docs/adr/001.md", SHA256: same}}, nil},
		{"unchanged, hash in capitals", []ledger.ContextRef{{Kind: "ref", Path: "docs/adr/001.md", SHA256: hexUpper(same)}}, nil},
		{"changed", []ledger.ContextRef{{Kind: "ref", Path: "docs/adr/001.md", SHA256: same}, {Kind: "artifact", Path: "internal/db/db.go", Lines: "1-4", SHA256: old}}, []string{"internal/db/db.go"}},
		{"gone", []ledger.ContextRef{{Kind: "ref", Path: "notes.md", SHA256: gone}}, []string{"notes.md"}},
		{"one file twice, named once", []ledger.ContextRef{{Kind: "ref", Path: "notes.md", Lines: "1-2", SHA256: gone}, {Kind: "ref", Path: "notes.md", Lines: "5-9", SHA256: gone}}, []string{"notes.md"}},
		{"the issue's text is no file", []ledger.ContextRef{{Kind: "issue", Path: "#42", SHA256: same}}, nil},
		{"a path that leaves the repository", []ledger.ContextRef{{Kind: "ref", Path: "../secret", SHA256: hex.EncodeToString(sumOutside[:])}}, []string{"../secret"}},
		{"a link that leaves it", []ledger.ContextRef{{Kind: "ref", Path: "link", SHA256: hex.EncodeToString(sumOutside[:])}}, []string{"link"}},
		{"a directory", []ledger.ContextRef{{Kind: "ref", Path: "docs", SHA256: same}}, []string{"docs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ChangedRefs(root, tt.refs))
		})
	}
	assert.Nil(t, ChangedRefs(filepath.Join(root, "missing"), []ledger.ContextRef{{Kind: "ref", Path: "a", SHA256: same}}), "no repository: nothing known to have changed")
}

func hexUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestDecidedOutdated: an ask is told that a decision may be outdated
// when a file its question came with has changed since.
func TestDecidedOutdated(t *testing.T) {
	now := t0
	h, _ := newTestHubAt(t, "", &now)
	ctx := context.Background()
	require.NoError(t, os.WriteFile(filepath.Join(h.Dir, "schema.sql"), []byte("create table a;\n"), 0o644))
	sum := sha256.Sum256([]byte("create table a;\n"))
	rec, err := h.Ask(ctx, AskRequest{Issue: 42, From: "engineer", To: "architect", Topic: "Schema", Question: "One table or two?", NonBlocking: true})
	require.NoError(t, err)
	_, err = h.Store.Update(ctx, 42, func(l *ledger.Ledger) error {
		l.Find(rec.ID).Ext().Context = &ledger.Context{Commit: "abc1234", Refs: []ledger.ContextRef{{Kind: "ref", Path: "schema.sql", SHA256: hex.EncodeToString(sum[:])}}}
		return nil
	})
	require.NoError(t, err)
	_, err = h.Answer(ctx, rec.ID, "architect", "One.")
	require.NoError(t, err)
	_, err = h.Resolve(ctx, rec.ID, "engineer", "One table.")
	require.NoError(t, err)

	got, err := h.DecidedBefore(ctx, "schema", "")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "abc1234", got[0].Commit)
	assert.False(t, got[0].Outdated)

	require.NoError(t, os.WriteFile(filepath.Join(h.Dir, "schema.sql"), []byte("create table b;\n"), 0o644))
	got, err = h.DecidedBefore(ctx, "schema", "")
	require.NoError(t, err)
	assert.True(t, got[0].Outdated)
	assert.Equal(t, []string{"schema.sql"}, got[0].Changed)
}

// TestReuse: the asker proceeds on an earlier decision: an assumption that
// cites it, which the queue finds through the index; only a resolved
// clarification may be reused, by the asker of an open question.
func TestReuse(t *testing.T) {
	now := t0
	h, _ := newTestHubAt(t, "", &now)
	ctx := context.Background()
	db := decided(t, h, &now, 42, "Database adapter", "PostgreSQL or SQLite?", "PostgreSQL.")
	rec, err := h.Ask(ctx, AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "Database adapter", Question: "PostgreSQL or SQLite here?", NonBlocking: true})
	require.NoError(t, err)
	require.Equal(t, []string{db}, decidedIDs(rec.DecidedBefore))
	open, err := h.Ask(ctx, AskRequest{Issue: 8, From: "engineer", To: "architect", Topic: "Other", Question: "Something?", NonBlocking: true})
	require.NoError(t, err)

	var input *ledger.InputError
	var rule *RuleError
	for _, bad := range []struct {
		name, id, by, decision string
		want                   any
	}{
		{"not an id", rec.ID, "engineer", "42", &input},
		{"itself", rec.ID, "engineer", rec.ID, &input},
		{"not resolved", rec.ID, "engineer", open.ID, &input},
		{"not the asker", rec.ID, "architect", db, &rule},
	} {
		_, err := h.Reuse(ctx, bad.id, bad.by, bad.decision, "")
		assert.True(t, errors.As(err, bad.want), "%s: %v", bad.name, err)
	}
	_, err = h.Reuse(ctx, rec.ID, "engineer", "CLR-99-001", "")
	assert.ErrorIs(t, err, ledger.ErrNotFound)

	got, err := h.Reuse(ctx, rec.ID, "", db, "")
	require.NoError(t, err)
	a := got.Reused()
	require.NotNil(t, a)
	assert.Equal(t, &ledger.Reuse{ID: db, Summary: "Resolved with the answer: PostgreSQL."}, a.Reuses)
	assert.Equal(t, "engineer", a.By)
	assert.Equal(t, "Reusing the decision of "+db+" (#42, 2026-02-26): Resolved with the answer: PostgreSQL.", a.Body)
	assert.Equal(t, ledger.Pending, got.Status, "the question stays open")
	es, err := h.Store.OpenEntries(7)
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.True(t, es[0].Reused, "the index says so")

	// a person overturns it by replying: no reuse waits any more
	ans, err := h.Answer(ctx, rec.ID, ledger.Human, "MySQL here: the host has only that.")
	require.NoError(t, err)
	assert.Nil(t, ans.Reused())
	es, err = h.Store.OpenEntries(7)
	require.NoError(t, err)
	assert.False(t, es[0].Reused)

	_, err = h.Resolve(ctx, rec.ID, "engineer", "")
	require.NoError(t, err)
	_, err = h.Reuse(ctx, rec.ID, "engineer", db, "")
	assert.True(t, errors.As(err, new(*ledger.TransitionError)), "a closed question: %v", err)
}
