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
