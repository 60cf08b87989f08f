package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// buildAgentx builds this command into a temporary directory, with the
// go build flags given, and returns the binary's path; a short test run
// skips the test instead.
func buildAgentx(t *testing.T, flags ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the agentx binary")
	}
	bin := filepath.Join(t.TempDir(), "agentx")
	args := append(append([]string{"build"}, flags...), "-o", bin, ".")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
