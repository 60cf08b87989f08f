package monitor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// fakeRunner stands in for responders: it records every run.
type fakeRunner struct {
	mu     sync.Mutex
	calls  []string
	answer string
	err    error
	delay  time.Duration
}

func (f *fakeRunner) Run(ctx context.Context, r router.Responder, inv router.Invocation) (string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, inv.ClarificationID)
	f.mu.Unlock()
	time.Sleep(f.delay)
	return f.answer, f.err
}

func (f *fakeRunner) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// world is a workspace on disk with a movable clock.
type world struct {
	t      *testing.T
	dir    string
	mu     sync.Mutex
	now    time.Time
	rules  *workflow.Set
	runner *fakeRunner
}

// openWorkflow lets every agent ask every other, so that questions can
// wait on each other in cycles.
const openWorkflow = `[workflow]
name = "open"
[[steps]]
id = "prd"
agent = "product-manager"
can_clarify = ["architect", "engineer", "reviewer"]
[[steps]]
id = "design"
agent = "architect"
can_clarify = ["product-manager", "engineer", "reviewer"]
[[steps]]
id = "build"
agent = "engineer"
can_clarify = ["product-manager", "architect", "reviewer"]
[[steps]]
id = "review"
agent = "reviewer"
can_clarify = ["product-manager", "architect", "engineer"]
`

// newWorld writes the default workspace with the "open" workflow as the
// default; topKeys ("key = value" lines) replace the defaults in
// config.toml, tables are appended.
func newWorld(t *testing.T, topKeys, tables string) *world {
	t.Helper()
	w := &world{t: t, dir: t.TempDir(), now: t0, runner: &fakeRunner{answer: "Use the repository pattern."}}
	files := workflow.DefaultFiles()
	files["workflows/open.toml"] = []byte(openWorkflow)
	config := strings.Replace(string(files["config.toml"]), `default_workflow = "feature"`, `default_workflow = "open"`, 1)
	for _, kv := range strings.Split(topKeys, "\n") {
		if k, _, ok := strings.Cut(kv, " = "); ok {
			config = regexp.MustCompile(`(?m)^`+k+` = .*$`).ReplaceAllLiteralString(config, kv)
		}
	}
	files["config.toml"] = []byte(config + "\n" + tables + "\n")
	w.rules = testenv.WriteWorkspace(t, w.dir, files)
	return w
}

func (w *world) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *world) set(t time.Time) {
	w.mu.Lock()
	w.now = t
	w.mu.Unlock()
}

// hub is a fresh hub over the workspace, as a new process would build one.
func (w *world) hub() *router.Hub {
	store := ledger.NewStore(filepath.Join(w.dir, ".agentx", "state"), lock.Options{Wait: time.Minute}, w.clock)
	h := router.New(store, w.rules, w.dir)
	h.Runner = w.runner
	h.Warn = func(err error) { w.t.Errorf("unexpected warning: %v", err) }
	return h
}

// responder gives agent a responder from now on.
func (w *world) responder(agent string) {
	w.rules.Config.Agents[agent] = workflow.AgentConfig{Command: []string{"./" + agent + ".sh"}}
}

func (w *world) ask(issue int, from, to, question string) string {
	w.t.Helper()
	rec, err := w.hub().Ask(context.Background(), router.AskRequest{Issue: issue, From: from, To: to, Topic: "Topic", Question: question})
	require.NoError(w.t, err)
	return rec.ID
}

func (w *world) get(id string) *ledger.Clarification {
	w.t.Helper()
	c, err := w.hub().Store.Get(id)
	require.NoError(w.t, err)
	return c
}

func (w *world) run(hook *Hook) *Report {
	return New(w.hub()).Run(context.Background(), hook)
}

func (w *world) events(t router.EventType, id string) int {
	w.t.Helper()
	res, err := w.hub().Events.Read(router.EventFilter{ID: id})
	require.NoError(w.t, err)
	n := 0
	for _, e := range res.Events {
		if e.Type == t {
			n++
		}
	}
	return n
}

func entries(c *ledger.Clarification, t ledger.EntryType) int {
	n := 0
	for _, e := range c.Thread {
		if e.Type == t {
			n++
		}
	}
	return n
}

func results(r *Report) []string {
	out := []string{}
	for _, f := range r.Findings {
		out = append(out, f.ID+" "+string(f.Action)+" "+string(f.Result))
	}
	return out
}

// TestRunStaleRetryAnswers: an overdue question is marked stale and its
// responder run again, which answers it.
func TestRunStaleRetryAnswers(t *testing.T) {
	w := newWorld(t, "", "")
	id := w.ask(42, "engineer", "architect", "PostgreSQL or SQLite?")
	w.responder("architect")

	w.set(at(29))
	assert.Empty(t, w.run(nil).Findings, "fresh pending is not stale")

	w.set(at(31))
	r := w.run(nil)
	require.Equal(t, []string{id + " mark-stale done"}, results(r))
	assert.Equal(t, "marked stale; re-ran the architect responder: the architect responder answered", r.Findings[0].Detail)
	c := w.get(id)
	assert.Equal(t, ledger.Answered, c.Status)
	assert.Equal(t, "Use the repository pattern.", c.Current(ledger.Answer).Body)
	require.NotNil(t, c.X.Monitor)
	assert.Equal(t, 1, c.X.Monitor.Retries)
	assert.Equal(t, at(31), c.X.Monitor.StaleAt.Time)
	assert.Equal(t, 1, w.runner.count())
	assert.Equal(t, 1, w.events(router.EventStale, id))
	assert.Equal(t, 1, w.events(router.EventAnswered, id))

	assert.Empty(t, w.run(nil).Findings, "answered: nothing more to do")
	assert.Equal(t, 1, w.runner.count())
}

// TestRunStaleRetryFailsThenEscalates: the retry fails, the question stays
// stale, nothing happens on the next runs, and one SLA after it went stale
// it is escalated — once.
func TestRunStaleRetryFailsThenEscalates(t *testing.T) {
	w := newWorld(t, "", "")
	id := w.ask(42, "engineer", "architect", "PostgreSQL or SQLite?")
	w.responder("architect")
	w.runner.err = errors.New("model unavailable")

	w.set(at(31))
	r := w.run(nil)
	require.Equal(t, []string{id + " mark-stale done"}, results(r))
	assert.Contains(t, r.Findings[0].Detail, "re-ran the architect responder: it failed (model unavailable); it stays stale and escalates at 2026-02-26 11:01")
	assert.Equal(t, ledger.Stale, w.get(id).Status)

	path := w.hub().Store.Path(42)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, now := range []time.Time{at(31), at(45), at(60)} {
		w.set(now)
		r = w.run(nil)
		assert.Empty(t, r.Findings, "idempotent at %s", now)
		require.Len(t, r.Waiting, 1)
		assert.Equal(t, at(61), r.Waiting[0].EscalatesAt.Time)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "a run with nothing to do writes nothing")
	assert.Equal(t, 1, w.runner.count(), "one retry only")

	w.set(at(61))
	r = w.run(nil)
	require.Equal(t, []string{id + " escalate done"}, results(r))
	c := w.get(id)
	assert.Equal(t, ledger.Escalated, c.Status)
	assert.Contains(t, router.EscalationReason(c), "stale: still no answer from architect one SLA (30m0s) after it went stale at 2026-02-26 10:31")
	assert.Empty(t, w.run(nil).Findings)
	assert.Equal(t, 1, entries(c, ledger.Escalation))
	assert.Equal(t, 1, w.events(router.EventEscalated, id))
	assert.Equal(t, 1, w.runner.count())
}

// TestRunHumanSLA: a question to a human is stale on human_sla_minutes, not
// the agent SLA; the retry re-sends the notification.
func TestRunHumanSLA(t *testing.T) {
	w := newWorld(t, "human_sla_minutes = 120", "[notify]\ncommand = [\"./notify.sh\"]")
	require.NoError(t, os.WriteFile(filepath.Join(w.dir, "notify.sh"), []byte("#!/bin/sh\ncat >> notified.jsonl\n"), 0o755))
	id := w.ask(42, "engineer", ledger.Human, "Ship on Friday?")
	assert.Equal(t, at(120), w.get(id).StaleAfter.Time)

	w.set(at(31))
	assert.Empty(t, w.run(nil).Findings)
	w.set(at(121))
	r := w.run(nil)
	require.Equal(t, []string{id + " mark-stale done"}, results(r))
	assert.Contains(t, r.Findings[0].Detail, "re-sent the notification: notified the human again")
	sent, err := os.ReadFile(filepath.Join(w.dir, "notified.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(sent), `"kind":"question"`), "asked, then reminded")
	w.set(at(241))
	assert.Equal(t, []string{id + " escalate done"}, results(w.run(nil)))
}

// TestRunDeadlockAndStuck: the engineer's half of a deadlock is escalated,
// the architect's continues; a repeated question is escalated as stuck.
func TestRunDeadlockAndStuck(t *testing.T) {
	w := newWorld(t, "", "")
	eng := w.ask(42, "engineer", "architect", "Which queue should the importer use?")
	arch := w.ask(42, "architect", "product-manager", "What is the retention period?")
	pm := w.ask(42, "product-manager", "engineer", "When can the importer ship?")
	r := w.run(nil)
	require.Equal(t, []string{eng + " escalate done"}, results(r))
	assert.Equal(t, []string{"engineer", "architect", "product-manager"}, r.Findings[0].Cycle)
	assert.Contains(t, router.EscalationReason(w.get(eng)), "deadlock: engineer waits on architect")
	assert.Equal(t, ledger.Pending, w.get(arch).Status)
	assert.Equal(t, ledger.Pending, w.get(pm).Status)

	id := w.ask(43, "engineer", "architect", "Should the importer retry failed rows?")
	_, err := w.hub().Answer(context.Background(), id, "architect", "It depends.")
	require.NoError(t, err)
	_, err = w.hub().Followup(context.Background(), id, "engineer", "Should the importer retry the failed rows?")
	require.NoError(t, err)
	r = w.run(nil)
	require.Equal(t, []string{id + " escalate done"}, results(r))
	assert.Equal(t, KindStuck, r.Findings[0].Kind)
	assert.Contains(t, router.EscalationReason(w.get(id)), "stuck: round 2 asks what round 1 asked")
	assert.Empty(t, w.run(nil).Findings)
}

// TestRunHooks: a start closes nothing, on any issue; a finish abandons the
// agent's unanswered questions on that issue and resolves its answered ones
// with their last answer; its questions elsewhere stay.
func TestRunHooks(t *testing.T) {
	w := newWorld(t, "", "")
	pending := w.ask(42, "engineer", "architect", "Which queue?")
	answered := w.ask(42, "engineer", "product-manager", "Which plan tiers?")
	_, err := w.hub().Answer(context.Background(), answered, "product-manager", "Free and Pro.")
	require.NoError(t, err)
	other := w.ask(44, "engineer", "architect", "Which cache?")

	r := w.run(&Hook{PhaseStart, "engineer", 42})
	require.Empty(t, results(r))
	r = w.run(&Hook{PhaseStart, "engineer", 44})
	require.Empty(t, results(r))

	r = w.run(&Hook{PhaseFinish, "engineer", 42})
	require.Equal(t, []string{pending + " abandon done", answered + " resolve done"}, results(r))
	c := w.get(answered)
	assert.Equal(t, ledger.Resolved, c.Status)
	assert.Equal(t, router.HubAgent, c.Current(ledger.Resolution).From)
	assert.Contains(t, c.Current(ledger.Resolution).Body, "The last answer stands: Free and Pro.")
	assert.Equal(t, 1, w.events(router.EventResolved, answered))
	assert.Equal(t, ledger.Pending, w.get(other).Status, "the question on #44 is not #42's engineer's to close")
	assert.Empty(t, w.run(&Hook{PhaseFinish, "engineer", 42}).Findings)
}

// TestGuardSkipsWhatMovedOn: a decision taken on a snapshot is re-checked
// under the lock; if the clarification moved on meanwhile, nothing is written
// for it, while the other moves on its issue, made in the same update, go
// ahead.
func TestGuardSkipsWhatMovedOn(t *testing.T) {
	w := newWorld(t, "", "")
	id := w.ask(42, "engineer", "architect", "Which queue?")
	other := w.ask(42, "engineer", "architect", "Which region?")
	w.set(at(61))
	m := New(w.hub())
	ix, _, err := m.Hub.Store.ReadIndex()
	require.NoError(t, err)
	fs := Detect(ix.Entries(), at(61), m.Config, nil)
	require.Equal(t, []summary{{id, KindStale, ActMarkStale}, {other, KindStale, ActMarkStale}}, summarize(fs))

	_, err = w.hub().Answer(context.Background(), id, "architect", "Kafka.")
	require.NoError(t, err)
	m.act(context.Background(), fs, nil, time.Time{})
	assert.Equal(t, Skipped, fs[0].Result)
	assert.Contains(t, fs[0].Detail, "no longer applies: "+id+" is answered now")
	assert.Equal(t, ledger.Answered, w.get(id).Status)
	assert.Equal(t, 0, w.events(router.EventStale, id))
	assert.Equal(t, Done, fs[1].Result)
	assert.Contains(t, fs[1].Detail, "marked stale")
	assert.Equal(t, ledger.Stale, w.get(other).Status)
	assert.Equal(t, 1, w.events(router.EventStale, other))
}

// TestRunConcurrentMonitorsActOnce: many monitors at once (each its own hub,
// as separate processes would have) retry a stale question once and
// escalate a deadlock and an overdue stale question once each.
func TestRunConcurrentMonitorsActOnce(t *testing.T) {
	w := newWorld(t, "", "")
	stale := w.ask(1, "engineer", "architect", "Which queue?")
	overdue := w.ask(2, "engineer", "product-manager", "Which tiers?")
	dl1 := w.ask(3, "engineer", "architect", "Which schema?")
	dl2 := w.ask(3, "architect", "engineer", "Which ORM?")
	w.set(at(31))
	err := w.hub().Apply(context.Background(), 2, []router.Move{{ID: overdue, To: ledger.Stale, Reason: "stale: test"}})[0].Err // stale since 10:31, no responder
	require.NoError(t, err)
	w.responder("architect")
	w.runner.err = errors.New("model unavailable")
	w.runner.delay = 20 * time.Millisecond
	w.set(at(62))

	const n = 12
	var wg sync.WaitGroup
	reports := make([]*Report, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reports[i] = w.run(nil)
		}()
	}
	wg.Wait()
	done := map[string]int{}
	ran := 0
	for _, r := range reports {
		require.Empty(t, r.Problems)
		for _, f := range r.Findings {
			require.NotEqual(t, Failed, f.Result, "%+v", f)
			if f.Result == Done {
				done[f.ID+" "+string(f.Action)]++
			}
			if strings.Contains(f.Detail, "re-ran the architect responder") {
				ran++
			}
		}
	}
	// The monitor that marked it stale usually makes the retry too, but
	// one that read the index just after may claim it first.
	assert.LessOrEqual(t, done[stale+" retry"], 1)
	delete(done, stale+" retry")
	assert.Equal(t, map[string]int{stale + " mark-stale": 1, overdue + " escalate": 1, dl1 + " escalate": 1, dl2 + " mark-stale": 1}, done)
	assert.Equal(t, 1, ran, "one monitor ran the retry")
	assert.Equal(t, 1, w.runner.count(), "the stale question was retried once")
	for _, id := range []string{overdue, dl1} {
		assert.Equal(t, 1, entries(w.get(id), ledger.Escalation), id)
		assert.Equal(t, 1, w.events(router.EventEscalated, id), id)
	}
	assert.Equal(t, 1, w.events(router.EventStale, stale))
	assert.Equal(t, ledger.Stale, w.get(dl2).Status, "the architect's half of the deadlock continues, and is overdue")
	assert.Equal(t, 1, w.events(router.EventStale, dl2))
}

// TestRunReportsCorruptLedgerAndGoesOn: a ledger that no longer parses is
// reported with its file; the others are still handled.
func TestRunReportsCorruptLedgerAndGoesOn(t *testing.T) {
	w := newWorld(t, "", "")
	w.ask(1, "engineer", "architect", "Which queue?")
	good := w.ask(2, "engineer", "architect", "Which cache?")
	path := w.hub().Store.Path(1)
	require.NoError(t, os.WriteFile(path, []byte(`{"issueNumber": 1, "clarifications": [`), 0o644))
	w.set(at(31))
	r := w.run(nil)
	assert.Equal(t, []string{good + " mark-stale done"}, results(r))
	require.Len(t, r.Problems, 1, "the index file no longer matches the ledger, which is read and found corrupt")
	assert.Equal(t, path, r.Problems[0].File)
	assert.Equal(t, ledger.Stale, w.get(good).Status)

	// without the index the corrupt ledger is found while rebuilding it
	require.NoError(t, os.RemoveAll(w.hub().Store.IndexPath()))
	r = w.run(nil)
	assert.Equal(t, "built from the ledgers", r.Index)
	require.Len(t, r.Problems, 1)
	assert.Equal(t, path, r.Problems[0].File)
}

// TestRunDryRunChangesNothing: --dry-run reports what it would do and
// writes nothing, not even a missing index.
func TestRunDryRunChangesNothing(t *testing.T) {
	w := newWorld(t, "", "")
	id := w.ask(1, "engineer", "architect", "Which queue?")
	h := w.hub()
	require.NoError(t, os.RemoveAll(h.Store.IndexPath()))
	before, err := os.ReadFile(h.Store.Path(1))
	require.NoError(t, err)
	w.set(at(31))
	m := New(h)
	m.DryRun = true
	r := m.Run(context.Background(), nil)
	assert.Equal(t, []string{id + " mark-stale planned"}, results(r))
	assert.Contains(t, r.Index, "not built: scanned the ledgers")
	after, err := os.ReadFile(h.Store.Path(1))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
	assert.NoFileExists(t, h.Store.IndexPath())
}

// TestRunHealsAnIndexLeftBehind: the index file still says pending (a
// writer died between its index write and its ledger rename, or another
// tool rewrote the ledger) but the ledger says answered. Its stamp no
// longer matches the ledger, so the ledger is read instead: no decision is
// taken on the stale entry, and the file is made afresh from the ledger
// read (SyncIndex then finds it in step).
func TestRunHealsAnIndexLeftBehind(t *testing.T) {
	w := newWorld(t, "", "")
	id := w.ask(42, "engineer", "architect", "Which queue?")
	h := w.hub()
	behind, err := os.ReadFile(h.Store.IssueIndexPath(42))
	require.NoError(t, err)
	_, err = h.Answer(context.Background(), id, "architect", "Kafka.")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(h.Store.IssueIndexPath(42), behind, 0o644))

	w.set(at(31))
	r := w.run(nil)
	assert.Empty(t, r.Findings, "the stale index entry is not trusted")
	assert.Equal(t, ledger.Answered, w.get(id).Status)
	healed, err := os.ReadFile(h.Store.IssueIndexPath(42))
	require.NoError(t, err)
	assert.NotEqual(t, string(behind), string(healed))
	assert.Contains(t, string(healed), `"answered"`)
	changed, err := h.Store.SyncIndex(context.Background(), 42)
	require.NoError(t, err)
	assert.False(t, changed, "already in step")
}
