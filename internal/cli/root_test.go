package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTopLevelNames: each command of the table is built under the name the
// table gives it (a run that names it gets it alone), and the whole tree
// holds exactly the table's commands.
func TestTopLevelNames(t *testing.T) {
	a := &App{getenv: func(string) string { return "" }}
	for _, c := range topLevel() {
		cmd := c.make(a)
		require.Equal(t, c.name, cmd.Name())
		require.Empty(t, cmd.Aliases, "%s: an alias would not find the command alone", c.name)
		root := newRoot(a, c.name)
		require.Len(t, root.Commands(), 1)
		require.Equal(t, c.name, root.Commands()[0].Name())
	}
	root := newRootCmd(a)
	require.Len(t, root.Commands(), len(topLevel()))
	require.Len(t, newRoot(a, "--json").Commands(), len(topLevel()))
}
