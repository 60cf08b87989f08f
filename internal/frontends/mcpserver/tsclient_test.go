package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsClientDir holds the TypeScript client's script, package.json and
// package-lock.json; .ci/run installs its node_modules with npm ci.
const tsClientDir = "testdata/tsclient"

// TestTypeScriptClient drives the real binary with the official MCP
// TypeScript SDK's client (testdata/tsclient/client.mjs), which checks
// each structured result against its tool's output schema: no input
// property is a type union, the closed sets are enums, the capabilities
// are what is there, and a call the client cancels gets no response (the
// SDK reports one for an unknown id as an error).
func TestTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the official MCP TypeScript SDK's client needs Node.js 18 or later")
	}
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Skipf("the MCP TypeScript SDK is not installed: run npm ci in internal/frontends/mcpserver/%s", tsClientDir)
	}
	bin := agentxBinary(t)
	root := t.TempDir()
	run(t, bin, root, "", "init")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", bin, root)
	cmd.Dir = tsClientDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node client.mjs: %s\n%s", stdout.String(), stderr.String())

	var got struct {
		Errors       []string
		Capabilities map[string]any
		Tools        []string
		Unions       []string
		Enums        map[string][]string
		Ask, Wait    AskResult
		Human        AskResult
		Proposal     ProposalResult
		List         ProposalListResult
		Cancelled    string
		PingAfter    bool
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), "%s", stdout.String())
	assert.Empty(t, got.Errors, "errors the SDK's client reported")
	assert.Equal(t, map[string]any{"tools": map[string]any{}}, got.Capabilities)
	assert.Equal(t, allTools, got.Tools)
	assert.Empty(t, got.Unions, "input properties typed as unions")
	assert.Equal(t, []string{"new_skill", "tool_fix", "config_change", "workflow_improvement"}, got.Enums["proposal_create.type"])
	assert.Equal(t, []string{"low", "medium", "high"}, got.Enums["proposal_create.risk"])
	assert.Equal(t, []string{"pending", "approved", "rejected", "implemented"}, got.Enums["proposal_list.status"])
	assert.Equal(t, "CLR-1-001", got.Ask.ID)
	assert.Equal(t, OutcomePending, got.Wait.Outcome)
	assert.Equal(t, []string{"yes", "no"}, got.Human.Options)
	assert.Equal(t, "tool_fix", got.Proposal.Proposal.Type)
	assert.Len(t, got.List.Proposals, 1)
	assert.Contains(t, got.Cancelled, "the person pressed Esc")
	assert.True(t, got.PingAfter)
}
