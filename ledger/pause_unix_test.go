//go:build unix

package ledger

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/lock"
)

// TestPausedWriterAndForeignTool: a writer is SIGSTOPped while it holds the
// ledger's lock, past the stale age; agentx writers queue behind it (a live
// holder is never taken over), while a foreign AgentX tool, which judges
// locks by age only, takes the lock file over and writes the ledger. On
// SIGCONT the paused writer finds its lock is no longer its own and fails
// without writing (never exit 0 with a lost write); the queued writers then
// all land; every acknowledged write and the foreign one are there, once.
func TestPausedWriterAndForeignTool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	s := NewStore(dir, lock.Options{}, nil)
	_, err := s.Update(context.Background(), 7, ask(s, "engineer", "architect", "before"))
	require.NoError(t, err)

	paused := helperProcess(dir, "pause")
	out, err := paused.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	paused.Stderr = &stderr
	require.NoError(t, paused.Start())
	defer paused.Process.Kill()
	sc := bufio.NewScanner(out)
	require.True(t, sc.Scan(), "the paused writer never got the lock")
	require.Equal(t, "IN", sc.Text())
	require.NoError(t, paused.Process.Signal(syscall.SIGSTOP))

	// agentx writers queue behind the paused holder
	const procs, each = 4, 5
	var wg sync.WaitGroup
	acks := make(chan string, procs*each)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := helperCmd(dir, each).Output()
			assert.NoError(t, err)
			for _, line := range strings.Split(string(o), "\n") {
				if id, ok := strings.CutPrefix(line, "ACK "); ok {
					acks <- id
				}
			}
		}()
	}

	// the foreign tool: once the lock file is older than its stale age it
	// deletes it, takes the lock (O_EXCL), writes the ledger and releases
	lockPath := s.Path(7) + lock.Suffix
	time.Sleep(1200 * time.Millisecond)
	require.NoError(t, os.Remove(lockPath))
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	require.NoError(t, err, "the foreign tool takes the lock over")
	fmt.Fprintf(f, `{"agent":"cli","created":%q}`, time.Now().UTC().Format(time.RFC3339))
	require.NoError(t, f.Close())
	l, err := s.Read(7)
	require.NoError(t, err)
	require.NoError(t, ask(s, "product-manager", "architect", "the foreign tool's question")(l))
	foreignID := l.Clarifications[len(l.Clarifications)-1].ID
	data, err := Encode(l)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.Path(7)+".foreign", data, 0o644))
	require.NoError(t, os.Rename(s.Path(7)+".foreign", s.Path(7)))
	require.NoError(t, os.Remove(lockPath))

	require.NoError(t, paused.Process.Signal(syscall.SIGCONT))
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	werr := paused.Wait()
	assert.Equal(t, []string{"LOST"}, rest, "the paused writer reports its write as not made; stderr: %s", stderr.String())
	var ee *exec.ExitError
	require.ErrorAs(t, werr, &ee)
	assert.Equal(t, 3, ee.ExitCode())
	assert.Contains(t, stderr.String(), "lost while held")

	wg.Wait()
	close(acks)
	l, err = s.Read(7)
	require.NoError(t, err)
	have := map[string]int{}
	for _, c := range l.Clarifications {
		have[c.ID]++
		assert.NotEqual(t, "the paused writer's question", c.Thread[0].Body)
	}
	n := 0
	for id := range acks {
		n++
		assert.Equal(t, 1, have[id], "acknowledged %s", id)
	}
	assert.Equal(t, procs*each, n)
	assert.Equal(t, 1, have[foreignID], "the foreign write stands")
	assert.Len(t, l.Clarifications, 1+1+procs*each, "the first, the foreign one, and every queued write; not the paused one")
}
