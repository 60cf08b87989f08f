package inbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

func item(kind Kind, id, from string, blocking bool, at time.Duration) Item {
	return Item{Kind: kind, ID: id, Issue: 1, Topic: "t", From: from, To: "x", By: "x", Round: 1,
		Blocking: blocking, Status: ledger.Answered, Body: "b", At: ledger.T(t0.Add(at)),
		Key: fmt.Sprintf("%s:%s:1", id, kind)}
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name  string
		items []Item // in log order
		want  []string
	}{
		{"answers to blocking questions, then escalations, then questions for it", []Item{
			item(KindQuestion, "CLR-1-001", "reviewer", true, 3*time.Minute),
			item(KindEscalated, "CLR-1-002", "engineer", true, 2*time.Minute),
			item(KindAnswer, "CLR-1-003", "engineer", true, time.Minute),
		}, []string{"CLR-1-003", "CLR-1-002", "CLR-1-001"}},
		{"a human's decision unblocks like an answer", []Item{
			item(KindEscalated, "CLR-1-001", "engineer", true, 0),
			item(KindResolved, "CLR-1-002", "engineer", true, 0),
		}, []string{"CLR-1-002", "CLR-1-001"}},
		{"answers to non-blocking questions after the questions for it", []Item{
			item(KindAnswer, "CLR-1-001", "engineer", false, 5*time.Minute),
			item(KindQuestion, "CLR-1-002", "reviewer", true, 0),
		}, []string{"CLR-1-002", "CLR-1-001"}},
		{"closures and decisions on others' questions last", []Item{
			item(KindAbandoned, "CLR-1-001", "engineer", true, 9*time.Minute),
			item(KindResolved, "CLR-1-002", "reviewer", true, 8*time.Minute),
			item(KindAnswer, "CLR-1-003", "engineer", false, 0),
		}, []string{"CLR-1-003", "CLR-1-001", "CLR-1-002"}},
		{"within a rank newest first", []Item{
			item(KindQuestion, "CLR-1-001", "reviewer", true, time.Minute),
			item(KindQuestion, "CLR-1-002", "reviewer", false, 3*time.Minute),
			item(KindQuestion, "CLR-1-003", "reviewer", true, 2*time.Minute),
		}, []string{"CLR-1-002", "CLR-1-003", "CLR-1-001"}},
		{"at the same instant, the later in the log first", []Item{
			item(KindAnswer, "CLR-1-001", "engineer", true, 0),
			item(KindAnswer, "CLR-1-002", "engineer", true, 0),
		}, []string{"CLR-1-002", "CLR-1-001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := make([]candidate, len(tt.items))
			for i, it := range tt.items {
				cs[i] = candidate{item: it, start: int64(i * 100)}
			}
			order(cs, "engineer")
			got := []string{}
			for _, c := range cs {
				got = append(got, c.item.ID)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFit(t *testing.T) {
	long := strings.Repeat("a long answer, ", 1000) // 15 KB
	many := func(n int, body string) []Item {
		out := make([]Item, n)
		for i := range out {
			out[i] = item(KindQuestion, fmt.Sprintf("CLR-2-%03d", i+1), "reviewer", true, 0)
			out[i].Body = body
		}
		return out
	}
	tests := []struct {
		name    string
		items   []Item
		older   *Older
		limit   int
		shown   int
		clipped bool
	}{
		{"no limit: all", many(50, "q?"), nil, 0, 50, false},
		{"all fit", many(3, "q?"), nil, 9000, 3, false},
		{"cut to the limit", many(100, "which of the two?"), nil, 2000, 10, false},
		{"the counts of older ones take room too", many(100, "which of the two?"), &Older{Resolved: 148, Abandoned: 2}, 2000, 9, false},
		{"an item longer than half the limit is clipped, and the next still fits", append(many(1, long), many(1, "q?")...), nil, 9000, 2, true},
		{"a lone item is clipped to fit", many(1, long), nil, 1000, 1, true},
		{"a limit too small for anything shows nothing", many(2, "q?"), nil, 50, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Result{Agent: "engineer", Older: tt.older}
			shown, more := fit(tt.items, r, tt.limit)
			assert.Len(t, shown, tt.shown)
			assert.Equal(t, len(tt.items)-tt.shown, more)
			r.Items, r.More = shown, more
			text := Text(r)
			if tt.limit > 0 {
				assert.LessOrEqual(t, size(text), tt.limit)
			}
			if more > 0 && tt.shown > 0 && !tt.clipped {
				r.Items, r.More = tt.items[:tt.shown+1], more-1
				assert.Greater(t, size(Text(r)), tt.limit, "one more would not fit")
			}
			if tt.shown > 0 {
				assert.Equal(t, tt.items[0].ID, shown[0].ID, "most important first")
				assert.Equal(t, tt.clipped, shown[0].Clipped)
			}
			if tt.clipped {
				assert.Contains(t, text, "[...]")
				assert.Contains(t, text, "(Cut short to fit here: agentx clarify show "+shown[0].ID+" has it all.)")
			}
			if more > 0 && tt.shown > 0 {
				assert.Contains(t, text, fmt.Sprintf("agentx inbox for engineer: %d new items, the %d most important shown.\n", len(tt.items), tt.shown))
				assert.Contains(t, text, fmt.Sprintf("\n%d more items, for a later look (or now: agentx inbox --agent engineer --all).\n", more))
			}
		})
	}
}

// TestFitReplies: the limit holds for an answer of several replies as for
// one body: the longest reply is cut first, a short one stays whole, and
// Body is what is left of the replies.
func TestFitReplies(t *testing.T) {
	long := strings.Repeat("a long reply, ", 1000) // 14 KB
	answer := func(bodies ...string) Item {
		it := item(KindAnswer, "CLR-2-001", "engineer", true, 0)
		for i, body := range bodies {
			it.Answers = append(it.Answers, Reply{By: "human", At: ledger.T(t0.Add(time.Duration(i) * time.Minute)), Body: body})
		}
		it.Body = joinReplies(it.Answers)
		return it
	}
	tests := []struct {
		name    string
		item    Item
		limit   int
		clipped bool
	}{
		{"short replies: whole", answer("eu-west-1", "And keep backups in eu-central-1."), HookLimit, false},
		{"a long first reply is cut, the short second kept", answer(long, "And keep backups in eu-central-1."), HookLimit, true},
		{"a long second reply is cut, the short first kept", answer("eu-west-1", long), HookLimit, true},
		{"alone, clipped to fit a small limit", answer(long, long), 1000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Result{Agent: "engineer"}
			shown, more := fit([]Item{tt.item, item(KindQuestion, "CLR-2-002", "reviewer", true, 0)}, r, tt.limit)
			require.NotEmpty(t, shown)
			r.Items, r.More = shown, more
			text := Text(r)
			assert.LessOrEqual(t, size(text), tt.limit)
			it := shown[0]
			assert.Equal(t, tt.clipped, it.Clipped)
			require.Len(t, it.Answers, len(tt.item.Answers), "every reply shown")
			assert.Equal(t, joinReplies(it.Answers), it.Body)
			for i, a := range it.Answers {
				if len(tt.item.Answers[i].Body) < 100 {
					assert.Equal(t, tt.item.Answers[i].Body, a.Body, "a short reply stays whole")
					assert.Contains(t, text, a.Body)
				}
			}
			for _, a := range tt.item.Answers {
				assert.False(t, strings.HasSuffix(a.Body, clipMark), "the look's own item is not cut")
			}
			if tt.clipped {
				assert.Contains(t, text, "[...]")
				assert.Contains(t, text, "(Cut short to fit here: agentx clarify show CLR-2-001 has it all.)")
			}
			if tt.limit == HookLimit {
				assert.Len(t, shown, 2, "the next item still fits")
			}
		})
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abcdef", 3, "abc"},
		{"añb", 2, "a"}, // ñ is two bytes: not split
		{"añb", 3, "añ"},
		{"日本", 4, "日"},
		{"x", 0, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, cut(tt.s, tt.n), "cut(%q, %d)", tt.s, tt.n)
	}
}

// TestLimitedLooksDeliverEverythingOnce: what a limited look leaves out
// comes in the next looks, each item once, most important first.
func TestLimitedLooksDeliverEverythingOnce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for i := 0; i < 30; i++ {
		w.at(time.Duration(i)*time.Minute).ask(t, 5, "engineer", "architect", fmt.Sprintf("T%d", i), strings.Repeat("a question with some length ", 10))
	}
	mine := w.at(time.Hour).ask(t, 6, "architect", "product-manager", "SLA", "Which SLA?")
	_, err := w.hub.Answer(ctx, mine, "product-manager", "99.9%.")
	require.NoError(t, err)

	limit := func(o *Options) { o.Limit = 2500 }
	peeked := w.check(t, "architect", limit, peek)
	first := w.check(t, "architect", limit)
	assert.Equal(t, peeked.Items, first.Items, "a peek shows what a look delivers")
	require.NotEmpty(t, first.Items)
	assert.Equal(t, mine, first.Items[0].ID, "the answer to its blocking question first")
	assert.Equal(t, "CLR-5-030", first.Items[1].ID, "then the newest question for it")
	assert.Positive(t, first.More)
	assert.LessOrEqual(t, size(Text(first)), 2500)

	seen := map[string]int{}
	for _, it := range first.Items {
		seen[it.ID]++
	}
	for look := 0; look < 30; look++ {
		res := w.check(t, "architect", limit)
		if len(res.Items) == 0 {
			break
		}
		for _, it := range res.Items {
			seen[it.ID]++
		}
	}
	assert.Len(t, seen, 31)
	for id, n := range seen {
		assert.Equal(t, 1, n, "%s delivered %d times", id, n)
	}
	assert.Empty(t, w.check(t, "architect").Items)
}

// TestFirstLook: an agent's first look delivers what concerns it now and
// counts the closed history; later looks deliver decisions and closures as
// the news they are.
func TestFirstLook(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		id := w.ask(t, i, "engineer", "architect", "t", "q?")
		_, err := w.hub.Answer(ctx, id, "architect", "a")
		require.NoError(t, err)
		_, err = w.hub.Resolve(ctx, id, "engineer", "")
		require.NoError(t, err)
	}
	gone := w.ask(t, 6, "engineer", "architect", "t", "q?")
	_, err := w.hub.Abandon(ctx, gone, "reviewer", "superseded")
	require.NoError(t, err)
	decided := w.ask(t, 6, "engineer", "architect", "t", "q?")
	_, err = w.hub.Escalate(ctx, decided, "a call")
	require.NoError(t, err)
	_, err = w.hub.Resolve(ctx, decided, ledger.Human, "decision: no")
	require.NoError(t, err)
	open := w.ask(t, 7, "engineer", "architect", "Now", "q?")
	_, err = w.hub.Answer(ctx, open, "architect", "the answer")
	require.NoError(t, err)
	waiting := w.ask(t, 7, "reviewer", "engineer", "Tests", "where?")
	followed := w.ask(t, 8, "engineer", "architect", "Round", "r1?")
	_, err = w.hub.Answer(ctx, followed, "architect", "a1")
	require.NoError(t, err)
	_, err = w.hub.Followup(ctx, followed, "engineer", "r2?")
	require.NoError(t, err)

	res := w.check(t, "engineer")
	assert.Equal(t, []string{"answer " + open, "question " + waiting}, kinds(res), "not the history, not a superseded round's answer")
	assert.Equal(t, &Older{Resolved: 6, Abandoned: 1}, res.Older)
	assert.Contains(t, Text(res), "\nNot shown: 7 older clarifications, already closed (6 resolved, 1 abandoned): agentx clarify list --all --agent engineer\n")

	// after the first look, a decision is news
	escalated := w.ask(t, 9, "engineer", "architect", "t", "q?")
	_, err = w.hub.Escalate(ctx, escalated, "a call")
	require.NoError(t, err)
	_, err = w.hub.Resolve(ctx, escalated, ledger.Human, "decision: yes")
	require.NoError(t, err)
	res = w.check(t, "engineer")
	assert.Equal(t, []string{"resolved " + escalated}, kinds(res))
	assert.Nil(t, res.Older)
	assert.NotContains(t, Text(res), "Not shown")
}

// answeredAndSeen asks the architect a question, has it answered, and marks
// the thread as seen by the engineer; it returns the record as marked.
func (w *world) answeredAndSeen(t *testing.T) *ledger.Clarification {
	t.Helper()
	ctx := context.Background()
	id := w.ask(t, 1, "engineer", "architect", "t", "q?")
	_, err := w.hub.Answer(ctx, id, "architect", "a1")
	require.NoError(t, err)
	c, err := w.hub.Store.Get(id)
	require.NoError(t, err)
	require.NoError(t, MarkSeen(ctx, w.hub.Store, "engineer", c, ViaWait))
	return c
}

func TestMarkSeen(t *testing.T) {
	tests := []struct {
		name      string
		reader    string
		engineer  []string // what the engineer's inbox then delivers
		architect []string
	}{
		{"the asker", "engineer", []string{}, []string{"question CLR-1-002"}},
		{"the one asked", "architect", []string{"answer CLR-1-001"}, []string{"question CLR-1-002"}},
		{"someone else", "reviewer", []string{"answer CLR-1-001"}, []string{"question CLR-1-002"}},
		{"nobody", "", []string{"answer CLR-1-001"}, []string{"question CLR-1-002"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			id := w.ask(t, 1, "engineer", "architect", "t", "q?")
			w.check(t, "engineer") // first looks
			w.check(t, "architect")
			_, err := w.hub.Answer(ctx, id, "architect", "a")
			require.NoError(t, err)
			w.ask(t, 1, "engineer", "architect", "t2", "q2?")
			c, err := w.hub.Store.Get(id)
			require.NoError(t, err)
			require.NoError(t, MarkSeen(ctx, w.hub.Store, tt.reader, c, ViaWait))
			assert.Equal(t, tt.engineer, kinds(w.check(t, "engineer")))
			assert.Equal(t, tt.architect, kinds(w.check(t, "architect")))
		})
	}

	t.Run("a new round after the mark is news", func(t *testing.T) {
		w := newWorld(t)
		ctx := context.Background()
		w.check(t, "engineer")
		id := w.answeredAndSeen(t).ID
		_, err := w.hub.Followup(ctx, id, "engineer", "q2?")
		require.NoError(t, err)
		_, err = w.hub.Answer(ctx, id, "architect", "a2")
		require.NoError(t, err)
		res := w.check(t, "engineer")
		require.Equal(t, []string{"answer " + id}, kinds(res))
		assert.Equal(t, "a2", res.Items[0].Body)
	})

	t.Run("a mark never goes back", func(t *testing.T) {
		w := newWorld(t)
		c := w.answeredAndSeen(t)
		c.Thread = c.Thread[:1]
		require.NoError(t, MarkSeen(context.Background(), w.hub.Store, "engineer", c, ViaWait))
		var st State
		require.NoError(t, w.hub.Store.ReadState(StateFile("engineer"), &st))
		assert.Equal(t, 2, st.Marks[c.ID].Entries)
	})

	t.Run("a bad reader name is refused", func(t *testing.T) {
		w := newWorld(t)
		c := &ledger.Clarification{ID: "CLR-1-001", From: "../x", To: "architect"}
		var ie *ledger.InputError
		require.ErrorAs(t, MarkSeen(context.Background(), w.hub.Store, "../x", c, ViaWait), &ie)
	})
}

// TestMarksArePruned: a mark is dropped once the log past the inbox's
// offset holds nothing it covers and it is older than markGrace, unless it
// is open (the agent's question answered: more replies may come) and its
// round has not ended; and no more than maxMarks are kept.
func TestMarksArePruned(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	id := w.answeredAndSeen(t).ID
	marks := func() map[string]Mark {
		var st State
		require.NoError(t, w.hub.Store.ReadState(StateFile("engineer"), &st))
		return st.Marks
	}

	assert.Empty(t, w.check(t, "engineer").Items)
	assert.Contains(t, marks(), id, "within the grace period the mark stays")
	assert.True(t, marks()[id].Open, "its question is answered")
	w.at(2*markGrace).ask(t, 2, "reviewer", "engineer", "t", "q?")
	assert.Len(t, w.check(t, "engineer").Items, 1)
	assert.Contains(t, marks(), id, "open: more replies may come, the mark stays")
	assert.Contains(t, marks(), "CLR-2-001", "what the look delivered is marked")
	assert.False(t, marks()["CLR-2-001"].Open, "a question for the agent: no replies to it")

	_, err := w.at(3*markGrace).hub.Resolve(ctx, id, "engineer", "")
	require.NoError(t, err)
	w.at(5*markGrace).ask(t, 2, "reviewer", "engineer", "t2", "q2?")
	assert.Len(t, w.check(t, "engineer").Items, 1)
	assert.NotContains(t, marks(), id, "its round ended and its events are behind the offset: dropped")
	assert.NotContains(t, marks(), "CLR-2-001", "its events are behind the offset: dropped")

	m := map[string]Mark{}
	for i := 0; i < maxMarks+5; i++ {
		m = mark(m, fmt.Sprintf("CLR-9-%03d", i), 1, t0.Add(time.Duration(i)*time.Second), false, ViaWait)
	}
	assert.Len(t, m, maxMarks)
	assert.NotContains(t, m, "CLR-9-004", "the oldest go first")
	assert.Contains(t, m, "CLR-9-005")
}

// TestHistoryStaysHistory: what a first look held back (to keep within its
// limit) is re-read by the next look, and the closed history among it is
// still not delivered.
func TestHistoryStaysHistory(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		w.ask(t, 5, "engineer", "architect", fmt.Sprintf("T%d", i), strings.Repeat("a question with some length ", 10))
	}
	old := w.ask(t, 6, "architect", "product-manager", "SLA", "Which SLA?")
	_, err := w.hub.Escalate(ctx, old, "a call")
	require.NoError(t, err)
	_, err = w.hub.Resolve(ctx, old, ledger.Human, "decision: 99.9%")
	require.NoError(t, err)

	limit := func(o *Options) { o.Limit = 1500 }
	res := w.check(t, "architect", limit)
	require.Positive(t, res.More)
	assert.Equal(t, &Older{Resolved: 1}, res.Older)
	got := map[string]bool{}
	for look := 0; len(res.Items) > 0 && look < 20; look++ {
		for _, it := range res.Items {
			got[it.ID] = true
		}
		if res = w.check(t, "architect", limit); len(res.Items) > 0 {
			assert.Nil(t, res.Older, "counted once")
		}
	}
	assert.Len(t, got, 10)
	assert.NotContains(t, got, old, "history, even when re-read")
	var st State
	require.NoError(t, w.hub.Store.ReadState(StateFile("architect"), &st))
	assert.Zero(t, st.History, "settled: nothing left to tell apart")

	// a decision after the first look is news
	now := w.ask(t, 6, "architect", "product-manager", "Budget", "Two regions?")
	_, err = w.hub.Escalate(ctx, now, "a call")
	require.NoError(t, err)
	_, err = w.hub.Resolve(ctx, now, ledger.Human, "decision: one")
	require.NoError(t, err)
	assert.Equal(t, []string{"resolved " + now}, kinds(w.check(t, "architect")))
}

// prose is n bytes of plain text as people write it: words, a quote now
// and then, a line break every 72 bytes or so.
func prose(n int) string {
	words := strings.Fields(`Keep the "adapter" behind an interface; SQLite in dev, PostgreSQL in CI and prod, and it's fine to migrate later`)
	var b strings.Builder
	line := 0
	for i := 0; b.Len() < n; i++ {
		w := words[i%len(words)]
		switch {
		case line+len(w)+1 > 72:
			b.WriteString("\n")
			line = 0
		case line > 0:
			b.WriteString(" ")
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()[:n]
}

// TestMessageAtTheLimitArrivesWhole: one message at ledger.MaxMessageLen
// (prose) reaches the agent whole in a look, whether plain text or a
// Claude Code hook, as the most important item beside another one: an
// answer (its question and the agent's assumption, the agent's own
// words, are cut to a gist to make room), a decision, a question for the
// agent. The limit is what keeps within an item's share of a look; were
// it raised past that, this fails.
func TestMessageAtTheLimitArrivesWhole(t *testing.T) {
	msg := prose(ledger.MaxMessageLen)
	long := func(it Item) Item {
		it.Topic = strings.Repeat("t", ledger.MaxTopicLen)
		it.ID = "CLR-999999999-001"
		return it
	}
	answer := long(item(KindAnswer, "", "engineer", true, 0))
	answer.Question = prose(ledger.MaxMessageLen)
	answer.Answers = []Reply{{By: "human:someone@example.com", At: answer.At, Body: msg}}
	answer.Body = msg
	answer.Assumptions = []ledger.Assumption{{Round: 1, Body: prose(ledger.MaxMessageLen)}}
	decision := long(item(KindResolved, "", "engineer", true, 0))
	decision.Question = prose(ledger.MaxMessageLen)
	decision.Body = msg
	question := long(item(KindQuestion, "", "reviewer", true, 0))
	question.Body = msg
	for _, tt := range []struct {
		name string
		it   Item
		body func(Item) string
	}{
		{"an answer", answer, func(it Item) string { return it.Answers[0].Body }},
		{"a decision", decision, func(it Item) string { return it.Body }},
		{"a question for the agent", question, func(it Item) string { return it.Body }},
	} {
		for _, limit := range []int{HookLimit, HookTextLimit(HookUserPromptSubmit)} {
			t.Run(fmt.Sprintf("%s/%d", tt.name, limit), func(t *testing.T) {
				r := Result{Agent: "engineer"}
				shown, more := fit([]Item{tt.it, item(KindQuestion, "CLR-2-002", "reviewer", true, 0)}, r, limit)
				require.NotEmpty(t, shown)
				assert.Equal(t, msg, tt.body(shown[0]), "the message whole")
				r.Items, r.More = shown, more
				assert.LessOrEqual(t, size(Text(r)), limit)
				last := msg[strings.LastIndex(msg, "\n")+1:]
				assert.Contains(t, Text(r), last+"\n", "shown to its end")
			})
		}
	}
}
