//go:build unix

package remote_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKilledDuringPush: the local copy's next version is written beside
// it while git pushes; an agentx process killed then (SIGKILL, with its
// git) leaves the copy as it was, whether or not its push had reached the
// remote, and the next ask on the host finds the shared ledger as it is:
// nothing that reached the remote is lost, no id is given twice, and the
// file left beside the copy is replaced.
func TestKilledDuringPush(t *testing.T) {
	w := newWorld(t, 1, "", "")
	assert.Equal(t, "CLR-3-001", w.ask(0, 3, "first", false))
	copyPath := filepath.Join(w.hosts[0], ".agentx", "state", "clarifications", "issue-3.json")
	beside := filepath.Join(filepath.Dir(copyPath), ".issue-3.json.tmp-locked")

	for _, tc := range []struct {
		name    string
		wrapper string   // receive-pack, as git runs it on the remote
		next    string   // the id the next ask is given
		remote  []string // the shared ledger then
	}{
		{"before the remote took it", "touch \"$MARK\"\nsleep 60\nexec git-receive-pack \"$@\"\n", "CLR-3-002",
			[]string{"CLR-3-001 first", "CLR-3-002 after"}},
		{"after the remote took it", "git-receive-pack \"$@\"\ntouch \"$MARK\"\nsleep 60\n", "CLR-3-004",
			[]string{"CLR-3-001 first", "CLR-3-002 after", "CLR-3-003 killed", "CLR-3-004 after"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mark := filepath.Join(dir, "pushing")
			pack := filepath.Join(dir, "receive-pack")
			require.NoError(t, os.WriteFile(pack, []byte("#!/bin/sh\n"+tc.wrapper), 0o755))
			before, err := os.ReadFile(copyPath)
			require.NoError(t, err)

			cmd := exec.Command(w.bin, "clarify", "ask", "--issue", "3", "--from", "engineer", "--to", "architect",
				"--topic", "killed", "--question", "killed?", "--non-blocking", "--json")
			cmd.Dir = w.hosts[0]
			cmd.Env = append(os.Environ(), "AGENTX_NO_MONITOR=1", "USER=tester", "GIT_TERMINAL_PROMPT=0", "MARK="+mark,
				"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=remote.origin.receivepack", "GIT_CONFIG_VALUE_0="+pack)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			require.NoError(t, cmd.Start())
			killed := false
			kill := func() {
				if !killed {
					killed = true
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					_ = cmd.Wait()
				}
			}
			defer kill() // and its git, whatever the test found
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, err := os.Stat(mark); err == nil {
					break
				}
				require.True(t, time.Now().Before(deadline), "the push never started")
				time.Sleep(5 * time.Millisecond)
			}
			// mid-push: the next version waits beside the copy, which is
			// as it was
			next, err := os.ReadFile(beside)
			require.NoError(t, err, "the next version is written while git pushes")
			assert.Contains(t, string(next), `"killed"`)
			now, err := os.ReadFile(copyPath)
			require.NoError(t, err)
			assert.Equal(t, before, now, "readers see the copy as it was")
			kill()

			now, err = os.ReadFile(copyPath)
			require.NoError(t, err)
			assert.Equal(t, before, now, "killed: the copy as it was")
			// the next ask: refused on the copy when the killed one's push
			// had landed, made again on the shared ledger
			assert.Equal(t, tc.next, w.ask(0, 3, "after", false))
			assert.NoFileExists(t, beside, "replaced by the next write")
			w.run(0, "", "sync")
			assert.Equal(t, tc.remote, w.topics(0, 3))
			chain := w.chain(3)
			var got []string
			for _, c := range chain[len(chain)-1].Clarifications {
				got = append(got, c.ID+" "+c.Topic)
			}
			assert.Equal(t, tc.remote, got, "the remote")
		})
	}
}
