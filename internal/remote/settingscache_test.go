package remote

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSettingsKept: what git config said of the settings a commit depends
// on is kept in SettingsFile and taken by the next process without
// starting git, as long as nothing it depends on changed: each change
// below (a configuration file edited, made, moved behind a link; the
// environment; the workspace; time; a damaged file) has git read them
// again. Where git's reading cannot be followed (an include, a file
// changed as git read it) nothing is kept.
func TestSettingsKept(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	// git reads HOME's files only while GIT_CONFIG_GLOBAL is unset (a
	// hermetic run sets it): the cases below, but the last, need it unset
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	require.NoError(t, os.Unsetenv("GIT_CONFIG_GLOBAL"))
	past := time.Now().Add(-time.Hour)
	global := filepath.Join(home, ".gitconfig")
	require.NoError(t, os.WriteFile(global, []byte("[user]\n\tname = A\n"), 0o644))

	for _, tc := range []struct {
		name   string
		change func(t *testing.T, g *Git) // nil: nothing changes, the kept answer is taken
		signs  bool                       // what git says after the change
	}{
		{name: "nothing changed"},
		{name: "the repository's configuration", signs: true, change: func(t *testing.T, g *Git) {
			gitT(t, g.Dir, "", "config", "commit.gpgsign", "true")
		}},
		{name: "the global configuration edited in place", signs: true, change: func(t *testing.T, g *Git) {
			f, err := os.OpenFile(global, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString("[commit]\n\tgpgsign = true\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
		{name: "an XDG configuration made", signs: true, change: func(t *testing.T, g *Git) {
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".config", "git"), 0o755))
			t.Cleanup(func() { _ = os.RemoveAll(filepath.Join(home, ".config")) })
			require.NoError(t, os.WriteFile(filepath.Join(home, ".config", "git", "config"), []byte("[commit]\n\tgpgsign = true\n"), 0o644))
		}},
		{name: "the global configuration, a link, moved to another file", signs: true, change: func(t *testing.T, g *Git) {
			other := filepath.Join(home, "dotfiles-gitconfig")
			require.NoError(t, os.WriteFile(other, []byte("[commit]\n\tgpgsign = true\n"), 0o644))
			require.NoError(t, os.Chtimes(other, past, past))
			require.NoError(t, os.Remove(global))
			require.NoError(t, os.Symlink(other, global))
		}},
		{name: "the environment", signs: true, change: func(t *testing.T, g *Git) {
			t.Setenv("GIT_CONFIG_COUNT", "1")
			t.Setenv("GIT_CONFIG_KEY_0", "commit.gpgsign")
			t.Setenv("GIT_CONFIG_VALUE_0", "true")
		}},
		{name: "another workspace", change: func(t *testing.T, g *Git) {
			g.Dir += string(filepath.Separator) + "."
		}},
		{name: "the answer is old", change: func(t *testing.T, g *Git) {
			old := time.Now().Add(-settingsFor - time.Minute)
			rewriteKept(t, g, func(k *keptSettings) { k.At = old })
		}},
		{name: "the answer is from the future", change: func(t *testing.T, g *Git) {
			rewriteKept(t, g, func(k *keptSettings) { k.At = time.Now().Add(time.Hour) })
		}},
		{name: "another build", change: func(t *testing.T, g *Git) {
			rewriteKept(t, g, func(k *keptSettings) { k.Build = "agentx 0.0.1 (another build)" })
		}},
		{name: "a damaged file", change: func(t *testing.T, g *Git) {
			require.NoError(t, os.WriteFile(g.settingsFile(), []byte(`{"dir":`), 0o644))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.Remove(global)) // a file again, if it was made a link
			require.NoError(t, os.WriteFile(global, []byte("[user]\n\tname = A\n"), 0o644))
			require.NoError(t, os.Chtimes(global, past, past))
			g := keptRepo(t, past)
			g.settings(ctx)
			require.FileExists(t, g.settingsFile(), "kept")
			assert.False(t, g.signing)

			next := &Git{Dir: g.Dir, settingsState: g.settingsState}
			if tc.change == nil {
				assert.True(t, next.loadSettings(), "taken as kept")
				assert.Equal(t, g.objectDir, next.objectDir)
				return
			}
			tc.change(t, next)
			assert.False(t, next.loadSettings(), "not taken after the change")
			next.settings(ctx)
			assert.Equal(t, tc.signs, next.signing, "git read them again")
		})
	}

	t.Run("the file GIT_CONFIG_GLOBAL names, made", func(t *testing.T) {
		named := filepath.Join(t.TempDir(), "gitconfig") // not there yet: git reads no global file
		t.Setenv("GIT_CONFIG_GLOBAL", named)
		g := keptRepo(t, past)
		g.settings(ctx)
		require.FileExists(t, g.settingsFile(), "kept")
		require.False(t, g.signing)
		require.NoError(t, os.WriteFile(named, []byte("[commit]\n\tgpgsign = true\n"), 0o644))
		next := &Git{Dir: g.Dir, settingsState: g.settingsState}
		assert.False(t, next.loadSettings(), "not taken after the change")
		next.settings(ctx)
		assert.True(t, next.signing, "git read them again")
	})

	t.Run("an include is not followed", func(t *testing.T) {
		g := keptRepo(t, past)
		inc := filepath.Join(t.TempDir(), "more")
		require.NoError(t, os.WriteFile(inc, []byte("[user]\n\temail = a@b\n"), 0o644))
		gitT(t, g.Dir, "", "config", "include.path", inc)
		require.NoError(t, os.Chtimes(filepath.Join(g.Dir, ".git", "config"), past, past))
		g.settings(ctx)
		assert.NoFileExists(t, g.settingsFile())
		assert.NotEmpty(t, g.objectDir, "the settings are read all the same")
	})
	t.Run("a file changed as git read it", func(t *testing.T) {
		g := keptRepo(t, past)
		require.NoError(t, os.MkdirAll(filepath.Dir(g.settingsFile()), 0o755))
		require.NoError(t, os.WriteFile(g.settingsFile(), []byte("{}"), 0o644))
		now := time.Now()
		require.NoError(t, os.Chtimes(filepath.Join(g.Dir, ".git", "config"), now, now))
		g.settings(ctx)
		assert.NoFileExists(t, g.settingsFile(), "nothing kept, and what was kept removed")
	})
}

// keptRepo is a repository whose configuration was written before past,
// and a Git on it that keeps its settings in the state directory.
func keptRepo(t *testing.T, past time.Time) *Git {
	t.Helper()
	g := gitRepo(t)
	require.NoError(t, os.Chtimes(filepath.Join(g.Dir, ".git", "config"), past, past))
	g.settingsState = t.TempDir()
	return g
}

// rewriteKept changes SettingsFile's content as fn says.
func rewriteKept(t *testing.T, g *Git, fn func(*keptSettings)) {
	t.Helper()
	data, err := os.ReadFile(g.settingsFile())
	require.NoError(t, err)
	var k keptSettings
	require.NoError(t, json.Unmarshal(data, &k))
	fn(&k)
	out, err := json.Marshal(k)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(g.settingsFile(), out, 0o644))
}

// FuzzLoadSettings: whatever SettingsFile holds, taking it never fails
// the process, and objects are only ever written beside a repository
// configuration file whose stamp still holds.
func FuzzLoadSettings(f *testing.F) {
	f.Add([]byte(`{"dir":"D","env":"E","files":[{"path":"D/.git/config","stamp":"S"}],"at":"2026-01-01T00:00:00Z","objectDir":"D/.git/objects"}`))
	f.Add([]byte(`{"files":null}`))
	f.Add([]byte(`[]`))
	dir := f.TempDir()
	g := &Git{Dir: dir, settingsState: dir}
	require.NoError(f, os.MkdirAll(filepath.Dir(g.settingsFile()), 0o755))
	f.Fuzz(func(t *testing.T, data []byte) {
		require.NoError(t, os.WriteFile(g.settingsFile(), data, 0o644))
		g := &Git{Dir: dir, settingsState: dir}
		if !g.loadSettings() {
			return
		}
		var k keptSettings
		require.NoError(t, json.Unmarshal(data, &k))
		if g.objectDir != "" {
			assert.True(t, k.beside(g.objectDir), "objects at %q", g.objectDir)
		}
	})
}
