package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionSetAtLinkTime: the version a release stamps in with -ldflags
// -X, as the comment on buildVersion says, is the one agentx reports,
// both from version and from --version.
func TestVersionSetAtLinkTime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agentx binary")
	}
	bin := filepath.Join(t.TempDir(), "agentx")
	flags := "-X github.com/agentx-cli/agentx/internal/cli.buildVersion=v9.8.7-test"
	if out, err := exec.Command("go", "build", "-ldflags", flags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if !strings.HasPrefix(string(out), "agentx v9.8.7-test") {
			t.Errorf("%v printed %q, want the version set at link time", args, out)
		}
	}
}
