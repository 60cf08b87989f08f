package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// withoutTZ is this process's environment without TZ, plus extra.
func withoutTZ(extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TZ=") })
	return append(env, extra...)
}

// TestTimeZoneNotRead: agentx never uses the machine's time zone, so a
// command does not read it, although the TOML library asks for it while
// packages initialise. internal/utczone must be initialised before
// package time and the TOML library (it imports nothing but syscall); an
// import of time added to it would put it after them, and every command
// would read /etc/localtime again.
func TestTimeZoneNotRead(t *testing.T) {
	bin := buildAgentx(t)
	cmd := exec.Command(bin, "version")
	cmd.Env = withoutTZ("GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentx version: %v\n%s", err, out)
	}
	at := map[string]int{}
	for i, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			at[f[1]] = i
		}
	}
	zone, ok := at["github.com/agentx-cli/agentx/internal/utczone"]
	if !ok {
		t.Fatalf("internal/utczone is not initialised in agentx:\n%s", out)
	}
	for _, later := range []string{"time", "github.com/BurntSushi/toml/internal"} {
		if i, ok := at[later]; ok && i < zone {
			t.Errorf("%s is initialised before internal/utczone:\n%s", later, out)
		}
	}

	// Where strace is installed, see the file not being opened.
	if _, err := exec.LookPath("strace"); err != nil {
		return
	}
	cmd = exec.Command("strace", "-f", "-e", "trace=open,openat", bin, "version")
	cmd.Env = withoutTZ()
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Logf("strace could not trace agentx (%v); the initialisation order was checked", err)
		return
	}
	if strings.Contains(string(out), "localtime") {
		t.Errorf("agentx version read the machine's time zone:\n%s", out)
	}
}
