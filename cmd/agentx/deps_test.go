package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestInitDoesNoWork: one binary holds every command, so what a command
// that needs little (an ask, a hook) pays at start is what every package
// linked into agentx does while it initialises. agentx's own packages do
// nothing there but set constants: a client, schema, table or compiled
// pattern is made when a command first needs it. internal/utczone is the
// exception, by design (it clears TZ for the libraries' own init, see its
// doc). The third-party packages' init is theirs; docs/performance.md
// measures it.
func TestInitDoesNoWork(t *testing.T) {
	bin := buildAgentx(t)
	cmd := exec.Command(bin, "version")
	cmd.Env = withoutTZ("GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentx version: %v\n%s", err, out)
	}
	const own = "github.com/agentx-cli/agentx/"
	const budget = 512 // bytes a package's init may allocate: a few small values
	seen := 0
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @T ms, D ms clock, B bytes, N allocs
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != "init" || !strings.HasPrefix(f[1], own) {
			continue
		}
		seen++
		if f[1] == own+"internal/utczone" {
			continue
		}
		bytes, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("unexpected inittrace line %q", line)
		}
		if bytes > budget {
			t.Errorf("%s allocates %d bytes while it initialises (over %d): make what it builds on first use\n%s", f[1], bytes, budget, line)
		}
	}
	if seen < 5 {
		t.Fatalf("inittrace listed %d of agentx's packages: the output's format changed?\n%s", seen, out)
	}
}
