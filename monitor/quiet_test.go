package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/internal/buildid"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// settle dates the ledger and index directories back to a fixed moment
// long ago, as if the last change were then.
func (w *world) settle() {
	w.t.Helper()
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	state := filepath.Join(w.dir, ".agentx", "state")
	for _, d := range []string{ledger.ClarificationsDir, ledger.IndexDir} {
		require.NoError(w.t, os.Chtimes(filepath.Join(state, d), old, old))
	}
}

func (w *world) side() *Report {
	m := New(w.hub())
	m.SkipQuiet = true
	return m.Run(context.Background(), nil)
}

// TestSkipQuiet: after a scan that found nothing to do, the side monitor
// skips the scan while nothing changed and nothing fell due: it does not
// even read the index (a damaged index file goes unseen); the moment the
// question falls due, or a ledger changes, or the settings do, it scans.
func TestSkipQuiet(t *testing.T) {
	w := newWorld(t, "", "")
	id := w.ask(42, "engineer", "architect", "PostgreSQL or SQLite?")
	w.responder("architect")
	quietFile := filepath.Join(w.dir, ".agentx", "state", QuietFile)

	// a change within the last moments is not trusted: no note
	w.set(at(1))
	assert.True(t, w.side().Quiet())
	assert.NoFileExists(t, quietFile)

	w.settle()
	r := w.side()
	assert.Equal(t, 1, r.Open, "scanned")
	require.FileExists(t, quietFile)

	// damage issue 42's index file in place (its directory's time does not
	// move): a skipped run does not even read it
	ixFile := filepath.Join(w.dir, ".agentx", "state", ledger.IndexDir, "issue-42.json")
	require.NoError(t, os.WriteFile(ixFile, []byte("{not json"), 0o644))
	w.settle()
	w.set(at(5))
	r = w.side()
	assert.Equal(t, 0, r.Open, "skipped: nothing changed and nothing due before 30 min")
	assert.Empty(t, r.Problems)
	assert.Empty(t, r.Findings)
	assert.Equal(t, 1, w.run(nil).Open, "a plain run scans (the ledger stands in for the damaged file)")

	// a note is trusted 5 minutes at most (a ledger fixed by hand in place
	// moves no directory's time): at 7 minutes it scans, and notes again
	w.settle()
	w.set(at(7))
	assert.Equal(t, 1, w.side().Open, "past the note's 5 minutes: scanned")
	w.set(at(8))
	assert.Equal(t, 0, w.side().Open, "noted again")

	// a note of another build of agentx is not trusted: its detectors may
	// differ
	note, err := os.ReadFile(quietFile)
	require.NoError(t, err)
	other := strings.Replace(string(note), " "+buildid.ID()+" ", " v0.9.0@0123abc ", 1)
	require.NotEqual(t, string(note), other)
	require.NoError(t, os.WriteFile(quietFile, []byte(other), 0o644))
	assert.Equal(t, 1, w.side().Open, "another build's note: scanned")
	assert.Equal(t, 0, w.side().Open, "and noted by this one")

	// the settings change: a scan (the damaged file is read from the
	// ledger, which it does not match)
	delete(w.rules.Config.Agents, "architect")
	r = w.side()
	assert.Equal(t, 1, r.Open, "settings changed: scanned")
	w.responder("architect")
	w.settle()
	w.side() // noted quiet again, with the responder

	// due: at 31 minutes the question is stale, and the scan finds it
	w.set(at(31))
	r = w.side()
	require.Equal(t, []string{id + " mark-stale done"}, results(r))
	assert.Equal(t, ledger.Answered, w.get(id).Status)

	// a new ledger write changes the directories: a scan
	w.settle()
	w.set(at(40))
	w.side()
	w.ask(7, "engineer", "architect", "Which port?")
	r = w.side()
	assert.Equal(t, 2, r.Open, "a new question: scanned")
}

// TestSkipQuietNoLinks: the note is never written through a symbolic link
// on its way (a cloned repository's state/monitor pointing elsewhere).
func TestSkipQuietNoLinks(t *testing.T) {
	w := newWorld(t, "", "")
	w.ask(42, "engineer", "architect", "PostgreSQL or SQLite?")
	elsewhere := t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(w.dir, ".agentx", "state", "monitor")))
	w.settle()
	w.set(at(1))
	assert.Equal(t, 1, w.side().Open)
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written through the link")
	assert.Equal(t, 1, w.side().Open, "no note: it scans each time")
}
