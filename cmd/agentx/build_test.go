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

// processEnv is the environment of an agentx process a test runs in the
// workspace root: this process's, with AGENTX_ROOT set, colours off, a
// configuration directory of the test's own (where agentx trust keeps its
// records, never the developer's), and env added last.
func processEnv(root string, env ...string) []string {
	return append(append(os.Environ(), "AGENTX_ROOT="+root, "NO_COLOR=1", "XDG_CONFIG_HOME="+filepath.Join(filepath.Dir(root), "config")), env...)
}

// trustWorkspace trusts, on this machine, the commands the workspace
// names, as a person would with agentx trust: a test that configures
// responders, resume or notify commands runs this after writing them.
func trustWorkspace(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	cmd.Args = append(cmd.Args[:1], "trust", "--yes")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agentx trust --yes: %v\n%s", err, out)
	}
}

// initWorkspace builds agentx, runs agentx init in a fresh directory and
// returns the directory and a maker of agentx commands run there, with
// AGENTX_ROOT set and colours off, and env added.
func initWorkspace(t *testing.T, env ...string) (root string, agentx func(args ...string) *exec.Cmd) {
	t.Helper()
	bin := buildAgentx(t)
	root = t.TempDir()
	env = processEnv(root, env...)
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
