package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVersionSetAtLinkTime: the version a release stamps in with -ldflags
// -X, as the comment on buildVersion says, is the one agentx reports,
// both from version and from --version.
func TestVersionSetAtLinkTime(t *testing.T) {
	bin := buildAgentx(t, "-ldflags", "-X github.com/agentx-cli/agentx/internal/cli.buildVersion=v9.8.7-test")
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
