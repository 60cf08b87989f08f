package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPReadsChangedRules: a long-lived MCP server reads the workspace's
// rules again when config.toml changes: a raised question cap takes effect
// at the next call, not at the next start; an edit that does not load keeps
// the rules read before, with one warning naming the file and line.
func TestMCPReadsChangedRules(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	cfg := filepath.Join(dir, ".agentx", "config.toml")
	setCap := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(cfg)
		require.NoError(t, err)
		require.Contains(t, string(b), from)
		// a later time: the edit is seen even on a file system whose clock ticks coarsely
		require.NoError(t, os.WriteFile(cfg, []byte(strings.Replace(string(b), from, to, 1)), 0o644))
		later := time.Now().Add(time.Duration(len(to)) * time.Second)
		require.NoError(t, os.Chtimes(cfg, later, later))
	}
	setCap("max_questions = 3", "max_questions = 1")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stderr := &lockedBuffer{}
	cs, stop := startMCP(t, ctx, map[string]string{"AGENTX_AGENT": "engineer", "AGENTX_ROOT": dir}, stderr)
	ask := func(topic string) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "clarify_ask", Arguments: map[string]any{
			"issue": 7, "to": "architect", "topic": topic, "question": topic + "?", "blocking": false}})
		require.NoError(t, err)
		return res
	}
	require.False(t, ask("Cache").IsError)
	capped := ask("Queue")
	require.True(t, capped.IsError, "the cap of 1 holds")
	assert.Contains(t, capped.Content[0].(*mcp.TextContent).Text, "the limit (max_questions = 1)")

	setCap("max_questions = 1", "max_questions = 5")
	assert.False(t, ask("Queue").IsError, "the raised cap is read at the next call")

	setCap("max_questions = 5", "max_questions = [")
	assert.False(t, ask("Retries").IsError, "a config that does not load keeps the rules read before")
	assert.False(t, ask("Logging").IsError)
	assert.Equal(t, 1, strings.Count(stderr.String(), "the workspace's rules changed and do not load"), "said once: %s", stderr.String())
	assert.Contains(t, stderr.String(), "config.toml:")
	require.Equal(t, 0, stop())
}
