package ledger

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyPlumbing: the ledger package is the model and the local
// store; replication reaches it only through Replicator. It imports, of
// this module, lock and internal plumbing, never internal/remote.
func TestImportsOnlyPlumbing(t *testing.T) {
	const mod = "github.com/agentx-cli/agentx/"
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			own, ok := strings.CutPrefix(path, mod)
			if !ok {
				continue
			}
			if own != "lock" && (!strings.HasPrefix(own, "internal/") || own == "internal/remote" || strings.HasPrefix(own, "internal/remote/")) {
				t.Errorf("%s imports %s: ledger may import only lock and internal plumbing", name, path)
			}
		}
	}
}
