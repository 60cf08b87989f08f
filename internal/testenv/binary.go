package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// AgentxBinary builds the agentx binary once per test process, alone, as
// go install .../cmd/agentx@latest does, and returns its path. Call
// RemoveBinary from TestMain to remove it.
func AgentxBinary(t testing.TB) string {
	t.Helper()
	path, err := BuildAgentx()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// BuildAgentx is AgentxBinary for a goroutine (it cannot fail a test).
func BuildAgentx() (string, error) {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentx-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "agentx")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", dir, "github.com/agentx-cli/agentx/cmd/agentx").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		return "", fmt.Errorf("go build: %w", buildErr)
	}
	return binPath, nil
}

// RemoveBinary removes what AgentxBinary built, if anything.
func RemoveBinary() {
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
}

// Trust has a person trust the commands (and api_url addresses) of the
// workspace at dir, with agentx binary bin, in a trust store of the test's
// own: it returns the environment entry that points a process at that
// store (XDG_CONFIG_HOME), to add to the environment of every agentx
// process that should find the workspace trusted.
func Trust(t testing.TB, bin, dir string) string {
	t.Helper()
	env := "XDG_CONFIG_HOME=" + t.TempDir()
	c := exec.Command(bin, "trust", "--yes")
	c.Dir = dir
	c.Env = append(os.Environ(), "AGENTX_ROOT="+dir, "AGENTX_AGENT=", env)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("agentx trust --yes in %s: %v: %s", dir, err, out)
	}
	return env
}
