package setup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

func claudeMerges(c Claude) []Merge {
	return []Merge{
		{Rel: ".mcp.json", Merge: func(data []byte) ([]byte, error) { return MergeMCPJSON(data, c.Server) }},
		{Rel: ".claude/settings.json", Merge: func(data []byte) ([]byte, error) { return MergeClaudeSettings(data, c) }},
	}
}

func TestPlanApply(t *testing.T) {
	root := t.TempDir()
	c := Claude{Server: Server{Agent: "engineer"}, StopTimeout: 360}
	files, err := Plan(root, claudeMerges(c))
	require.NoError(t, err)
	require.Len(t, files, 2)
	assert.Equal(t, Created, files[0].Status())
	assert.Equal(t, Created, files[1].Status())
	assert.NoFileExists(t, filepath.Join(root, ".mcp.json"), "Plan writes nothing")
	require.NoError(t, Apply(root, files))

	fi, err := os.Stat(filepath.Join(root, ".claude"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "a directory made gets 0755")
	for _, rel := range []string{".mcp.json", ".claude/settings.json"} {
		fi, err := os.Stat(filepath.Join(root, rel))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "a file made gets 0644")
	}
	data, err := os.ReadFile(filepath.Join(root, ".claude", "settings.json"))
	require.NoError(t, err)
	assert.Equal(t, engineerHooks, string(data))

	// again: nothing to do
	files, err = Plan(root, claudeMerges(c))
	require.NoError(t, err)
	assert.Equal(t, Unchanged, files[0].Status())
	assert.Equal(t, Unchanged, files[1].Status())
	assert.Empty(t, files[0].Diff())

	// a file's own mode is kept
	require.NoError(t, os.Chmod(filepath.Join(root, ".mcp.json"), 0o600))
	files, err = Plan(root, claudeMerges(Claude{Server: Server{Agent: "architect"}, StopTimeout: 360}))
	require.NoError(t, err)
	assert.Equal(t, Changed, files[0].Status())
	require.NoError(t, Apply(root, files))
	fi, err = os.Stat(filepath.Join(root, ".mcp.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// TestPlanRefusesBrokenFile: a file that is not JSON is named with its
// line and column, and neither it nor any other file is written.
func TestPlanRefusesBrokenFile(t *testing.T) {
	root := t.TempDir()
	broken := "{\n  \"hooks\": {\n    \"Stop\": [\n  }\n"
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".claude"), 0o755))
	path := filepath.Join(root, ".claude", "settings.json")
	require.NoError(t, os.WriteFile(path, []byte(broken), 0o644))
	_, err := Plan(root, claudeMerges(Claude{Server: Server{Agent: "engineer"}}))
	var de *DataError
	require.True(t, errors.As(err, &de), "want a *DataError, got %v", err)
	assert.Equal(t, path, de.Path)
	assert.True(t, strings.HasPrefix(err.Error(), path+":4:3: invalid JSON"), "the error names the file, line and column: %v", err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, broken, string(data), "the file is untouched")
	assert.NoFileExists(t, filepath.Join(root, ".mcp.json"), "nor is any other file written")
}

func TestPlanRefusesLinks(t *testing.T) {
	t.Run("the file", func(t *testing.T) {
		root := t.TempDir()
		target := filepath.Join(t.TempDir(), "elsewhere.json")
		require.NoError(t, os.WriteFile(target, []byte("{}"), 0o644))
		require.NoError(t, os.Symlink(target, filepath.Join(root, ".mcp.json")))
		_, err := Plan(root, claudeMerges(Claude{Server: Server{Agent: "engineer"}}))
		var link *atomicfile.SymlinkError
		require.True(t, errors.As(err, &link), "want a *SymlinkError, got %v", err)
		data, _ := os.ReadFile(target)
		assert.Equal(t, "{}", string(data))
	})
	t.Run("a directory on the way", func(t *testing.T) {
		root := t.TempDir()
		require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(root, ".claude")))
		_, err := Plan(root, claudeMerges(Claude{Server: Server{Agent: "engineer"}}))
		var link *atomicfile.SymlinkError
		require.True(t, errors.As(err, &link), "want a *SymlinkError, got %v", err)
		assert.NoFileExists(t, filepath.Join(root, ".mcp.json"))
	})
}

func TestDiff(t *testing.T) {
	changed := &File{Rel: "a.txt", Exists: true,
		Before: []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"),
		After:  []byte("1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\n13\n")}
	assert.Equal(t, `--- a/a.txt
+++ b/a.txt
@@ -2,7 +2,7 @@
 2
 3
 4
-5
+five
 6
 7
 8
@@ -10,3 +10,4 @@
 10
 11
 12
+13
`, changed.Diff())
	created := &File{Rel: "b.txt", After: []byte("x\ny\n")}
	assert.Equal(t, "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n", created.Diff())
}
