package workflow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSkillsDir(t *testing.T) {
	c, err := parseConfig("config.toml", []byte(""))
	require.NoError(t, err)
	assert.Equal(t, ".claude/skills", c.Skills.Dir, "Claude Code's project skills by default")

	c, err = parseConfig("config.toml", []byte("[skills]\ndir = \"tools/agent-skills/\"\n"))
	require.NoError(t, err)
	assert.Equal(t, "tools/agent-skills/", c.Skills.Dir)

	for _, bad := range []string{"", " ", "/abs", `C:\skills`, `a\b`, "a/../b", "./skills", "a//b", "..", "sk\x1bills"} {
		assert.NotEmpty(t, SkillsDirProblem(bad), "%q", bad)
	}
	for _, good := range []string{".claude/skills", "skills", "docs/skills/", ".agents/skills"} {
		assert.Empty(t, SkillsDirProblem(good), "%q", good)
	}
}

func TestMCPConfig(t *testing.T) {
	c, err := parseConfig("config.toml", nil)
	require.NoError(t, err)
	assert.False(t, c.MCP.Elicit, "off by default")
	c, err = parseConfig("config.toml", []byte("[mcp]\nelicit = true\n"))
	require.NoError(t, err)
	assert.True(t, c.MCP.Elicit)
	for bad, want := range map[string]string{
		"[mcp]\nelicit = \"yes\"\n": "config.toml:2: mcp.elicit: ",
		"[mcp]\nelict = true\n":     "config.toml:2: mcp.elict: ",
		"mcp = 1\n":                 "config.toml:1: mcp: ",
	} {
		_, err := parseConfig("config.toml", []byte(bad))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), want, bad)
	}
}

// TestContextConfig: [context] budget, 8000 bytes unless set, 0 to 64 KiB;
// a bad value names its file and line.
func TestContextConfig(t *testing.T) {
	c, err := parseConfig("config.toml", nil)
	require.NoError(t, err)
	assert.Equal(t, 8000, c.Context.Budget)
	c, err = parseConfig("config.toml", []byte("[context]\nbudget = 2000\n"))
	require.NoError(t, err)
	assert.Equal(t, 2000, c.Context.Budget)
	c, err = parseConfig("config.toml", []byte("[context]\nbudget = 0\n"))
	require.NoError(t, err)
	assert.Zero(t, c.Context.Budget, "0: no file text")
	for bad, want := range map[string]string{
		"[context]\nbudget = -1\n":      "config.toml:2: context.budget: must be between 0 and 65536, got -1",
		"[context]\nbudget = 1000000\n": "config.toml:2: context.budget: must be between 0 and 65536, got 1000000",
		"[context]\nbudget = \"8k\"\n":  "config.toml:2: context.budget: ",
		"[context]\nbudgt = 100\n":      "config.toml:2: context.budgt: ",
		"context = 1\n":                 "config.toml:1: context: ",
	} {
		_, err := parseConfig("config.toml", []byte(bad))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), want, bad)
	}
}
