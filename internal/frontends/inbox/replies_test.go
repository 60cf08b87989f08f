package inbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// TestReplies: a person may reply more than once to a round. The asker's
// inbox delivers, in one item, every reply of the current round it has not
// seen, in order, each once, however many looks and ways of reading there
// were in between.
func TestReplies(t *testing.T) {
	// a step is something that happens to the engineer's question, or a
	// look at the engineer's inbox with the replies ("by: body") it must
	// deliver (none: no item)
	type step func(t *testing.T, w *world, id string)
	answer := func(d time.Duration, by, body string) step {
		return func(t *testing.T, w *world, id string) {
			_, err := w.at(d).hub.Answer(context.Background(), id, by, body)
			require.NoError(t, err)
		}
	}
	followup := func(d time.Duration, body string) step {
		return func(t *testing.T, w *world, id string) {
			_, err := w.at(d).hub.Followup(context.Background(), id, "engineer", body)
			require.NoError(t, err)
		}
	}
	// seen: the engineer reads the thread another way (clarify wait, show)
	seen := func(t *testing.T, w *world, id string) {
		c, err := w.hub.Store.Get(id)
		require.NoError(t, err)
		require.NoError(t, MarkSeen(context.Background(), w.hub.Store, "engineer", c, ViaWait))
	}
	// other: something else for the engineer, later, so a look moves on
	other := func(d time.Duration) step {
		return func(t *testing.T, w *world, id string) {
			w.at(d).ask(t, 8, "reviewer", "engineer", "Other", "Unrelated?")
			require.Equal(t, []string{"question CLR-8-001"}, kinds(w.check(t, "engineer")))
		}
	}
	look := func(round int, want ...string) step {
		return func(t *testing.T, w *world, id string) {
			res := w.check(t, "engineer")
			if len(want) == 0 {
				assert.Empty(t, res.Items)
				return
			}
			require.Equal(t, []string{"answer " + id}, kinds(res))
			it := res.Items[0]
			got, bodies := []string{}, []string{}
			for _, r := range it.Answers {
				got = append(got, r.By+": "+r.Body)
				bodies = append(bodies, r.Body)
			}
			assert.Equal(t, want, got, "every reply not seen, in order, each once")
			assert.Equal(t, round, it.Round)
			last := it.Answers[len(it.Answers)-1]
			assert.Equal(t, strings.Join(bodies, "\n\n"), it.Body, "the body is the replies, a blank line apart")
			assert.Equal(t, last.By, it.By, "by: the latest reply's")
			assert.Equal(t, last.At, it.At, "at: the latest reply's")
			text := Text(res)
			for _, r := range it.Answers {
				assert.Contains(t, text, r.Body)
			}
		}
	}
	const (
		region  = "architect: eu-west-1"
		backups = "human: And keep backups in eu-central-1."
		third   = "human: Encrypted, with our KMS key."
	)
	// the architect answers, then a person adds to the answer
	first, second := answer(time.Minute, "architect", "eu-west-1"), answer(2*time.Minute, ledger.Human, "And keep backups in eu-central-1.")
	// both after the engineer's first look
	both := func(then ...step) []step { return append([]step{look(1), first, second}, then...) }
	tests := []struct {
		name  string
		steps []step
	}{
		{"two replies before a look: both, in order", both(
			look(1, region, backups),
			look(1),
		)},
		{"a first look: both", []step{first, second, look(1, region, backups)}},
		{"a third reply later: only it", both(
			look(1, region, backups),
			answer(3*time.Minute, ledger.Human, "Encrypted, with our KMS key."),
			look(1, third),
			look(1),
		)},
		{"a third reply long after, the look having moved on: only it", both(
			look(1, region, backups),
			other(3*markGrace),
			answer(4*markGrace, ledger.Human, "Encrypted, with our KMS key."),
			look(1, third),
		)},
		{"one reply each look", []step{look(1), first, look(1, region), second, look(1, backups)}},
		{"the first read with clarify wait: only the second", []step{look(1), first, seen, second, look(1, backups)}},
		{"both read with clarify show: none", both(seen, look(1))},
		{"a reply after a follow-up: only the new round's", both(
			look(1, region, backups),
			followup(3*time.Minute, "Which bucket?"),
			answer(4*time.Minute, "architect", "backups-eu"),
			look(2, "architect: backups-eu"),
			answer(5*time.Minute, ledger.Human, "With versioning on."),
			look(2, "human: With versioning on."),
		)},
		{"a follow-up before the look: only the new round's", both(
			followup(3*time.Minute, "Which bucket?"),
			answer(4*time.Minute, "architect", "backups-eu"),
			answer(5*time.Minute, ledger.Human, "With versioning on."),
			look(2, "architect: backups-eu", "human: With versioning on."),
		)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			id := w.ask(t, 7, "engineer", "architect", "Region", "Which region?")
			for _, s := range tt.steps {
				s(t, w, id)
			}
		})
	}
}

// TestRepliesGolden: how a look shows an answer of several replies, each
// with who wrote it and when, on time and late.
func TestRepliesGolden(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	region := w.ask(t, 7, "engineer", "architect", "Region", "Which region?")
	storage := w.ask(t, 7, "engineer", "architect", "Storage", "Postgres or SQLite?")
	assert.Empty(t, w.check(t, "engineer").Items)
	for _, r := range []struct {
		at       time.Duration
		id       string
		by, body string
	}{
		{time.Minute, region, "architect", "eu-west-1"},
		{2 * time.Minute, region, ledger.Human, "And keep backups in eu-central-1,\nencrypted."},
		{3 * time.Minute, storage, "architect", "Postgres."},
	} {
		_, err := w.at(r.at).hub.Answer(ctx, r.id, r.by, r.body)
		require.NoError(t, err)
	}
	_, err := w.at(4*time.Minute).hub.Assume(ctx, storage, "engineer", "Managed, version 16.")
	require.NoError(t, err)
	_, err = w.at(5*time.Minute).hub.Answer(ctx, storage, ledger.Human, "Self-hosted: we have a DBA.")
	require.NoError(t, err)

	res := w.check(t, "engineer")
	require.Equal(t, []string{"answer " + storage, "answer " + region}, kinds(res), "newest first")
	golden(t, "replies.golden", []byte(Text(res)))
}
