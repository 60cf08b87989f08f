package main

import (
	"os"
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

// initWorkspace builds agentx, runs agentx init in a fresh directory and
// returns the directory and a maker of agentx commands run there, with
// AGENTX_ROOT set and colours off, and env added.
func initWorkspace(t *testing.T, env ...string) (root string, agentx func(args ...string) *exec.Cmd) {
	t.Helper()
	bin := buildAgentx(t)
	root = t.TempDir()
	env = append(append(os.Environ(), "AGENTX_ROOT="+root, "NO_COLOR=1"), env...)
	agentx = func(args ...string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Dir, c.Env = root, env
		return c
	}
	if out, err := agentx("init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	return root, agentx
}
