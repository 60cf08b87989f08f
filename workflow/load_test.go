package workflow

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTree writes files (slash paths relative to dir) and returns dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return dir
}

const okStep = "[[steps]]\nid = \"implement\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\n"

// TestLoad proves a workspace loads with and without config.toml, Workflow("") is the
// default, unknown names give ErrUnknownWorkflow, and non-workflow files are skipped.
func TestLoad(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"workflows/feature.toml":       okStep,
		"workflows/bug.toml":           "[workflow]\nname = \"bugfix\"\n" + okStep,
		"workflows/README.md":          "not a workflow",
		"workflows/.#feature.toml":     "editor lock file, [[[ not TOML",
		"workflows/old.toml/keep.toml": "in a directory named like a workflow",
	})
	set, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"bugfix", "feature"}, set.Names())
	assert.Equal(t, DefaultConfig().Lock, set.Config.Lock)

	w, err := set.Workflow("")
	require.NoError(t, err)
	assert.Equal(t, "feature", w.Name)
	w, err = set.Workflow("bugfix")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "workflows", "bug.toml"), w.File)

	_, err = set.Workflow("epic")
	require.ErrorIs(t, err, ErrUnknownWorkflow)
	assert.EqualError(t, err, `unknown workflow "epic" (known: bugfix, feature)`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte("default_workflow = \"bugfix\"\n"), 0o644))
	set, err = Load(dir)
	require.NoError(t, err)
	w, err = set.Workflow("")
	require.NoError(t, err)
	assert.Equal(t, "bugfix", w.Name)
	assert.Equal(t, filepath.Join(dir, "config.toml"), set.Config.File)
}

// TestLoadEmptyWorkspace proves a workspace without config.toml or workflows/ loads,
// and only asking for a workflow fails.
func TestLoadEmptyWorkspace(t *testing.T) {
	set, err := Load(t.TempDir())
	require.NoError(t, err)
	assert.Empty(t, set.Names())
	_, err = set.Workflow("")
	require.ErrorIs(t, err, ErrUnknownWorkflow)
	assert.EqualError(t, err, `unknown workflow "feature" (no workflows loaded)`)
}

// TestLoadMissingDir proves a missing .agentx directory is an I/O error, not Errors.
func TestLoadMissingDir(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), ".agentx"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	var es Errors
	assert.False(t, errors.As(err, &es))
}

// TestLoadCollectsErrorsAcrossFiles proves Load reports the problems of every file
// together, sorted by file and line.
func TestLoadCollectsErrorsAcrossFiles(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"config.toml":            "[lock]\nwait = \"soon\"\n",
		"workflows/bug.toml":     "[[steps]]\nid = \"fix\"\nagent = \"engineer\"\nclarify_max_rounds = 0\n",
		"workflows/feature.toml": okStep,
		"workflows/story.toml":   "[[steps]]\nid = \"s\"\n\n[[steps]]\nid = \"s\"\nagent = \"engineer\"\n",
	})
	_, err := Load(dir)
	var es Errors
	require.True(t, errors.As(err, &es), "%v", err)
	got := make([]string, len(es))
	for i, e := range es {
		rel, rerr := filepath.Rel(dir, e.File)
		require.NoError(t, rerr)
		e.File = filepath.ToSlash(rel)
		got[i] = e.Error()
	}
	assert.Equal(t, []string{
		`config.toml:2: lock.wait: invalid duration "soon": want a Go duration like "30s" or "10m"`,
		`workflows/bug.toml:4: steps.clarify_max_rounds: must be between 1 and 20, got 0`,
		`workflows/story.toml:1: steps.agent: required (step "s" has none)`,
		`workflows/story.toml:5: steps.id: duplicate step id "s", first defined at line 1 (hint: step ids must be unique within a workflow)`,
	}, got)
}

// TestLoadWorkspaceRules proves the checks that need several files: a workflow name
// defined twice, and a default_workflow naming no workflow.
func TestLoadWorkspaceRules(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"workflows/a.toml": "[workflow]\nname = \"feature\"\n" + okStep,
		"workflows/b.toml": "# same name\n[workflow]\nname = \"feature\"\n" + okStep,
	})
	_, err := Load(dir)
	require.Error(t, err)
	assert.Equal(t, filepath.Join(dir, "workflows", "b.toml")+`:3: workflow.name: workflow "feature" is already defined in `+
		filepath.Join(dir, "workflows", "a.toml")+` (hint: workflow names must be unique; the name defaults to the file name)`, err.Error())

	dir = writeTree(t, map[string]string{
		"config.toml":            "# which workflow\n\ndefault_workflow = \"feture\"\n",
		"workflows/feature.toml": okStep,
		"workflows/bug.toml":     okStep,
	})
	_, err = Load(dir)
	require.Error(t, err)
	assert.Equal(t, filepath.Join(dir, "config.toml")+`:3: default_workflow: no workflow named "feture" in `+
		filepath.Join(dir, "workflows")+` (hint: did you mean "feature"?)`, err.Error())
}

// TestLoadPartial proves a workflow file that does not load is left out of
// LoadPartial's Set, with its problems, while the others load; asking for a
// workflow the Set does not hold fails with them (invalid data, not an
// unknown name); a problem in config.toml, which holds every rule, fails
// the whole load; Load stays strict.
func TestLoadPartial(t *testing.T) {
	broken := "[workflow]\nname = \"other\"\n\n[[steps]\nid = \"x\"\n" // line 5: the array of tables is not closed
	for _, tt := range []struct {
		name     string
		files    map[string]string
		fails    string   // the load's error, when it fails
		names    []string // the workflows loaded
		problems []string // Broken, files relative to the directory
		ask      string   // a workflow asked for that did not load
		askErr   string   // its error
	}{{
		name:     "a syntax error in another workflow",
		files:    map[string]string{"workflows/feature.toml": okStep, "workflows/other.toml": broken},
		names:    []string{"feature"},
		problems: []string{`workflows/other.toml:5: workflow: invalid TOML: `},
		ask:      "other",
		askErr:   `workflow "other" does not load:` + "\n" + `workflows/other.toml:5: workflow: invalid TOML: `,
	}, {
		name:     "the default workflow's own file",
		files:    map[string]string{"workflows/feature.toml": "[[steps]]\nid = \"s\"\n", "workflows/bug.toml": okStep},
		names:    []string{"bug"},
		problems: []string{`workflows/feature.toml:1: steps.agent: required (step "s" has none)`},
		ask:      "",
		askErr:   `workflow "feature" does not load:` + "\n" + `workflows/feature.toml:1: steps.agent: required`,
	}, {
		name:     "a workflow in no file named after it",
		files:    map[string]string{"workflows/feature.toml": okStep, "workflows/other.toml": broken},
		names:    []string{"feature"},
		problems: []string{`workflows/other.toml:5: workflow: invalid TOML: `},
		ask:      "epic",
		askErr:   `no workflow "epic" among those that load, and a workflow file does not load (it may be there):` + "\n" + `workflows/other.toml:5: `,
	}, {
		name: "a name defined twice: the second left out",
		files: map[string]string{
			"workflows/a.toml": "[workflow]\nname = \"feature\"\n" + okStep,
			"workflows/b.toml": "[workflow]\nname = \"feature\"\n" + okStep,
		},
		names:    []string{"feature"},
		problems: []string{`workflows/b.toml:2: workflow.name: workflow "feature" is already defined in `},
	}, {
		name:  "config.toml broken: nothing loads, every problem said",
		files: map[string]string{"config.toml": "[lock]\nwait = \"soon\"\n", "workflows/feature.toml": okStep, "workflows/other.toml": broken},
		fails: `config.toml:2: lock.wait: invalid duration "soon"`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			rel := func(s string) string { return strings.ReplaceAll(s, dir+string(filepath.Separator), "") }
			_, err := Load(dir)
			var es Errors
			require.ErrorAs(t, err, &es, "Load is strict")

			set, err := LoadPartial(dir)
			if tt.fails != "" {
				require.ErrorAs(t, err, &es)
				assert.Contains(t, rel(err.Error()), tt.fails)
				assert.Contains(t, rel(err.Error()), "workflows/other.toml:5", "the workflows' problems too")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.names, set.Names())
			require.Len(t, set.Broken(), len(tt.problems))
			for i, p := range tt.problems {
				assert.True(t, strings.HasPrefix(filepath.ToSlash(rel(set.Broken()[i].Error())), p), "%s", set.Broken()[i])
			}
			for _, name := range tt.names {
				_, err := set.Workflow(name)
				require.NoError(t, err, "the workflows that load are used")
			}
			if tt.askErr == "" {
				return
			}
			_, err = set.Workflow(tt.ask)
			var be *BrokenError
			require.ErrorAs(t, err, &be)
			require.ErrorAs(t, err, &es, "invalid data: errors.As finds the problems")
			assert.False(t, errors.Is(err, ErrUnknownWorkflow))
			assert.Contains(t, filepath.ToSlash(rel(err.Error())), tt.askErr)
		})
	}
}
