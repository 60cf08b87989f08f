package remote_test

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHugeBodyIsNotHeld: on a host with no local copy, a shared ledger far
// over the size limit is refused without the command, or the git it runs,
// holding it in memory: ready --issue N exits 7 with a peak resident set
// (measured by /usr/bin/time, which counts the git processes it waited
// for) well under the body's size. The bare repository streams big objects
// as a server would: its memory is not the host's.
func TestHugeBodyIsNotHeld(t *testing.T) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		t.Skip("no /usr/bin/time to measure the peak resident set")
	}
	w := newWorld(t, 1, "", "")
	git(t, w.bare, "config", "core.bigFileThreshold", "16m")
	const body = 80 << 20
	hash := exec.Command("git", "-C", w.bare, "hash-object", "-w", "--stdin")
	hash.Stdin = io.MultiReader(strings.NewReader(`{"issueNumber": 11, "clarifications": [], "pad": "`),
		io.LimitReader(repeat('x'), body), strings.NewReader(`"}`))
	out, err := hash.Output()
	require.NoError(t, err)
	c := w.plant(11, "100644 blob "+strings.TrimSpace(string(out))+"\tissue-11.json\n")

	cmd := exec.Command("/usr/bin/time", "-f", "peak %M", w.bin, "ready", "--issue", "11")
	cmd.Dir = w.hosts[0]
	cmd.Env = append(os.Environ(), "AGENTX_NO_MONITOR=1", "GIT_TERMINAL_PROMPT=0")
	stderr, _ := cmd.CombinedOutput()
	assert.Equal(t, 7, cmd.ProcessState.ExitCode(), "%s", stderr)
	assert.Contains(t, string(stderr), c)
	var kb int
	for _, l := range strings.Split(string(stderr), "\n") {
		if n, ok := strings.CutPrefix(l, "peak "); ok {
			kb, _ = strconv.Atoi(strings.TrimSpace(n))
		}
	}
	require.NotZero(t, kb, "%s", stderr)
	assert.Less(t, kb, body/1024/2, "peak resident set %d KiB for a body of %d MiB", kb, body>>20)
}

// repeat is an endless stream of b.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
