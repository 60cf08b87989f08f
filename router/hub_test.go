package router

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/workflow"
)

var t0 = time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)

// fakeRunner answers from a script of results, recording each invocation.
type fakeRunner struct {
	results []fakeResult
	calls   []Invocation
	during  func(inv Invocation) // runs inside Run, as if while the responder works
}

type fakeResult struct {
	answer string
	err    error
}

func (f *fakeRunner) Run(ctx context.Context, r Responder, inv Invocation) (string, error) {
	f.calls = append(f.calls, inv)
	if f.during != nil {
		f.during(inv)
	}
	if len(f.results) == 0 {
		return "", errors.New("no scripted result")
	}
	res := f.results[0]
	f.results = f.results[1:]
	return res.answer, res.err
}

// newTestHub builds a hub over a fresh workspace with the default workflows
// and config.toml extra appended.
func newTestHub(t *testing.T, extraConfig string) (*Hub, *fakeRunner) {
	t.Helper()
	now := t0
	return newTestHubAt(t, extraConfig, &now)
}

// newTestHubAt is newTestHub with the clock at *now, for the test to move.
func newTestHubAt(t *testing.T, extraConfig string, now *time.Time) (*Hub, *fakeRunner) {
	t.Helper()
	dir, rules := testenv.Workspace(t, extraConfig)
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, func() time.Time { return *now })
	h := New(store, rules, dir)
	fr := &fakeRunner{}
	h.Runner = fr
	h.Warn = func(err error) { t.Errorf("unexpected warning: %v", err) }
	return h, fr
}

func askReq(from, to string) AskRequest {
	return AskRequest{Issue: 42, From: from, To: to, Topic: "Database adapter", Question: "PostgreSQL or SQLite for local dev?"}
}

func TestAskScope(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	tests := []struct {
		name string
		req  AskRequest
		kind RuleKind
		msg  string
	}{
		{"engineer may ask architect", askReq("engineer", "architect"), "", ""},
		{"engineer may ask human", askReq("engineer", "human"), "", ""},
		{"engineer may not ask reviewer", askReq("engineer", "reviewer"), RuleScope, `engineer may not ask reviewer in step "implement" of workflow "feature" (may ask: architect, product-manager)`},
		{"product-manager may ask nobody", askReq("product-manager", "architect"), RuleScope, "(may ask: nobody)"},
		{"bug workflow forbids blocking", AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "t", Question: "q", Workflow: "bug"}, RuleBlocking, `step "fix" of workflow "bug" does not allow blocking questions`},
		{"bug workflow allows non-blocking", AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "t", Question: "q", Workflow: "bug", NonBlocking: true}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := h.Ask(ctx, tt.req)
			if tt.kind == "" {
				require.NoError(t, err)
				assert.Equal(t, ledger.Pending, rec.Status)
				return
			}
			var re *RuleError
			require.True(t, errors.As(err, &re), "got %v", err)
			assert.Equal(t, tt.kind, re.Kind)
			assert.Contains(t, re.Error(), tt.msg)
		})
	}
	_, err := h.Ask(ctx, AskRequest{Issue: 1, From: "ux-designer", To: "architect", Topic: "t", Question: "q", Workflow: "bug"})
	assert.ErrorIs(t, err, workflow.ErrNoStep)

	// a name that nothing in the workspace names is a typo, told the one
	// meant, not refused by a rule as if it were an agent
	for _, tt := range []struct{ from, to, field, advice string }{
		{"enginer", "architect", "from", "did you mean engineer?"},
		{"engineer", "architekt", "to", "did you mean architect?"},
		{"engineer", "zorro", "to", "name one of them; a new agent is named in a workflow step (or config.toml) first"},
	} {
		_, err := h.Ask(ctx, askReq(tt.from, tt.to))
		var in *ledger.InputError
		require.True(t, errors.As(err, &in), "%s asks %s: got %v", tt.from, tt.to, err)
		assert.Equal(t, tt.field, in.Field)
		assert.Equal(t, tt.advice, in.Hint())
		assert.Contains(t, in.Error(), "is not an agent of this workspace (its agents: architect, ")
	}
}

func TestAskRecordsAndSetsStatuses(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	rec, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	assert.Equal(t, "CLR-42-001", rec.ID)
	assert.Equal(t, 42, rec.IssueNumber)
	assert.Equal(t, 1, rec.Round)
	assert.Equal(t, 5, rec.MaxRounds)
	assert.True(t, rec.Blocking)
	assert.Equal(t, t0.Add(30*time.Minute), rec.StaleAfter.Time)
	require.Len(t, rec.Thread, 1)
	assert.Equal(t, ledger.Question, rec.Thread[0].Type)

	m := agentStates(t, h)
	assert.Equal(t, ledger.BlockedClarification, m["engineer#42"].Status)
	assert.Equal(t, "architect", m["engineer#42"].WaitingOn)
	assert.Equal(t, "CLR-42-001", m["engineer#42"].ClarificationID)
	assert.Equal(t, ledger.Clarifying, m["architect#42"].Status)
	assert.Equal(t, "engineer", m["architect#42"].RespondingTo)
	assert.NoFileExists(t, filepath.Join(h.Store.Dir(), ledger.AgentStatusFile), "an ask writes no file shared by issues")

	_, err = h.Answer(ctx, rec.ID, "architect", "SQLite locally, PostgreSQL in CI.")
	require.NoError(t, err)
	m = agentStates(t, h)
	assert.Equal(t, ledger.Working, m["engineer#42"].Status)
	assert.Empty(t, m["engineer#42"].WaitingOn)
	assert.NotContains(t, m, "architect#42", "nothing left for the architect to do")

	evs, err := h.Events.Read(EventFilter{})
	require.NoError(t, err)
	var types []EventType
	for _, e := range evs.Events {
		types = append(types, e.Type)
	}
	assert.Equal(t, []EventType{EventRequested, EventAnswered}, types)
}

func TestLifecycleToEscalationAndHumanResolve(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	req := askReq("architect", "product-manager") // architecture step: 3 rounds
	rec, err := h.Ask(ctx, req)
	require.NoError(t, err)
	require.Equal(t, 3, rec.MaxRounds)

	_, err = h.Followup(ctx, rec.ID, "architect", "too early")
	var te *ledger.TransitionError
	require.True(t, errors.As(err, &te), "a follow-up needs an answer first")

	_, err = h.Answer(ctx, rec.ID, "engineer", "not mine")
	var re *RuleError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, RuleParty, re.Kind)

	for round := 1; round <= 3; round++ {
		rec, err = h.Answer(ctx, rec.ID, "", "answer "+string(rune('0'+round)))
		require.NoError(t, err)
		rec, err = h.Followup(ctx, rec.ID, "", "follow-up "+string(rune('0'+round)))
		require.NoError(t, err)
	}
	assert.Equal(t, ledger.Escalated, rec.Status, "the follow-up past the limit escalates")
	assert.Equal(t, 3, rec.Round)
	esc := rec.Current(ledger.Escalation)
	require.NotNil(t, esc)
	assert.Equal(t, HubAgent, esc.From)
	assert.Contains(t, esc.Body, "ESCALATED: round limit reached (3 of 3) without resolution")
	assert.Contains(t, esc.Body, "  > follow-up 3", "the refused follow-up is the asker's latest position")
	assert.Contains(t, esc.Body, "  > answer 3")
	assert.Contains(t, esc.Body, "agentx clarify resolve CLR-42-001 --body")
	assert.Equal(t, "round limit reached (3 of 3) without resolution", EscalationReason(rec.Clarification))

	_, err = h.Resolve(ctx, rec.ID, "engineer", "")
	require.True(t, errors.As(err, &re), "only the asker or a human resolves")
	rec, err = h.Resolve(ctx, rec.ID, "human", "decision: multi-tenant")
	require.NoError(t, err)
	assert.Equal(t, ledger.Resolved, rec.Status)
	require.NotNil(t, rec.ResolvedAt)
	assert.Equal(t, "decision: multi-tenant", rec.Current(ledger.Resolution).Body)

	_, err = h.Answer(ctx, rec.ID, "", "late")
	require.True(t, errors.As(err, &te), "resolved is final")
}

func TestResponderAnswersAndRetries(t *testing.T) {
	cfg := "[agents.architect]\ncommand = [\"respond\"]\ntimeout = \"5s\"\n"
	t.Run("answers", func(t *testing.T) {
		h, fr := newTestHub(t, cfg)
		fr.results = []fakeResult{{answer: "Repository pattern."}}
		rec, err := h.Ask(context.Background(), askReq("engineer", "architect"))
		require.NoError(t, err)
		assert.Equal(t, ledger.Answered, rec.Status)
		assert.Equal(t, "Repository pattern.", rec.Current(ledger.Answer).Body)
		assert.Equal(t, "architect", rec.Current(ledger.Answer).From)
		require.Len(t, fr.calls, 1)
		assert.Equal(t, "CLR-42-001", fr.calls[0].ClarificationID)
		assert.Contains(t, fr.calls[0].Prompt, "PostgreSQL or SQLite for local dev?")
	})
	t.Run("a failure is retried later, not at once", func(t *testing.T) {
		now := t0
		h, fr := newTestHubAt(t, cfg, &now)
		fr.results = []fakeResult{{err: errors.New("exit 1")}, {answer: "Second time lucky."}}
		rec, err := h.Ask(context.Background(), askReq("engineer", "architect"))
		require.NoError(t, err)
		assert.Equal(t, ledger.Pending, rec.Status)
		assert.Equal(t, OutcomeRetrying, rec.Outcome)
		require.NotNil(t, rec.RetryAt)
		assert.Equal(t, t0.Add(30*time.Second), rec.RetryAt.Time, "retry_delay defaults to 30s")
		assert.Contains(t, rec.Detail, "the architect responder failed (exit 1); it is retried once at 2026-02-26 10:00:30 UTC")
		assert.Len(t, fr.calls, 1, "nothing is retried on the spot")
		m := rec.X.Monitor
		assert.Equal(t, 1, m.Failures)
		assert.Equal(t, 1, m.FailedRound)
		assert.Equal(t, "exit 1", m.Failure)
		assert.Equal(t, []EventType{EventRequested, EventResponderFailed}, eventTypes(t, h, rec.ID))

		e := ledger.EntryOf(42, rec.Clarification)
		assert.False(t, RetryDue(e, t0.Add(29*time.Second)))
		assert.True(t, RetryDue(e, t0.Add(30*time.Second)))
		now = t0.Add(31 * time.Second)
		claimed, err := h.ClaimRetry(context.Background(), rec.ID, ClaimUntil(now, time.Minute), dueGuard)
		require.NoError(t, err)
		assert.True(t, RetryClaimed(ledger.EntryOf(42, claimed.Clarification), now), "claimed: no other process makes it")
		assert.False(t, RetryDue(ledger.EntryOf(42, claimed.Clarification), now))
		assert.True(t, RetryDue(ledger.EntryOf(42, claimed.Clarification), now.Add(2*time.Minute)), "a claim whose claimant died lapses")
		_, err = h.ClaimRetry(context.Background(), rec.ID, ClaimUntil(now, time.Minute), dueGuard)
		var skip *SkippedError
		require.ErrorAs(t, err, &skip, "claimed once")
		res, err := h.Retry(context.Background(), claimed)
		require.NoError(t, err)
		assert.True(t, res.Answered)
		assert.Equal(t, ledger.Answered, res.Record.Status)
		assert.Equal(t, "Second time lucky.", res.Record.Current(ledger.Answer).Body)
		assert.Len(t, fr.calls, 2)
	})
	t.Run("a second failure escalates with the reason", func(t *testing.T) {
		now := t0
		h, fr := newTestHubAt(t, cfg, &now)
		fr.results = []fakeResult{{err: errors.New("boom one")}, {err: errors.New("boom two")}}
		rec, err := h.Ask(context.Background(), askReq("engineer", "architect"))
		require.NoError(t, err)
		require.Equal(t, OutcomeRetrying, rec.Outcome)
		now = t0.Add(time.Minute)
		claimed, err := h.ClaimRetry(context.Background(), rec.ID, ClaimUntil(now, time.Minute), dueGuard)
		require.NoError(t, err)
		res, err := h.Retry(context.Background(), claimed)
		require.NoError(t, err)
		out := res.Record
		assert.Equal(t, ledger.Escalated, out.Status)
		assert.Equal(t, OutcomeEscalated, out.Outcome)
		assert.Equal(t, "the architect responder failed twice: boom two", EscalationReason(out.Clarification))
		assert.Equal(t, 2, out.X.Monitor.Failures)
		m := agentStates(t, h)
		assert.Equal(t, ledger.BlockedClarification, m["engineer#42"].Status, "escalated: the asker waits on a human, as ready says")
		assert.Equal(t, ledger.Human, m["engineer#42"].WaitingOn)
		assert.Equal(t, []EventType{EventRequested, EventResponderFailed, EventResponderFailed, EventEscalated}, eventTypes(t, h, rec.ID))
		assert.False(t, RetryDue(ledger.EntryOf(42, out.Clarification), now.Add(time.Hour)), "no third run")
	})
	t.Run("retry_delay sets the delay", func(t *testing.T) {
		h, fr := newTestHub(t, cfg+"retry_delay = \"2m\"\n")
		fr.results = []fakeResult{{err: errors.New("exit 1")}}
		rec, err := h.Ask(context.Background(), askReq("engineer", "architect"))
		require.NoError(t, err)
		assert.Equal(t, t0.Add(2*time.Minute), rec.RetryAt.Time)
	})
	t.Run("follow-up runs the responder again", func(t *testing.T) {
		h, fr := newTestHub(t, cfg)
		fr.results = []fakeResult{{answer: "A1"}, {answer: "A2"}}
		rec, err := h.Ask(context.Background(), askReq("engineer", "architect"))
		require.NoError(t, err)
		rec, err = h.Followup(context.Background(), rec.ID, "engineer", "And in CI?")
		require.NoError(t, err)
		assert.Equal(t, ledger.Answered, rec.Status)
		assert.Equal(t, 2, rec.Round)
		assert.Equal(t, "A2", rec.Current(ledger.Answer).Body)
		assert.Equal(t, 2, fr.calls[1].Round)
		assert.Contains(t, fr.calls[1].Prompt, "A1", "the prompt carries the thread so far")
	})
}

// dueGuard claims a scheduled retry only when it is due, as the monitor does.
func dueGuard(l *ledger.Ledger, c *ledger.Clarification, now time.Time) string {
	if !RetryDue(ledger.EntryOf(l.IssueNumber, c), now) {
		return "not due"
	}
	return ""
}

func eventTypes(t *testing.T, h *Hub, id string) []EventType {
	t.Helper()
	evs, err := h.Events.Read(EventFilter{ID: id})
	require.NoError(t, err)
	var out []EventType
	for _, e := range evs.Events {
		out = append(out, e.Type)
	}
	return out
}

func TestQuestionCap(t *testing.T) {
	h, _ := newTestHub(t, "")
	h.Rules().Config.MaxQuestions = 2
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		_, err := h.Ask(ctx, askReq("engineer", "architect"))
		require.NoError(t, err)
	}
	_, err := h.Ask(ctx, askReq("engineer", "human"))
	var re *RuleError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, RuleCap, re.Kind)
	assert.Contains(t, re.Error(), "no more questions in this run: proceed on your best judgment; the next run on the issue (its next hook start) may ask again")
	_, err = h.Ask(ctx, askReq("architect", "product-manager"))
	assert.NoError(t, err, "the cap is per asker")
}

// TestQuestionCapPerRun proves the cap counts one run's questions (since
// the asker's last hook on the issue), not those it cancelled; before, it
// counted every question the agent ever asked on the issue, cancelled too.
func TestQuestionCapPerRun(t *testing.T) {
	ctx := context.Background()
	type step struct {
		do   string // "ask", "cancel" (the last question), "start", "finish", "later"
		fail bool   // an ask refused by the cap
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"three then refused", []step{{"ask", false}, {"ask", false}, {"ask", false}, {"ask", true}}},
		{"a cancelled one does not count", []step{{"ask", false}, {"ask", false}, {"cancel", false}, {"ask", false}, {"ask", false}, {"ask", true}}},
		{"a new run asks again", []step{{"start", false}, {"later", false}, {"ask", false}, {"ask", false}, {"ask", false}, {"ask", true},
			{"later", false}, {"start", false}, {"later", false}, {"ask", false}, {"ask", false}, {"ask", false}, {"ask", true}}},
		{"questions before the first hook are the first run's", []step{{"ask", false}, {"ask", false}, {"later", false}, {"start", false}, {"later", false},
			{"ask", false}, {"ask", false}, {"ask", false}, {"ask", true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := t0
			h, _ := newTestHubAt(t, "", &now)
			h.Rules().Config.MaxQuestions = 3
			var last string
			for i, s := range tt.steps {
				var err error
				switch s.do {
				case "ask":
					var rec Record
					rec, err = h.Ask(ctx, askReq("engineer", "architect"))
					if err == nil {
						last = rec.Clarification.ID
					}
				case "cancel":
					_, err = h.Cancel(ctx, last, "engineer")
				case "start":
					_, err = h.Hook(ctx, HookStart, "engineer", 42)
				case "later":
					now = now.Add(time.Minute)
				}
				if !s.fail {
					require.NoError(t, err, "step %d (%s)", i, s.do)
					continue
				}
				var re *RuleError
				require.True(t, errors.As(err, &re), "step %d: want the cap, got %v", i, err)
				assert.Equal(t, RuleCap, re.Kind)
				assert.Equal(t, 3, re.Asked)
			}
		})
	}
}

func TestCancelAbandonEscalate(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	a, _ := h.Ask(ctx, askReq("engineer", "architect"))
	_, err := h.Cancel(ctx, a.ID, "architect")
	var re *RuleError
	require.True(t, errors.As(err, &re), "only the asker cancels")
	rec, err := h.Cancel(ctx, a.ID, "engineer")
	require.NoError(t, err)
	assert.Equal(t, ledger.Abandoned, rec.Status)
	assert.Equal(t, "Abandoned: cancelled", rec.Current(ledger.Resolution).Body)

	b, _ := h.Ask(ctx, askReq("engineer", "architect"))
	rec, err = h.Escalate(ctx, b.ID, "needs a product call")
	require.NoError(t, err)
	assert.Equal(t, ledger.Escalated, rec.Status)
	assert.True(t, strings.HasPrefix(rec.Current(ledger.Escalation).Body, "ESCALATED: needs a product call\nTopic: Database adapter (issue #42, CLR-42-002)"))
	assert.Contains(t, rec.Current(ledger.Escalation).Body, "architect (asked) has not answered.")
	_, err = h.Abandon(ctx, b.ID, "", "")
	var te *ledger.TransitionError
	assert.True(t, errors.As(err, &te), "escalated only resolves")
}

func TestWait(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	rec, _ := h.Ask(ctx, askReq("engineer", "architect"))
	_, err := h.Wait(ctx, rec.ID, 120*time.Millisecond)
	var we *WaitTimeoutError
	require.True(t, errors.As(err, &we))
	assert.Contains(t, we.Hint(), Guidance)

	go func() {
		time.Sleep(100 * time.Millisecond)
		_, _ = h.Answer(context.Background(), rec.ID, "architect", "Use SQLite.")
	}()
	got, err := h.Wait(ctx, rec.ID, 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, ledger.Answered, got.Status)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	rec2, _ := h.Ask(ctx, askReq("engineer", "architect"))
	_, err = h.Wait(cctx, rec2.ID, time.Minute)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestAssumeAndOptions(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	req := askReq("engineer", "human")
	req.Options = []string{"ship Friday", "ship Monday"}
	rec, err := h.Ask(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, []string{"ship Friday", "ship Monday"}, rec.X.Options)
	assert.Equal(t, "feature", rec.X.Workflow)
	assert.Equal(t, "implement", rec.X.Step)

	_, err = h.Assume(ctx, rec.ID, "architect", "x")
	var re *RuleError
	require.True(t, errors.As(err, &re), "only the asker records its assumption")
	rec, err = h.Assume(ctx, rec.ID, "", "Shipping Friday")
	require.NoError(t, err)
	require.Len(t, rec.X.Assumptions, 1)
	assert.Equal(t, "Shipping Friday", rec.X.Assumptions[0].Body)
	assert.Equal(t, 1, rec.X.Assumptions[0].Round)
	assert.Equal(t, ledger.Pending, rec.Status, "an assumption does not change the status")
}

// agentStates is AgentStates keyed "agent#issue".
func agentStates(t *testing.T, h *Hub) map[string]*ledger.AgentStatus {
	t.Helper()
	rows, skipped, err := h.AgentStates()
	require.NoError(t, err)
	require.Empty(t, skipped)
	m := map[string]*ledger.AgentStatus{}
	for _, r := range rows {
		m[fmt.Sprintf("%s#%d", r.Agent, *r.Issue)] = r.AgentStatus
	}
	return m
}

// TestFailureSupersededWhileItRuns: a responder fails after someone
// answered: nothing is recorded of the failure, no retry is scheduled, and
// the asker gets the record as it stands.
func TestFailureSupersededWhileItRuns(t *testing.T) {
	h, fr := newTestHub(t, "[agents.architect]\ncommand = [\"respond\"]\n")
	fr.results = []fakeResult{{err: errors.New("exit 1")}}
	fr.during = func(inv Invocation) {
		_, err := h.Answer(context.Background(), inv.ClarificationID, ledger.Human, "Decided: SQLite.")
		require.NoError(t, err)
	}
	rec, err := h.Ask(context.Background(), askReq("engineer", "architect"))
	require.NoError(t, err)
	assert.Equal(t, OutcomeSuperseded, rec.Outcome)
	assert.Equal(t, ledger.Answered, rec.Status)
	assert.Equal(t, "the architect responder failed (exit 1), but CLR-42-001 was answered while its responder ran; that was not recorded", rec.Detail)
	assert.Nil(t, rec.RetryAt)
	assert.Nil(t, rec.X.Monitor, "no failure recorded")
	assert.Equal(t, []EventType{EventRequested, EventAnswered, EventSuperseded}, eventTypes(t, h, rec.ID))
}

// TestDetachedResponderRetriesItself: with Detach set (agentx mcp), the
// responder runs off the caller's path; when it fails, the long-lived
// process makes the one retry itself once it is due.
func TestDetachedResponderRetriesItself(t *testing.T) {
	dir, rules := testenv.Workspace(t, "[agents.architect]\ncommand = [\"respond\"]\nretry_delay = \"100ms\"\n")
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, time.Now)
	h := New(store, rules, dir)
	fr := &lockedRunner{fakeRunner: fakeRunner{results: []fakeResult{{err: errors.New("HTTP 503")}, {answer: "Kafka."}}}}
	h.Runner = fr
	h.Warn = func(err error) { t.Errorf("unexpected warning: %v", err) }
	done := make(chan struct{})
	h.Detach = func(run func(ctx context.Context)) {
		go func() {
			defer close(done)
			run(context.Background())
		}()
	}
	rec, err := h.Ask(context.Background(), askReq("engineer", "architect"))
	require.NoError(t, err)
	assert.Equal(t, OutcomePending, rec.Outcome, "the responder runs in the background")
	got, err := h.Wait(context.Background(), rec.ID, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, ledger.Answered, got.Status)
	assert.Equal(t, "Kafka.", got.Current(ledger.Answer).Body)
	<-done
	assert.Equal(t, 2, fr.count())
	assert.Equal(t, 1, got.X.Monitor.Retries)
	assert.Equal(t, []EventType{EventRequested, EventResponderFailed, EventAnswered}, eventTypes(t, h, rec.ID))
}

// lockedRunner is a fakeRunner safe to call from another goroutine.
type lockedRunner struct {
	mu sync.Mutex
	fakeRunner
}

func (l *lockedRunner) Run(ctx context.Context, r Responder, inv Invocation) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fakeRunner.Run(ctx, r, inv)
}

func (l *lockedRunner) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}
