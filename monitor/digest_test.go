package monitor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/fstime"
	"github.com/agentx-cli/agentx/ledger"
)

// planned is what a full scan would act on now (a dry run reads every
// issue), by id.
func (w *world) planned() []string {
	m := New(w.hub())
	m.DryRun = true
	var ids []string
	for _, f := range m.Run(context.Background(), nil).Findings {
		ids = append(ids, f.ID)
	}
	slices.Sort(ids)
	return ids
}

// sideNoNote is a side run with no quiet note to skip it: as when another
// process's write voided the note (settle dates directories back to one
// fixed moment, which a note would take for no change).
func (w *world) sideNoNote() *Report {
	w.t.Helper()
	err := os.Remove(filepath.Join(w.dir, ".agentx", "state", QuietFile))
	if err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
	return w.side()
}

func acted(r *Report) []string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestSideDigest: a side run looks only at the issues whose files changed
// or in which something fell due since a run found nothing to do there
// (DigestFile), and acts on exactly what a full scan would: a question
// falling due in an issue it did not look at, a ledger another tool
// replaced, a digest of another build or damaged.
func TestSideDigest(t *testing.T) {
	// files count as settled at once (their times are trusted)
	defer func(d fstime.Settle) { quietSettle = d }(quietSettle)
	quietSettle = fstime.Settle{}

	w := newWorld(t, "", "")
	ids := map[int]string{}
	for _, n := range []int{1, 2, 3} {
		ids[n] = w.ask(n, "engineer", "architect", "Which port for service "+string(rune('0'+n))+"?")
	}
	digestFile := filepath.Join(w.dir, ".agentx", "state", DigestFile)

	w.set(at(1))
	assert.Empty(t, w.planned())
	assert.Equal(t, 3, w.sideNoNote().Open, "the first run looks at every issue")
	require.FileExists(t, digestFile)
	assert.Zero(t, w.sideNoNote().Open, "nothing changed, nothing due")

	// a new question on issue 2: only issue 2 is looked at
	w.set(at(2))
	id22 := w.ask(2, "engineer", "architect", "And the timeout?")
	assert.Empty(t, w.planned())
	assert.Equal(t, 2, w.sideNoNote().Open, "issue 2's two questions, not issues 1 and 3")
	w.ask(4, "engineer", "architect", "Which cache?")
	assert.Equal(t, 1, w.sideNoNote().Open, "only issue 4")

	// at 31 minutes the first three questions fall due, in issues the
	// runs did not look at: they are looked at, and acted on as a full
	// scan would
	w.set(at(31))
	want := w.planned()
	require.Equal(t, []string{ids[1], ids[2], ids[3]}, want)
	r := w.sideNoNote()
	assert.Equal(t, want, acted(r))
	for _, n := range []int{1, 2, 3} {
		assert.Equal(t, ledger.Stale, w.get(ids[n]).Status)
	}
	w.set(at(33))
	want = w.planned()
	require.Equal(t, []string{id22, "CLR-4-001"}, want, "issue 2's second question, issue 4's")
	assert.Equal(t, want, acted(w.sideNoNote()))

	// another tool replaces issue 4's ledger (its index file unchanged):
	// issue 4 is looked at again
	w.set(at(34))
	w.sideNoNote()
	assert.Zero(t, w.sideNoNote().Open, "everything noted, nothing due")
	store := w.hub().Store
	// an index file written anew (as a rebuild does) while its ledger
	// stays as it was: the open questions are the ledger's, nothing to read
	ix, err := os.ReadFile(store.IssueIndexPath(3))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(store.IssueIndexPath(3)+".tool", ix, 0o644))
	require.NoError(t, os.Rename(store.IssueIndexPath(3)+".tool", store.IssueIndexPath(3)))
	assert.Zero(t, w.sideNoNote().Open, "issue 3's ledger did not change")
	data, err := os.ReadFile(store.Path(4))
	require.NoError(t, err)
	tmp := store.Path(4) + ".tool"
	require.NoError(t, os.WriteFile(tmp, append(data, '\n'), 0o644))
	require.NoError(t, os.Rename(tmp, store.Path(4)))
	assert.Equal(t, 1, w.sideNoNote().Open, "issue 4's ledger was replaced: looked at")
	assert.Zero(t, w.sideNoNote().Open, "and not again: its index file was made afresh from the ledger read")
	assert.Empty(t, w.planned())

	// a write whose files are too new to note only voids a note: the
	// digest is not rewritten (a fleet writing its issues all the time
	// does not rewrite it at every write)
	quietSettle = fstime.Settle{Fine: time.Hour, Coarse: time.Hour}
	before, err := os.ReadFile(digestFile)
	require.NoError(t, err)
	w.ask(1, "engineer", "architect", "And the port range?")
	assert.Equal(t, 2, w.sideNoNote().Open, "issue 1's two questions")
	after, err := os.ReadFile(digestFile)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
	quietSettle = fstime.Settle{}

	// a damaged digest, or one of another build, is not trusted
	require.NoError(t, os.WriteFile(digestFile, []byte("v2 other-build \"\"\n1 2 3\n"), 0o644))
	assert.Equal(t, 6, w.sideNoNote().Open, "every issue looked at again")
	assert.Empty(t, w.planned())
}

// FuzzReadDigest: whatever the file holds, reading it never fails or
// panics, keeps only well-formed lines of valid issues, and what it keeps
// is written back and read again as the same.
func FuzzReadDigest(f *testing.F) {
	const header = `v2 build "rules"`
	f.Add([]byte(header + "\n1 2 3 4 5\n42 9 10 11 12\n"))
	f.Add([]byte(header + "\n-1 2 3 4 5\n1 2 3\n9223372036854775807 1 1 1 1\n1 2 3 4 5 6 7 8\n"))
	f.Add([]byte("v2 other\n1 2 3 4 5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "digest")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		got := readDigest(path, header)
		for n := range got {
			require.NoError(t, ledger.ValidateIssue(n))
		}
		d := &digest{header: header}
		require.NoError(t, os.WriteFile(path, d.encode(got), 0o644))
		require.Equal(t, got, readDigest(path, header))
	})
}

// TestSideDigestNotesSoon: on a file system with fine times, an issue
// written a little over a tenth of a second ago is noted, so the side
// runs after it do not read it again (a fleet's agents each writing their
// own issue read only the issues written in the last moment, not in the
// last two seconds).
func TestSideDigestNotesSoon(t *testing.T) {
	w := newWorld(t, "", "")
	w.ask(1, "engineer", "architect", "Which port?")
	w.ask(2, "engineer", "architect", "Which cache?")
	st, err := os.Stat(w.hub().Store.Path(2))
	require.NoError(t, err)
	if st.ModTime().Nanosecond()%int(time.Millisecond) == 0 {
		t.Skip("this file system keeps whole milliseconds: the coarse wait applies")
	}
	assert.Equal(t, 2, w.sideNoNote().Open, "both issues looked at, too new to note")
	assert.Equal(t, 2, w.sideNoNote().Open, "and again")
	time.Sleep(quietSettle.Fine + 20*time.Millisecond)
	assert.Equal(t, 2, w.sideNoNote().Open, "looked at once more, and noted")
	assert.Zero(t, w.sideNoNote().Open, "nothing changed since: nothing read")
}
