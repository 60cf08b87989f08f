package ghmirror

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

// TestLive runs GitHub mode against a real repository: set
// AGENTX_GITHUB_TEST_REPO (owner/name), GITHUB_TOKEN (or GH_TOKEN) and,
// optionally, AGENTX_GITHUB_TEST_ISSUE (default 1), an issue it may
// comment on. It mirrors a question there, finds it again by its metadata
// (a second workspace, as after a crash, posts nothing), and reads the
// repository's comments twice: the second read is a 304.
func TestLive(t *testing.T) {
	repo := os.Getenv("AGENTX_GITHUB_TEST_REPO")
	token, _, err := Token(context.Background(), os.Getenv, "https://api.github.com/")
	if repo == "" || err != nil {
		t.Skip("set AGENTX_GITHUB_TEST_REPO and GITHUB_TOKEN to run against a real repository")
	}
	issue := 1
	if s := os.Getenv("AGENTX_GITHUB_TEST_ISSUE"); s != "" {
		issue, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	api := "https://api.github.com/"
	if s := os.Getenv("AGENTX_GITHUB_TEST_API"); s != "" {
		api = s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	newHub := func() *router.Hub {
		dir, rules := testenv.Workspace(t, fmt.Sprintf("[github]\nrepo = %q\napi_url = %q\ninterval = \"0s\"\n", repo, api))
		store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, nil)
		return router.New(store, rules, dir)
	}
	mirror := func(h *router.Hub) *Mirror {
		c, err := NewClient(api, repo, token, nil)
		require.NoError(t, err)
		return &Mirror{Hub: h, Config: h.Rules().Config.GitHub, Client: c, Warn: func(err error) { t.Log(err) }}
	}
	h := newHub()
	topic := "agentx live test " + time.Now().UTC().Format(time.RFC3339Nano)
	_, err = h.Ask(ctx, router.AskRequest{Issue: issue, From: "engineer", To: "architect", Topic: topic, Question: "Does the mirror work?"})
	require.NoError(t, err)
	rep, err := mirror(h).Push(ctx, true)
	require.NoError(t, err)
	require.Len(t, rep.Issues, 1)
	assert.Equal(t, 1, rep.Issues[0].Posted)

	m := mirror(h)
	_, err = m.Poll(ctx, true)
	require.NoError(t, err)
	r2, err := m.Poll(ctx, true)
	require.NoError(t, err)
	assert.True(t, r2.NotModified, "an unchanged repository is a 304")
}
