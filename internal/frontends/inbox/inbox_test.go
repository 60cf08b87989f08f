package inbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

var t0 = time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)

// world is a hub over a fresh workspace with a clock the test moves.
type world struct {
	hub *router.Hub
	mu  sync.Mutex
	now time.Time
}

func newWorld(t testing.TB) *world {
	t.Helper()
	dir, rules := testenv.Workspace(t, "")
	w := &world{now: t0}
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, w.clock)
	w.hub = router.New(store, rules, dir)
	w.hub.Rules().Config.MaxQuestions = 0 // these tests ask more than a run's three questions
	w.hub.Warn = func(err error) { t.Errorf("unexpected warning: %v", err) }
	return w
}

func (w *world) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

// at sets the clock to t0 plus d.
func (w *world) at(d time.Duration) *world {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = t0.Add(d)
	return w
}

func (w *world) ask(t *testing.T, issue int, from, to, topic, q string) string {
	t.Helper()
	rec, err := w.hub.Ask(context.Background(), router.AskRequest{Issue: issue, From: from, To: to, Topic: topic, Question: q})
	require.NoError(t, err)
	return rec.ID
}

func (w *world) check(t *testing.T, agent string, mod ...func(*Options)) Result {
	t.Helper()
	o := Options{Agent: agent}
	for _, m := range mod {
		m(&o)
	}
	res, err := Check(context.Background(), w.hub.Store, o)
	require.NoError(t, err)
	return res
}

func peek(o *Options) { o.Peek = true }

func issue(n int) func(*Options) { return func(o *Options) { o.Issue = &n } }

func kinds(res Result) []string {
	out := []string{}
	for _, it := range res.Items {
		out = append(out, fmt.Sprintf("%s %s", it.Kind, it.ID))
	}
	return out
}

func TestDeliveredOnce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	id := w.ask(t, 42, "engineer", "architect", "Cache", "TTL per key or global?")

	// the one asked sees the question, once
	res := w.check(t, "architect")
	require.Equal(t, []string{"question CLR-42-001"}, kinds(res))
	it := res.Items[0]
	assert.Equal(t, "engineer", it.By)
	assert.Equal(t, "TTL per key or global?", it.Body)
	assert.True(t, res.Marked)
	assert.Empty(t, w.check(t, "architect").Items)
	assert.Empty(t, w.check(t, "engineer").Items, "nothing for the asker yet")

	_, err := w.at(time.Minute).hub.Answer(ctx, id, "architect", "Per key.")
	require.NoError(t, err)
	res = w.check(t, "engineer")
	require.Equal(t, []string{"answer CLR-42-001"}, kinds(res))
	assert.Equal(t, Item{
		Kind: KindAnswer, ID: id, Issue: 42, Topic: "Cache", From: "engineer", To: "architect", By: "architect",
		Round: 1, Blocking: true, Status: ledger.Answered, Question: "TTL per key or global?", Body: "Per key.",
		Answers: []Reply{{By: "architect", At: ledger.T(t0.Add(time.Minute)), Body: "Per key."}}, At: ledger.T(t0.Add(time.Minute)),
		Key: "CLR-42-001:answer:1",
	}, res.Items[0])
	assert.Empty(t, w.check(t, "engineer").Items, "delivered once")
	assert.Empty(t, w.check(t, "architect").Items)
}

func TestPeekIsIdempotent(t *testing.T) {
	w := newWorld(t)
	w.ask(t, 42, "engineer", "architect", "Cache", "TTL?")
	w.ask(t, 43, "engineer", "product-manager", "Scope", "In or out?")
	first := w.check(t, "architect", peek)
	second := w.check(t, "architect", peek)
	assert.Equal(t, first, second)
	assert.False(t, first.Marked)
	assert.Equal(t, []string{"question CLR-42-001"}, kinds(first))
	// a real look delivers the same, then nothing
	assert.Equal(t, first.Items, w.check(t, "architect").Items)
	assert.Empty(t, w.check(t, "architect", peek).Items)
	assert.Empty(t, w.check(t, "architect").Items)
}

func TestLateAnswer(t *testing.T) {
	tests := []struct {
		name     string
		assumeAt time.Duration // when the asker records its assumption
		answerAt time.Duration
		late     bool
	}{
		{"assumption, then the answer: late", 5 * time.Minute, 10 * time.Minute, true},
		{"answer at the same instant: late", 5 * time.Minute, 5 * time.Minute, true},
		{"answer first, assumption after: not late", 10 * time.Minute, 5 * time.Minute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			id := w.ask(t, 7, "engineer", "architect", "Auth", "OAuth or SAML?")
			if tt.assumeAt < tt.answerAt {
				_, err := w.at(tt.assumeAt).hub.Assume(ctx, id, "engineer", "OAuth, as the PRD hints.")
				require.NoError(t, err)
			}
			_, err := w.at(tt.answerAt).hub.Answer(ctx, id, "architect", "SAML: the customer uses Okta.")
			require.NoError(t, err)
			if tt.assumeAt >= tt.answerAt {
				_, err := w.at(tt.assumeAt).hub.Assume(ctx, id, "engineer", "OAuth, as the PRD hints.")
				require.NoError(t, err)
			}
			res := w.check(t, "engineer")
			require.Len(t, res.Items, 1)
			it := res.Items[0]
			assert.Equal(t, tt.late, it.Late)
			if tt.late {
				require.Len(t, it.Assumptions, 1)
				assert.Equal(t, "OAuth, as the PRD hints.", it.Assumptions[0].Body)
				assert.Contains(t, Text(res), "LATE answer from architect")
				assert.Contains(t, Text(res), "You assumed (round 1, 2026-02-26 10:05 UTC): OAuth, as the PRD hints.")
			} else {
				assert.Empty(t, it.Assumptions)
				assert.NotContains(t, Text(res), "LATE")
			}
		})
	}
}

func TestKinds(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a := w.ask(t, 1, "engineer", "architect", "Queue", "Kafka or SQS?")
	b := w.ask(t, 1, "engineer", "human", "Budget", "Is SQS within budget?")
	c := w.ask(t, 1, "engineer", "architect", "Retry", "How many retries?")
	d := w.ask(t, 1, "architect", "product-manager", "SLA", "What SLA?")
	// their first looks: after them, decisions and closures are news
	assert.Empty(t, w.check(t, "engineer").Items)
	assert.Equal(t, []string{"question CLR-1-003", "question CLR-1-001"}, kinds(w.check(t, "architect")), "newest first")
	// a question answered before its target looks is not delivered to it
	_, err := w.hub.Answer(ctx, d, "product-manager", "99.9%.")
	require.NoError(t, err)
	_, err = w.hub.Escalate(ctx, a, "needs a call")
	require.NoError(t, err)
	_, err = w.hub.Resolve(ctx, a, ledger.Human, "decision: SQS")
	require.NoError(t, err)
	_, err = w.hub.Escalate(ctx, b, "over budget?")
	require.NoError(t, err)
	_, err = w.hub.Abandon(ctx, c, "", "superseded")
	require.NoError(t, err)

	assert.Equal(t, []string{
		"resolved CLR-1-001",  // decided by a human (its escalation is already settled)
		"escalated CLR-1-002", // still with the human
		"abandoned CLR-1-003", // closed by someone else
	}, kinds(w.check(t, "engineer")))
	assert.Equal(t, []string{
		"answer CLR-1-004",   // the answer to its own question
		"resolved CLR-1-001", // the human's decision on a question it was asked
	}, kinds(w.check(t, "architect")), "what unblocks it first")
	assert.Empty(t, kinds(w.check(t, "product-manager")), "its question was answered already")
	e, err := w.hub.Ask(ctx, router.AskRequest{Issue: 1, From: "engineer", To: ledger.Human, Topic: "Flag", Question: "On by default?", Options: []string{"on", "off"}})
	require.NoError(t, err)
	res := w.check(t, ledger.Human)
	assert.Equal(t, []string{"question " + e.ID}, kinds(res), "not CLR-1-002: escalated, no longer waiting for an answer")
	assert.Equal(t, []string{"on", "off"}, res.Items[0].Options)
	assert.Contains(t, Text(res), "    Q: On by default?\n    option 1: on\n    option 2: off\n")
}

func TestCancelledByAskerIsNotNews(t *testing.T) {
	w := newWorld(t)
	id := w.ask(t, 1, "engineer", "architect", "t", "q?")
	_, err := w.hub.Cancel(context.Background(), id, "engineer")
	require.NoError(t, err)
	assert.Empty(t, w.check(t, "engineer").Items)
	assert.Empty(t, w.check(t, "architect").Items, "the question is gone before it looked")
}

func TestIssueFilter(t *testing.T) {
	w := newWorld(t)
	w.ask(t, 1, "engineer", "architect", "One", "q1?")
	w.ask(t, 2, "engineer", "architect", "Two", "q2?")
	w.ask(t, 1, "engineer", "architect", "Three", "q3?")

	assert.Equal(t, []string{"question CLR-2-001"}, kinds(w.check(t, "architect", issue(2))))
	assert.Empty(t, w.check(t, "architect", issue(2)).Items)
	// the others waited for the next look
	assert.Equal(t, []string{"question CLR-1-002", "question CLR-1-001"}, kinds(w.check(t, "architect")), "newest first")
	assert.Empty(t, w.check(t, "architect").Items)

	var st State
	require.NoError(t, w.hub.Store.ReadState(StateFile("architect"), &st))
	size, err := w.hub.Events.Size()
	require.NoError(t, err)
	assert.Equal(t, size, st.Offset, "everything settled")
	assert.Empty(t, st.Delivered)
}

// TestKindsFilter: a look that takes only some kinds (a turn's end takes
// answers) leaves the others for the next look, undelivered.
func TestKindsFilter(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	mine := w.ask(t, 1, "architect", "product-manager", "Mine", "q1?")
	w.ask(t, 1, "engineer", "architect", "Theirs", "q2?")
	_, err := w.hub.Answer(ctx, mine, "product-manager", "Yes.")
	require.NoError(t, err)

	answers := func(o *Options) { o.Kinds = []Kind{KindAnswer} }
	assert.Equal(t, []string{"answer CLR-1-001"}, kinds(w.check(t, "architect", answers)))
	assert.Empty(t, w.check(t, "architect", answers).Items, "delivered once")
	assert.Equal(t, []string{"question CLR-1-002"}, kinds(w.check(t, "architect")), "the question waited for the next look")
	assert.Empty(t, w.check(t, "architect").Items)
}

func TestReadsOnlyNewEvents(t *testing.T) {
	w := newWorld(t)
	for i := 0; i < 500; i++ {
		require.NoError(t, w.hub.Events.Append(router.Event{Type: router.EventStale, ClarificationID: "CLR-9-001", IssueNumber: 9, FromAgent: "x", ToAgent: "y", Round: 1}))
	}
	res := w.check(t, "architect")
	assert.Equal(t, 500, res.Scanned)
	w.ask(t, 1, "engineer", "architect", "t", "q?")
	res = w.check(t, "architect")
	assert.Equal(t, 1, res.Scanned, "only the line appended since")
	assert.Len(t, res.Items, 1)
	res = w.check(t, "architect")
	assert.Equal(t, 0, res.Scanned, "nothing appended: not even a read")
}

func TestTornLastLineWaits(t *testing.T) {
	w := newWorld(t)
	w.ask(t, 1, "engineer", "architect", "t", "q?")
	f, err := os.OpenFile(w.hub.Events.Path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"clarification-requ`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Len(t, w.check(t, "architect").Items, 1)
	var st State
	require.NoError(t, w.hub.Store.ReadState(StateFile("architect"), &st))
	size, err := w.hub.Events.Size()
	require.NoError(t, err)
	assert.Less(t, st.Offset, size, "the torn line is not consumed")
}

func TestReplacedLog(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	id := w.ask(t, 1, "engineer", "architect", "t", "q?")
	_, err := w.at(time.Minute).hub.Answer(ctx, id, "architect", "a")
	require.NoError(t, err)
	require.Len(t, w.check(t, "engineer").Items, 1)

	// the log is replaced by one holding only newer events
	require.NoError(t, os.Remove(w.hub.Events.Path))
	id2 := w.at(2*time.Minute).ask(t, 1, "engineer", "architect", "t2", "q2?")
	_, err = w.at(3*time.Minute).hub.Answer(ctx, id2, "architect", "a2")
	require.NoError(t, err)
	assert.Equal(t, []string{"answer CLR-1-002"}, kinds(w.check(t, "engineer")))
	assert.Empty(t, w.check(t, "engineer").Items)
}

func TestConcurrentLooksDeliverOnce(t *testing.T) {
	w := newWorld(t)
	for i := 0; i < 20; i++ {
		w.ask(t, i+1, "engineer", "architect", "t", "q?")
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got = map[string]int{}
	)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := Check(context.Background(), w.hub.Store, Options{Agent: "architect"})
			if err != nil {
				t.Errorf("check: %v", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, it := range res.Items {
				got[it.ID]++
			}
		}()
	}
	wg.Wait()
	assert.Len(t, got, 20)
	for id, n := range got {
		assert.Equal(t, 1, n, "%s delivered %d times", id, n)
	}
}

func TestBadAgent(t *testing.T) {
	w := newWorld(t)
	_, err := Check(context.Background(), w.hub.Store, Options{Agent: "../etc"})
	var ie *ledger.InputError
	require.ErrorAs(t, err, &ie)
}

// TestClaudeHookGolden: the hook output has exactly the shape Claude Code
// documents for adding context to a turn, and the text the agent reads.
func TestClaudeHookGolden(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	a := w.ask(t, 42, "engineer", "architect", "Cache", "TTL per key or global?")
	_, err := w.at(5*time.Minute).hub.Assume(ctx, a, "engineer", "Global, 5 minutes.")
	require.NoError(t, err)
	_, err = w.at(10*time.Minute).hub.Answer(ctx, a, "architect", "Per key:\nsessions 15m, pages 1m.")
	require.NoError(t, err)
	w.ask(t, 42, "reviewer", "engineer", "Metrics", "Which metrics do you emit?")
	res := w.check(t, "engineer")
	require.Len(t, res.Items, 2)

	for _, event := range HookEvents {
		t.Run(event, func(t *testing.T) {
			out, err := ClaudeHook(event, res)
			require.NoError(t, err)
			var doc map[string]map[string]string
			require.NoError(t, json.Unmarshal(out, &doc))
			require.Len(t, doc, 1)
			require.Len(t, doc["hookSpecificOutput"], 2)
			assert.Equal(t, event, doc["hookSpecificOutput"]["hookEventName"])
			assert.Equal(t, Text(res), doc["hookSpecificOutput"]["additionalContext"])
			if event == HookUserPromptSubmit {
				golden(t, "claude-hook.golden.json", out)
				golden(t, "text.golden", []byte(Text(res)))
			}
		})
	}

	none, err := ClaudeHook(HookUserPromptSubmit, Result{Agent: "engineer"})
	require.NoError(t, err)
	assert.Nil(t, none, "nothing new: the hook prints nothing")
	_, err = ClaudeHook("Stop", res)
	assert.Error(t, err)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./inbox -update to create it")
	assert.Equal(t, string(want), string(got))
}

// TestStateOfAnEarlierVersion: a state whose line mark an earlier version
// wrote (a SHA-256 prefix, not the FNV-1a hash this one writes) does not
// verify: the log is read again from the start, once, and nothing already
// delivered comes again, while what is new does.
func TestStateOfAnEarlierVersion(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	id := w.ask(t, 1, "engineer", "architect", "t", "q?")
	_, err := w.at(time.Minute).hub.Answer(ctx, id, "architect", "a")
	require.NoError(t, err)
	require.Equal(t, []string{"answer CLR-1-001"}, kinds(w.check(t, "engineer")))

	path := filepath.Join(w.hub.Store.Dir(), StateFile("engineer"))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var st map[string]any
	require.NoError(t, json.Unmarshal(data, &st))
	log, err := os.ReadFile(w.hub.Events.Path)
	require.NoError(t, err)
	lines := bytes.SplitAfter(log, []byte("\n"))
	last := lines[len(lines)-2] // the line ending at the state's offset
	sum := sha256.Sum256(bytes.TrimSuffix(last, []byte("\n")))
	require.NotEqual(t, hex.EncodeToString(sum[:8]), st["lastSum"], "this version's mark is another hash")
	st["lastSum"] = hex.EncodeToString(sum[:8])
	data, err = json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))

	id2 := w.at(2*time.Minute).ask(t, 1, "engineer", "architect", "t2", "q2?")
	_, err = w.at(3*time.Minute).hub.Answer(ctx, id2, "architect", "a2")
	require.NoError(t, err)
	assert.Equal(t, []string{"answer CLR-1-002"}, kinds(w.check(t, "engineer")), "only what is new")
	assert.Empty(t, w.check(t, "engineer").Items)
}

// TestDecisionInShort: a person's decision reaches the parties as what was
// decided, in short (the resolution's summary, else its first sentence),
// not the resolution's whole text, with where the whole thread is; the
// JSON item keeps the resolution as its body.
func TestDecisionInShort(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	long := "Shared schema with a tenant column.\n\nReasons: one migration path, one connection pool, and the isolation we need comes from row-level security. Revisit at 50 tenants."
	a := w.ask(t, 7, "engineer", "architect", "Tenancy", "Schema per tenant?")
	b := w.ask(t, 7, "engineer", "architect", "Cache", "TTL per key or global?")
	assert.Empty(t, w.check(t, "engineer").Items) // its first look
	for _, id := range []string{a, b} {
		_, err := w.hub.Escalate(ctx, id, "a product call")
		require.NoError(t, err)
	}
	_, err := w.hub.ResolveReply(ctx, a, ledger.Human, router.Reply{Body: long, Summary: "Shared schema, tenant column. Revisit at 50 tenants."})
	require.NoError(t, err)
	_, err = w.hub.Resolve(ctx, b, ledger.Human, long)
	require.NoError(t, err)

	res := w.check(t, "engineer", peek)
	require.Len(t, res.Items, 2)
	byID := map[string]Item{}
	for _, it := range res.Items {
		byID[it.ID] = it
	}
	assert.Equal(t, "Shared schema, tenant column. Revisit at 50 tenants.", byID[a].Decision, "the summary")
	assert.Equal(t, "Shared schema with a tenant column.", byID[b].Decision, "none given: the first sentence")
	assert.Equal(t, long, byID[a].Body, "the JSON item keeps the resolution")

	text := Text(res)
	assert.Contains(t, text, "* Decision by human on CLR-7-001 (issue #7, \"Tenancy\"):\n    Q: Schema per tenant?\n    Decision: Shared schema, tenant column. Revisit at 50 tenants.\n    (The whole thread: agentx clarify show CLR-7-001.)\n  Next: follow the decision.\n")
	assert.Contains(t, text, "    Decision: Shared schema with a tenant column.\n    (The whole thread: agentx clarify show CLR-7-002.)\n")
	assert.NotContains(t, text, "row-level security", "not the whole resolution")
}
