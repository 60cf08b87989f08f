package router

import (
	"go/build"
	"strings"
	"testing"
)

// TestNoRemoteImport: the hub reaches remote mode only through the store's
// Replicator (ledger.Pulled, ledger.Outcome, ledger.IDChecker), never by
// importing internal/remote, which would tie every hub to git.
func TestNoRemoteImport(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range pkg.Imports {
		if strings.HasSuffix(path, "/internal/remote") || strings.Contains(path, "/internal/remote/") {
			t.Errorf("router imports %s: the hub reaches remote mode through ledger.Replicator", path)
		}
	}
}
