package router_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/gate/evaluate"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// TestReadySentBack: work the supervisor gate sent back for revision holds
// its issue up through the hub itself, with no clarification open on it,
// for every caller of Hub.Ready and Hub.Blockers (not only the command
// line's ready): the one rule lives in router.
func TestReadySentBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wfDir := filepath.Join(dir, ".agentx", "workflows")
	require.NoError(t, os.MkdirAll(wfDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wfDir, "feature.toml"), []byte("[[steps]]\nid = \"implement\"\nagent = \"engineer\"\nmax_revisions = 2\n\n[[steps.evaluate]]\nname = \"tests\"\ncommand = [\"go\", \"test\", \"./...\"]\n"), 0o644))
	rules, err := workflow.Load(filepath.Join(dir, ".agentx"))
	require.NoError(t, err)
	w, err := rules.Workflow("feature")
	require.NoError(t, err)
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, func() time.Time { return time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC) })
	hub := router.New(store, rules, dir)

	n := 42
	rs, _, err := hub.Ready(&n)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, router.StateReady, rs[0].State, "nothing sent back yet")

	g := &evaluate.Gate{Hub: hub, Runner: evaluate.Runner{Dir: dir, Store: store,
		Run: func(context.Context, []string, string, []string, []byte, time.Duration) router.ProcessResult {
			return router.ProcessResult{Stdout: []byte("FAIL: TestParse\n"), ExitCode: 1}
		}}}
	out, err := g.Finish(ctx, n, "engineer", w, w.Step("implement"))
	require.NoError(t, err)
	require.Equal(t, evaluate.OutcomeRevise, out.Result)

	rs, _, err = hub.Ready(&n)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, router.StateBlocked, rs[0].State, "sent back: not ready")
	assert.Equal(t, []string{out.Attempt.ID}, rs[0].Blocked)
	b, ok := rs[0].Cause()
	require.True(t, ok)
	assert.Equal(t, router.BlockSentBack, b.Rule)

	all, _, err := hub.Ready(nil)
	require.NoError(t, err)
	require.Len(t, all, 1, "an issue with no open clarification is listed when its work was sent back")
	assert.Equal(t, n, all[0].Issue)
	assert.Equal(t, router.StateBlocked, all[0].State)

	bs, err := hub.Blockers(n)
	require.NoError(t, err)
	require.Len(t, bs, 1)
	assert.Equal(t, out.Attempt.ID, bs[0].ID)
}
