package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/frontends/desk"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// agentStatus reads the workspace's agent-status.json as it is now: nil
// when there is none.
func agentStatus(t *testing.T, dir string) ledger.AgentStatuses {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".agentx", "state", ledger.AgentStatusFile))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var m ledger.AgentStatuses
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// TestMCPCallDerivesAgentStatus: an MCP server lives as long as the
// agent's session, so the side pass after each tool call derives
// agent-status.json: the asker shows as waiting as soon as clarify_ask
// returns, not when the server exits.
func TestMCPCallDerivesAgentStatus(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stderr := &lockedBuffer{}
	cs, stop := startMCP(t, ctx, map[string]string{"AGENTX_AGENT": "engineer", "AGENTX_ROOT": dir}, stderr)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "clarify_ask", Arguments: map[string]any{
		"issue": 7, "to": "human", "topic": "Cache", "question": "TTL?"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)

	st := agentStatus(t, dir)["engineer"]
	require.NotNil(t, st, "agent-status.json names the asker right after the call; stderr: %s", stderr.String())
	assert.Equal(t, ledger.BlockedClarification, st.Status)
	assert.Equal(t, "CLR-7-001", st.ClarificationID)
	assert.Equal(t, "human", st.WaitingOn)
	require.Equal(t, 0, stop(), "stderr: %s", stderr.String())
}

// TestDeskActionDerivesAgentStatus: the desk's side pass after an action
// derives agent-status.json at once, not at its next interval: the asker
// whose question the person answered is no longer shown waiting on them.
func TestDeskActionDerivesAgentStatus(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	ask := runCmd(t, "", map[string]string{"AGENTX_AGENT": "engineer", "AGENTX_ROOT": dir}, "", "clarify", "ask", "--issue", "9", "--to", "human", "--topic", "T", "--question", "q?")
	require.Equal(t, 0, ask.code, ask.stderr)
	require.Equal(t, "human", agentStatus(t, dir)["engineer"].WaitingOn)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	outR, outW := io.Pipe()
	stderr := &lockedBuffer{}
	a := &App{stdin: strings.NewReader(""), stdout: outW, stderr: stderr, getenv: testGetenv(map[string]string{"AGENTX_ROOT": dir})}
	exit := make(chan int, 1)
	// an interval far away: what the test sees is the action's side pass
	go func() { exit <- run(ctx, a, []string{"desk", "--no-open", "--as", "dana", "--interval", "1h"}) }()
	lines := bufio.NewScanner(outR)
	require.True(t, lines.Scan(), "stderr: %s", stderr.String())
	u, ok := strings.CutPrefix(lines.Text(), "agentx desk: ")
	require.True(t, ok, lines.Text())
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	base, token, _ := strings.Cut(u, "/?token=")

	form := url.Values{"verb": {"answer"}, "id": {"CLR-9-001"}, "body": {"Five minutes."}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/act", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(desk.TokenHeader, token)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)

	st := agentStatus(t, dir)["engineer"]
	require.NotNil(t, st)
	assert.NotEqual(t, "human", st.WaitingOn, "right after the action, the asker waits on nobody: %+v", st)
	assert.NotEqual(t, ledger.BlockedClarification, st.Status)
	rec := runCmd(t, "", map[string]string{"AGENTX_ROOT": dir}, "", "clarify", "show", "CLR-9-001", "--json")
	require.Contains(t, rec.stdout, `"answered"`, "the desk recorded the answer: %s", rec.stdout)

	cancel()
	select {
	case <-exit:
	case <-time.After(10 * time.Second):
		t.Fatal("agentx desk did not stop")
	}
}

// TestSidePassChannelPerPieceOfWork: a channel is one entry in the list,
// and its failure is said once per piece of work: a one-shot command
// leaves it alone for the rest of the command, a long-lived process tries
// it again at its next piece of work (a tool call, a watch turn) rather
// than never again.
func TestSidePassChannelPerPieceOfWork(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	ws, err := workspace.Open(dir, dir, time.Now)
	require.NoError(t, err)
	h := router.New(ws.Store, ws.Rules, ws.Root)

	var reads, sends int
	saved := channels
	t.Cleanup(func() { channels = saved })
	channels = []channel{{"fake", func(context.Context, *router.Hub, func(string) string, func(error)) (func(error, func(error)) *relay.Mode, error) {
		return func(err error, warn func(error)) *relay.Mode {
			return &relay.Mode{Name: "fake", Timeout: time.Second, Err: err, Warn: warn,
				Read: func(context.Context, bool) error { reads++; return errors.New("down") },
				Send: func(context.Context, bool) error { sends++; return nil }}
		}, nil
	}}}
	var warned []string
	pass := func() *sidePass {
		return &sidePass{hub: func() *router.Hub { return h }, getenv: func(string) string { return "" },
			warn: func(err error) { warned = append(warned, err.Error()) },
			warnAs: func(name string) func(error) {
				return func(err error) { warned = append(warned, name+": "+err.Error()) }
			},
			pulled: &atomic.Bool{}}
	}
	ctx := context.Background()
	read := sideSteps{read: true, push: true}

	p := pass()
	for range 2 {
		_, err := p.command().run(ctx, read, nil)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, reads, "a command: once")
	assert.Equal(t, 0, sends, "a failed channel is left alone for the rest of the command")
	assert.Equal(t, []string{"fake: down (queued: agentx fake status shows what is behind)"}, warned)

	reads, warned = 0, nil
	p = pass()
	for range 2 {
		_, err := p.runTurn(ctx, read, nil)
		require.NoError(t, err)
	}
	assert.Equal(t, 2, reads, "each piece of work tries again")
	assert.Len(t, warned, 2)
}
