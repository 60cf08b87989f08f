package evaluate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// TestGateCycle drives Gate.Finish through a whole cycle with a scripted
// check: NEEDS_REVISION sent back while revisions remain, the escalation
// after max_revisions, no checks while a person has not settled it, a new
// cycle once settled, and PASS.
func TestGateCycle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wfDir := filepath.Join(dir, ".agentx", "workflows")
	require.NoError(t, os.MkdirAll(wfDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wfDir, "feature.toml"), []byte(`[[steps]]
id = "implement"
agent = "engineer"
max_revisions = 2

[[steps.evaluate]]
name = "tests"
command = ["go", "test", "./..."]
`), 0o644))
	rules, err := workflow.Load(filepath.Join(dir, ".agentx"))
	require.NoError(t, err)
	w, err := rules.Workflow("feature")
	require.NoError(t, err)
	s := w.Step("implement")
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, func() time.Time { return time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC) })
	hub := router.New(store, rules, dir)

	exits := []int{} // the check's exit codes, one per run
	runs := 0
	g := &Gate{Hub: hub, Runner: Runner{Dir: dir, Store: store,
		Run: func(ctx context.Context, argv []string, dir string, env []string, stdin []byte, timeout time.Duration) router.ProcessResult {
			require.Less(t, runs, len(exits), "the check ran more often than scripted")
			code := exits[runs]
			runs++
			if code == 0 {
				return router.ProcessResult{Stdout: []byte("ok\n"), ExitCode: 0}
			}
			return router.ProcessResult{Stdout: []byte("FAIL: TestParse: empty input\n"), ExitCode: code}
		}}}
	finish := func() *Outcome {
		t.Helper()
		out, err := g.Finish(ctx, 42, "engineer", w, s)
		require.NoError(t, err)
		return out
	}

	// attempts 1 and 2 need revision: sent back, with the feedback
	exits = []int{1, 1, 1, 1, 0}
	for i := 1; i <= 2; i++ {
		out := finish()
		assert.Equal(t, OutcomeRevise, out.Result, "attempt %d", i)
		require.NotNil(t, out.Attempt)
		assert.Equal(t, NeedsRevision, out.Attempt.Verdict)
		assert.Equal(t, i, out.Attempt.Attempt)
		assert.Equal(t, 3, out.Attempt.MaxAttempts)
		assert.Contains(t, out.Request, "FAIL: TestParse: empty input")
		assert.False(t, out.Done())
	}

	// attempt 3, past max_revisions: escalated to a person
	out := finish()
	assert.Equal(t, OutcomeEscalated, out.Result)
	require.NotEmpty(t, out.Escalation)
	c, err := store.Get(out.Escalation)
	require.NoError(t, err)
	assert.Equal(t, ledger.Escalated, c.Status)
	assert.Equal(t, "engineer", c.From)
	assert.Equal(t, ledger.Human, c.To)
	assert.Contains(t, router.EscalationReason(c), "did not pass in 3 attempts (max_revisions = 2)")

	// while the person has not settled it, no check runs
	before := runs
	waiting := finish()
	assert.Equal(t, ResultWaiting, waiting.Result)
	assert.Equal(t, out.Escalation, waiting.Escalation)
	assert.Equal(t, before, runs, "no checks while the escalation is open")

	// settled: a new cycle starts at attempt 1
	_, err = hub.Resolve(ctx, out.Escalation, ledger.Human, "decision: handle the empty input")
	require.NoError(t, err)
	out = finish()
	assert.Equal(t, OutcomeRevise, out.Result)
	assert.Equal(t, 1, out.Attempt.Attempt, "a new cycle")

	// and passing ends it: the step is done
	out = finish()
	assert.Equal(t, OutcomeDone, out.Result)
	assert.True(t, out.Done())
	assert.Equal(t, Pass, out.Attempt.Verdict)
	assert.Equal(t, 2, out.Attempt.Attempt)

	rec, err := Read(store, 42)
	require.NoError(t, err)
	require.Len(t, rec.Attempts, 5, "every attempt recorded, the waiting finish not")
	ids := []string{}
	for _, a := range rec.Attempts {
		ids = append(ids, a.ID+" "+a.Outcome)
	}
	assert.Equal(t, []string{"EVAL-42-1 revise", "EVAL-42-2 revise", "EVAL-42-3 escalated", "EVAL-42-4 revise", "EVAL-42-5 done"}, ids)
}

// TestGateHardFail: a check's fail exit code escalates at once, without a
// revision.
func TestGateHardFail(t *testing.T) {
	dir := t.TempDir()
	wfDir := filepath.Join(dir, ".agentx", "workflows")
	require.NoError(t, os.MkdirAll(wfDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wfDir, "feature.toml"), []byte("[[steps]]\nid = \"implement\"\nagent = \"engineer\"\n\n[[steps.evaluate]]\nname = \"build\"\ncommand = [\"make\"]\nfail_exit_codes = [3]\n"), 0o644))
	rules, err := workflow.Load(filepath.Join(dir, ".agentx"))
	require.NoError(t, err)
	w, _ := rules.Workflow("feature")
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, time.Now)
	g := &Gate{Hub: router.New(store, rules, dir), Runner: Runner{Dir: dir, Store: store,
		Run: func(context.Context, []string, string, []string, []byte, time.Duration) router.ProcessResult {
			return router.ProcessResult{Stdout: []byte("no Makefile\n"), ExitCode: 3}
		}}}
	out, err := g.Finish(context.Background(), 7, "engineer", w, w.Step("implement"))
	require.NoError(t, err)
	assert.Equal(t, OutcomeEscalated, out.Result)
	assert.Equal(t, Fail, out.Attempt.Verdict)
	assert.Equal(t, 1, out.Attempt.Attempt)
}
