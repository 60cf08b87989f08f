package workflow

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultFiles proves every file `agentx init` writes loads and validates, both
// one by one and as a workspace, and holds the documented rules.
func TestDefaultFiles(t *testing.T) {
	files := DefaultFiles()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	require.Equal(t, []string{"config.toml", "workflows/bug.toml", "workflows/feature.toml", "workflows/story.toml"}, names)

	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
		if name == "config.toml" {
			_, err := LoadConfigFile(p)
			require.NoError(t, err)
		} else {
			_, err := LoadWorkflowFile(p)
			require.NoError(t, err, name)
		}
	}
	set, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"bug", "feature", "story"}, set.Names())

	// The written config says what DefaultConfig says.
	want := DefaultConfig()
	want.File = filepath.Join(dir, "config.toml")
	got := *set.Config
	got.defaultWorkflowSet, got.defaultWorkflowLine = false, 0
	assert.Equal(t, *want, got)

	type rule struct {
		step, agent string
		needs, ask  []string
		rounds, sla int
		blocking    bool
		optional    bool
	}
	check := func(wf string, want []rule) {
		t.Helper()
		w, err := set.Workflow(wf)
		require.NoError(t, err)
		var got []rule
		for _, s := range w.Steps {
			got = append(got, rule{s.ID, s.Agent, s.Needs, s.CanClarify, s.ClarifyMaxRounds, s.ClarifySLAMinutes, s.ClarifyBlockingAllowed, s.Optional})
		}
		assert.Equal(t, want, got, wf)
	}
	check("feature", []rule{
		{"prd", "product-manager", nil, []string{}, 5, 30, true, false},
		{"ux", "ux-designer", []string{"prd"}, []string{"product-manager"}, 5, 30, true, true},
		{"architecture", "architect", []string{"prd"}, []string{"product-manager"}, 3, 60, true, false},
		{"implement", "engineer", []string{"architecture"}, []string{"architect", "product-manager"}, 5, 30, true, false},
		{"review", "reviewer", []string{"implement"}, []string{"engineer", "architect"}, 5, 30, true, false},
	})
	check("story", []rule{
		{"implement", "engineer", nil, []string{"architect", "product-manager"}, 5, 30, true, false},
		{"review", "reviewer", []string{"implement"}, []string{}, 5, 30, true, false},
	})
	check("bug", []rule{
		{"fix", "engineer", nil, []string{"architect", "product-manager"}, 2, 30, false, false},
		{"review", "reviewer", []string{"fix"}, []string{}, 5, 30, true, false},
	})

	w, err := set.Workflow("")
	require.NoError(t, err)
	r, err := w.Rule("engineer", "")
	require.NoError(t, err)
	assert.Equal(t, 30*time.Minute, r.SLA)
	assert.True(t, r.Allows("architect"))
}

// TestDefaultFilesFresh proves callers cannot change the embedded defaults.
func TestDefaultFilesFresh(t *testing.T) {
	a := DefaultFiles()
	a["config.toml"][0] = 'X'
	delete(a, "workflows/bug.toml")
	b := DefaultFiles()
	assert.Equal(t, byte('#'), b["config.toml"][0])
	assert.Contains(t, b, "workflows/bug.toml")
}
