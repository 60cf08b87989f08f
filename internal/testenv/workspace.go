package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentx-cli/agentx/workflow"
)

// IndexBuiltFile is ledger.IndexBuiltFile, which this package cannot import
// (ledger's tests use it); a ledger test checks the two agree.
const IndexBuiltFile = "index/built-v2"

// WriteWorkspace writes files (paths relative to .agentx, such as
// "config.toml" or "workflows/feature.toml") under dir/.agentx and returns
// the rules loaded from them.
func WriteWorkspace(t testing.TB, dir string, files map[string][]byte) *workflow.Set {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, ".agentx", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := workflow.Load(filepath.Join(dir, ".agentx"))
	if err != nil {
		t.Fatal(err)
	}
	// as init does: the (empty) index is built from the start
	marker := filepath.Join(dir, ".agentx", "state", filepath.FromSlash(IndexBuiltFile))
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return rules
}

// Workspace writes the default workspace (`agentx init`'s files, with
// extraConfig appended to config.toml) in a fresh temp dir and returns the
// dir and its rules.
func Workspace(t testing.TB, extraConfig string) (string, *workflow.Set) {
	t.Helper()
	files := workflow.DefaultFiles()
	files["config.toml"] = append(files["config.toml"], []byte("\n"+extraConfig+"\n")...)
	dir := t.TempDir()
	return dir, WriteWorkspace(t, dir, files)
}
