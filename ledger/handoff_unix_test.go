//go:build unix

package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	good, err := json.Marshal(handedFile{V: 1, Issue: 7, PID: os.Getpid(), Question: asking("engineer", "q", 2).Question, At: t0})
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
