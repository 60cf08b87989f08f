package slackmode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

// TestLive runs Slack mode against a real workspace: set SLACK_BOT_TOKEN
// and AGENTX_SLACK_TEST_CHANNEL (a channel id the app is in). It posts one
// question, finds it again by its metadata (a second workspace, as after a
// crash, posts nothing), and reads its thread.
func TestLive(t *testing.T) {
	token, ch := os.Getenv("SLACK_BOT_TOKEN"), os.Getenv("AGENTX_SLACK_TEST_CHANNEL")
	if token == "" || ch == "" {
		t.Skip("set SLACK_BOT_TOKEN and AGENTX_SLACK_TEST_CHANNEL to run against a real Slack workspace")
	}
	cfg := fmt.Sprintf("[slack]\nchannel = %q\nanswerers = [\"U0000TEST\"]\ninterval = \"0s\"\n", ch)
	ctx := context.Background()
	stamp := time.Now().UTC().Format(time.RFC3339)
	workspace := func() (*router.Hub, *Mode) {
		dir, rules := testenv.Workspace(t, cfg)
		store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, time.Now)
		h := router.New(store, rules, dir)
		return h, &Mode{Hub: h, Config: rules.Config.Slack, Client: NewClient(rules.Config.Slack.APIURL, token, nil)}
	}
	h, m := workspace()
	_, err := h.Ask(ctx, router.AskRequest{Issue: 1, From: "engineer", To: ledger.Human, Topic: "agentx live test " + stamp,
		Question: "A live test of agentx's Slack mode: no answer is needed."})
	require.NoError(t, err)
	rep, err := m.Push(ctx, true)
	require.NoError(t, err)
	require.Len(t, rep.Issues, 1)
	assert.Equal(t, 1, rep.Issues[0].Posted)

	// Another workspace with the same clarification id finds the message.
	h2, m2 := workspace()
	_, err = h2.Ask(ctx, router.AskRequest{Issue: 1, From: "engineer", To: ledger.Human, Topic: "agentx live test " + stamp, Question: "the same id"})
	require.NoError(t, err)
	rep, err = m2.Push(ctx, true)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Issues[0].Found, "found by its metadata, not posted again")

	prep, err := m.Poll(ctx, true)
	require.NoError(t, err)
	assert.Equal(t, 1, prep.Threads)
}
