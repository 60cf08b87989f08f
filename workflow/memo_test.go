package workflow

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memoWorkspace writes the default files into a temp .agentx directory,
// dated an hour back (old enough for the memo to vouch for them), and
// returns it and the memo's path.
func memoWorkspace(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".agentx")
	for name, data := range DefaultFiles() {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	age(t, dir, time.Hour)
	return dir, filepath.Join(dir, "state", "cache", "workflows")
}

// age dates every file under dir back by d.
func age(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	require.NoError(t, filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
}

func TestLoadMemo(t *testing.T) {
	dir, memo := memoWorkspace(t)
	full, err := Load(dir)
	require.NoError(t, err)

	// first: a full Load, and the memo written
	s, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	assert.Nil(t, s.lazy)
	require.FileExists(t, memo)

	// then: config.toml and nothing else parsed, until a workflow is asked for
	s, err = LoadMemo(dir, memo)
	require.NoError(t, err)
	assert.Empty(t, s.Workflows)
	assert.Equal(t, full.Names(), s.Names())
	assert.Equal(t, full.Config.DefaultWorkflow, s.Config.DefaultWorkflow)
	w, err := s.Workflow("")
	require.NoError(t, err)
	assert.Equal(t, full.Config.DefaultWorkflow, w.Name)
	assert.Len(t, s.Workflows, 1, "only the workflow asked for")
	assert.Equal(t, full.Agents(), s.Agents(), "Agents needs them all, and parses them")
	_, err = s.Workflow("nope")
	var le *LookupError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, full.Names(), le.Known)
}

// TestLoadMemoChanges: any change to the files (edited, added, removed)
// and the whole workspace is checked again, so a broken workflow is
// reported by every command: left out, with its problems (Broken), and
// no memo vouches for it; a broken config.toml fails the load.
func TestLoadMemoChanges(t *testing.T) {
	for name, change := range map[string]func(dir string) error{
		"edited": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "workflows", "bug.toml"), []byte("[workflow]\nname = \"bug\"\nnot toml ="), 0o644)
		},
		"added": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "workflows", "extra.toml"), []byte("[[steps]]\nid = 3\n"), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, memo := memoWorkspace(t)
			_, err := LoadMemo(dir, memo)
			require.NoError(t, err)
			require.FileExists(t, memo)
			require.NoError(t, change(dir))
			age(t, dir, time.Hour)
			for range 2 { // and again: no memo vouches for a file with a problem
				s, err := LoadMemo(dir, memo)
				require.NoError(t, err)
				require.NotEmpty(t, s.Broken(), "the change is seen and reported")
				assert.Nil(t, s.lazy)
				_, err = s.Workflow("feature")
				require.NoError(t, err, "the other workflows load")
			}
		})
	}

	t.Run("config edited", func(t *testing.T) {
		dir, memo := memoWorkspace(t)
		_, err := LoadMemo(dir, memo)
		require.NoError(t, err)
		f, err := os.OpenFile(filepath.Join(dir, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("\nbogus_key = 1\n")
		require.NoError(t, errors.Join(err, f.Close()))
		_, err = LoadMemo(dir, memo)
		var es Errors
		require.ErrorAs(t, err, &es, "config.toml holds every rule: nothing loads")
	})

	// a workflow broken while a process holds the memo's lazy Set: the
	// workflow asked for is told broken, naming its file
	dir, memo := memoWorkspace(t)
	_, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	s, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	require.NotNil(t, s.lazy)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "workflows", "bug.toml"), []byte("[workflow]\nname = \"bug\"\nnot toml ="), 0o644))
	_, err = s.Workflow("bug")
	var be *BrokenError
	require.ErrorAs(t, err, &be)
	assert.True(t, be.Own)
	assert.Contains(t, err.Error(), filepath.Join(dir, "workflows", "bug.toml")+":3")
	assert.NotEmpty(t, s.Broken())

	// removed: the workflow is gone from the names
	dir, memo = memoWorkspace(t)
	_, err = LoadMemo(dir, memo)
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(dir, "workflows", "story.toml")))
	s, err = LoadMemo(dir, memo)
	require.NoError(t, err)
	assert.NotContains(t, s.Names(), "story")
}

// TestLoadMemoRecent: a file changed within the last moments is not
// vouched for (its time may not move on the next change): no memo.
func TestLoadMemoRecent(t *testing.T) {
	dir, memo := memoWorkspace(t)
	now := time.Now()
	require.NoError(t, os.Chtimes(filepath.Join(dir, "workflows", "bug.toml"), now, now))
	_, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	assert.NoFileExists(t, memo)
}

// TestLoadMemoForged: a memo that names the wrong file for a workflow (or
// is garbage) costs a full Load, never a wrong workflow.
func TestLoadMemoForged(t *testing.T) {
	dir, memo := memoWorkspace(t)
	_, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	b, err := os.ReadFile(memo)
	require.NoError(t, err)
	forged := strings.Replace(string(b), `"feature"`+"\n", `"bug"`+"\n", 1)
	forged = strings.Replace(forged, ` "bug"`+"\n", ` "feature"`+"\n", 1)
	require.NotEqual(t, string(b), forged)
	require.NoError(t, os.WriteFile(memo, []byte(forged), 0o644))
	s, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	w, err := s.Workflow("feature")
	require.NoError(t, err)
	assert.Equal(t, "feature", w.Name)
	assert.Equal(t, filepath.Join(dir, "workflows", "feature.toml"), w.File)

	require.NoError(t, os.WriteFile(memo, []byte(memoHeader()+"\n\"config.toml\" x\n"), 0o644))
	s, err = LoadMemo(dir, memo)
	require.NoError(t, err)
	assert.Nil(t, s.lazy, "garbage: a full Load")
}

// TestLoadMemoOtherBuild: a memo another build of agentx wrote is not
// trusted (its checks may differ): a full Load, which writes this build's.
func TestLoadMemoOtherBuild(t *testing.T) {
	dir, memo := memoWorkspace(t)
	_, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	b, err := os.ReadFile(memo)
	require.NoError(t, err)
	other := strings.Replace(string(b), memoHeader(), "agentx workflow memo v1 v0.9.0@0123abc", 1)
	require.NotEqual(t, string(b), other)
	require.NoError(t, os.WriteFile(memo, []byte(other), 0o644))
	s, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	assert.Nil(t, s.lazy, "another build's memo: a full Load")
	s, err = LoadMemo(dir, memo)
	require.NoError(t, err)
	assert.NotNil(t, s.lazy, "and this build's memo is written")
}

// TestLoadMemoNoLinks: the memo is never written through a symbolic link
// on its way (a cloned repository's state/cache pointing elsewhere).
func TestLoadMemoNoLinks(t *testing.T) {
	dir, memo := memoWorkspace(t)
	elsewhere := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "state"), 0o755))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, "state", "cache")))
	_, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func FuzzReadMemo(f *testing.F) {
	h := memoHeader() + "\n"
	f.Add(h + "\"config.toml\" 6364 1795431942372149746 \"\"\n\"workflows/bug.toml\" 832 1795431942372149746 \"bug\"\n")
	f.Add(h)
	f.Add(h + "\"a\\\"b\" -1 0 \"\\u00e9\"\n")
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(t.TempDir(), "memo")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files, ok := readMemo(p)
		if !ok {
			return
		}
		var b strings.Builder
		b.WriteString(memoHeader() + "\n")
		for _, f := range files {
			b.WriteString(f.line())
		}
		if b.String() != text {
			t.Fatalf("read %q, written back %q", text, b.String())
		}
	})
}

// TestLoadMemoConcurrent: a Set from LoadMemo is shared by an MCP server's
// concurrent calls; asking for workflows at once is safe (run with -race).
func TestLoadMemoConcurrent(t *testing.T) {
	dir, memo := memoWorkspace(t)
	_, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	s, err := LoadMemo(dir, memo)
	require.NoError(t, err)
	require.NotNil(t, s.lazy)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, name := range []string{"", "bug", "story", "feature", "nope"} {
				_, _ = s.Workflow(name)
				_ = s.Names()
			}
			_ = s.Agents()
		}()
	}
	wg.Wait()
	assert.Len(t, s.Workflows, 3)
}
