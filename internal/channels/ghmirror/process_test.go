package ghmirror

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror/ghfake"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinary()
	os.Exit(code)
}

// TestKilledWhilePosting proves, with real agentx processes, that a sync
// killed (SIGKILL) after GitHub created its comment and before it heard
// back does not post twice: the next process finds the note of the post,
// lists the issue once, and records the comment; a later post lists
// nothing.
func TestKilledWhilePosting(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs agentx")
	}
	bin := testenv.AgentxBinary(t)
	e := newEnv(t, "")
	e.now = time.Now()
	e.ask(ledger.Human)
	trusted := testenv.Trust(t, bin, e.dir) // the fake's api_url gets the token
	sync := func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, "github", "sync")
		cmd.Dir = e.dir
		cmd.Env = append(os.Environ(), "GITHUB_TOKEN=fake-token", "AGENTX_AGENT=", "AGENTX_ROOT=", trusted)
		return cmd
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	created, release := e.fake.HoldNextCreate()
	t.Cleanup(release)
	first := sync(ctx)
	require.NoError(t, first.Start())
	select {
	case <-created:
	case <-ctx.Done():
		t.Fatal("the first sync never posted")
	}
	require.NoError(t, first.Process.Kill())
	_ = first.Wait()
	release()
	require.Len(t, e.fake.Comments(42), 1, "posted, never recorded")
	assert.Empty(t, e.refs(e.get("CLR-42-001")))
	assert.Zero(t, e.fake.Calls(ghfake.OpListIssue))

	out, err := sync(ctx).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Len(t, e.fake.Comments(42), 1, "found, not posted again")
	assert.Equal(t, 1, e.fake.Calls(ghfake.OpListIssue), "one listing, to recover it")
	refs := e.refs(e.get("CLR-42-001"))
	require.Len(t, refs, 1)
	assert.Equal(t, e.fake.Comments(42)[0].ID, refs[0].Comment)

	_, err = e.hub.Answer(ctx, "CLR-42-001", ledger.Human, "Exponential.")
	require.NoError(t, err)
	out, err = sync(ctx).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Len(t, e.fake.Comments(42), 2)
	assert.Equal(t, 1, e.fake.Calls(ghfake.OpListIssue), "nothing lost: no listing")
}
