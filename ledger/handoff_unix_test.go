//go:build unix

package ledger

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/lock"
)

// TestHandoffHostileFiles: a hand-off directory that is a link is not
// written through; files in it that are not questions of the issue, or
// not regular files, are left alone by holders; an asker that is gone is
// not made a question of.
func TestHandoffHostileFiles(t *testing.T) {
	s := newTestStore(t)
	spool := s.Path(7) + HandoffSuffix
	require.NoError(t, os.MkdirAll(filepath.Dir(spool), 0o755))
	elsewhere := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, spool))
	f, err := s.Lock(context.Background(), 7)
	require.NoError(t, err)
	r := askAsync(s, 7, asking("engineer", "Which layout?", 1))
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, f.Release())
	got := <-r
	require.NoError(t, got.err, "the ask waited and made its question itself")
	ents, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, ents, "nothing written through the link")

	require.NoError(t, os.Remove(spool))
	require.NoError(t, os.Mkdir(spool, 0o755))
	q := asking("engineer", "q", 2).Question
	good, err := json.Marshal(handedFile{V: 1, Issue: 7, PID: os.Getpid(), Question: &q, At: t0})
	require.NoError(t, err)
	other := strings.Replace(string(good), `"issue":7`, `"issue":8`, 1)
	dead := strings.Replace(string(good), fmt.Sprintf(`"pid":%d`, os.Getpid()), `"pid":2147483000`, 1)
	files := map[string]string{
		"garbage.ask":     "{not json",
		"other-issue.ask": other,
		"newer.ask":       strings.Replace(string(good), `"v":1`, `"v":2`, 1),
		"dead-asker.ask":  dead,
		"huge.ask":        strings.Repeat(" ", maxHandedSize+1),
	}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(spool, name), []byte(data), 0o600))
	}
	target := filepath.Join(elsewhere, "target")
	require.NoError(t, os.WriteFile(target, good, 0o600))
	require.NoError(t, os.Symlink(target, filepath.Join(spool, "link.ask")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(spool, "fifo.ask"), 0o600))
	f, err = s.Lock(context.Background(), 7)
	require.NoError(t, err)
	batch := drainAsHolder(t, s, f)
	require.NoError(t, f.Release())
	assert.Empty(t, batch, "nothing made")
	l, err := s.Read(7)
	require.NoError(t, err)
	assert.Len(t, l.Clarifications, 1)
	left := spoolLeft(t, s, 7)
	assert.NotContains(t, left, "dead-asker.ask", "a gone asker's question is removed")
	assert.Subset(t, left, []string{"garbage.ask", "other-issue.ask", "newer.ask", "huge.ask", "link.ask", "fifo.ask"})
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, string(good), string(data))
}

// TestHandedAsksUnderKillsAndPauses: askers on one issue, each a process
// that asks and then notes on its question (a change, Store.Hand), hand
// their questions and notes to whichever holds the lock while some are
// killed (a holder among them, at any point of its write or of its
// telling) and some paused and resumed: every acknowledged question is in
// the ledger once, under the id its asker was given, every acknowledged
// note on its record once, nothing is made twice, ids stay dense, and the
// holders made some of them.
func TestHandedAsksUnderKillsAndPauses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	procs, run := 10, 6*time.Second
	if testenv.Race {
		procs, run = 6, 3*time.Second // see testenv.Race
	}
	dir := t.TempDir()
	type asker struct {
		cmd  *exec.Cmd
		done chan struct{}
	}
	var (
		mu    sync.Mutex
		acked = map[string]string{} // id → question
		noted = map[string]string{} // note → id
		// handed counts the acknowledgements the holder made
		handed, kills, pauses int
		errs                  []string
	)
	start := func() *asker {
		cmd := helperProcess(dir, "ask")
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		a := &asker{cmd: cmd, done: make(chan struct{})}
		go func() {
			defer close(a.done)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) == 4 && f[0] == "NOTE" {
					mu.Lock()
					noted[f[2]] = f[1]
					if f[3] == "1" {
						handed++
					}
					mu.Unlock()
					continue
				}
				if len(f) != 4 || f[0] != "ACK" {
					continue
				}
				mu.Lock()
				if q, ok := acked[f[1]]; ok {
					errs = append(errs, fmt.Sprintf("%s acknowledged twice: %s and %s", f[1], q, f[2]))
				}
				acked[f[1]] = f[2]
				if f[3] == "1" {
					handed++
				}
				mu.Unlock()
			}
			if err := cmd.Wait(); err != nil {
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("asker %d: %v: %s", cmd.Process.Pid, err, stderr.String()))
					mu.Unlock()
				}
			}
		}()
		return a
	}
	askers := make([]*asker, procs)
	for i := range askers {
		askers[i] = start()
	}
	deadline := time.Now().Add(run)
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(20+rand.IntN(60)) * time.Millisecond)
		i := rand.IntN(procs)
		p := askers[i].cmd.Process
		if rand.IntN(2) == 0 {
			_ = p.Signal(syscall.SIGKILL)
			<-askers[i].done
			askers[i] = start()
			kills++
			continue
		}
		_ = p.Signal(syscall.SIGSTOP)
		time.Sleep(time.Duration(10+rand.IntN(150)) * time.Millisecond)
		_ = p.Signal(syscall.SIGCONT)
		pauses++
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644))
	for _, a := range askers {
		select {
		case <-a.done:
		case <-time.After(2 * time.Minute):
			t.Fatal("an asker did not stop")
		}
	}
	require.Empty(t, errs)

	s := NewStore(dir, lock.Options{}, nil)
	// one more ask makes or drops what killed askers left for a holder
	_, err := s.Ask(context.Background(), 7, asking("reviewer", "the last question", 0))
	require.NoError(t, err)
	l, err := s.Read(7)
	require.NoError(t, err)
	require.NoError(t, l.Validate())
	bodies := map[string]string{}
	notes := map[string][]string{} // note → the records that hold it
	for i, c := range l.Clarifications {
		if c.Sealed() {
			c = l.Find(c.ID)
		}
		require.Equal(t, FormatID(7, i+1), c.ID, "ids dense")
		if c.X != nil {
			for _, a := range c.X.Assumptions {
				notes[a.Body] = append(notes[a.Body], c.ID)
			}
		}
		body := c.Thread[0].Body
		if prev, ok := bodies[body]; ok {
			t.Errorf("%s made twice: %s and %s", body, prev, c.ID)
		}
		bodies[body] = c.ID
	}
	for id, body := range acked {
		assert.Equal(t, id, bodies[body], "acknowledged %s is in the ledger under the id its asker was given", body)
	}
	for body, id := range noted {
		assert.Equal(t, []string{id}, notes[body], "acknowledged %s is on its record once", body)
	}
	for body, ids := range notes {
		assert.Len(t, ids, 1, "%s made once", body)
	}
	for _, name := range spoolLeft(t, s, 7) {
		assert.False(t, strings.HasSuffix(name, askEnd) || strings.HasSuffix(name, changeEnd), "a question or change left: %s", name)
	}
	t.Logf("%d askers, %d kills, %d pauses: %d records, %d questions and %d notes acknowledged, %d of them made by the holder",
		procs, kills, pauses, len(l.Clarifications), len(acked), len(noted), handed)
	assert.Greater(t, kills, 5)
	assert.NotZero(t, handed, "holders made some of the questions")
}
