package workflow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetAgents: the agents a workspace knows are those config.toml names
// (priority, responders) and those its workflows name (step agents and
// whom they may ask), each once, sorted; human is not one of them.
func TestSetAgents(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"config.toml": "priority = [\"product-manager\", \"architect\"]\n\n[agents.oracle]\ncommand = [\"./oracle\"]\n",
		"workflows/feature.toml": okStep + "\n[[steps]]\nid = \"review\"\nagent = \"reviewer\"\nneeds = [\"implement\"]\n" +
			"can_clarify = [\"engineer\", \"human\"]\n",
	})
	set, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"architect", "engineer", "oracle", "product-manager", "reviewer"}, set.Agents())
}
