package realclient

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// clientsDir is where npm ci installs the pinned clients.
func clientsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "clients")
}

// Binary is the path of the installed client name ("claude" or "codex").
// It skips t when the clients are not installed, and fails it in CI.
func Binary(t testing.TB, name string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("the real %s is run on Linux only", name)
	}
	p := filepath.Join(clientsDir(), "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed: .ci/run installs it (npm ci in internal/testenv/realclient/testdata/clients)", name)
		}
		t.Skipf("%s is not installed: run npm ci in internal/testenv/realclient/testdata/clients", name)
	}
	return p
}

// CodexModel is the model CodexEnv configures; OpenAI lists it on
// GET /v1/models.
const CodexModel = "gpt-agentx-fake"
