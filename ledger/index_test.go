package ledger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/fstime"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/internal/textsim"
	"github.com/agentx-cli/agentx/lock"
)

func indexIDs(t *testing.T, s *Store) map[int][]string {
	t.Helper()
	ix, skipped, err := s.ReadIndex()
	require.NoError(t, err)
	require.Empty(t, skipped)
	out := map[int][]string{}
	for n, es := range ix.Issues {
		for _, e := range es {
			out[n] = append(out[n], e.ID+" "+string(e.Status))
		}
	}
	return out
}

func move(to Status) func(*Ledger) error {
	return func(l *Ledger) error {
		c := l.Clarifications[0]
		if to == Answered {
			c.Thread = append(c.Thread, ThreadEntry{Round: 1, From: c.To, Type: Answer, Body: "yes", Timestamp: c.Created})
		}
		return c.Move(to)
	}
}

// TestUpdateMaintainsIndex proves every Update leaves the index holding
// exactly the open clarifications, and that it equals a rebuild.
func TestUpdateMaintainsIndex(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	_, _, err := s.RebuildIndex(ctx) // as init does
	require.NoError(t, err)
	steps := []struct {
		issue int
		fn    func(*Ledger) error
		want  map[int][]string
	}{
		{42, ask(s, "engineer", "architect", "Dual adapter?"), map[int][]string{42: {"CLR-42-001 pending"}}},
		{43, ask(s, "engineer", Human, "Ship Friday?"), map[int][]string{42: {"CLR-42-001 pending"}, 43: {"CLR-43-001 pending"}}},
		{42, move(Answered), map[int][]string{42: {"CLR-42-001 answered"}, 43: {"CLR-43-001 pending"}}},
		{42, move(Resolved), map[int][]string{43: {"CLR-43-001 pending"}}},
		{43, move(Escalated), map[int][]string{43: {"CLR-43-001 escalated"}}},
		{43, move(Resolved), map[int][]string{}},
	}
	for i, st := range steps {
		_, err := s.Update(ctx, st.issue, st.fn)
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, st.want, indexIDs(t, s), "step %d", i)
		built, skipped, err := s.BuildIndex()
		require.NoError(t, err)
		require.Empty(t, skipped)
		ix, _, err := s.ReadIndex()
		require.NoError(t, err)
		assert.True(t, ix.Equal(built), "step %d: the maintained index equals a rebuild", i)
		files, _ := filepath.Glob(filepath.Join(s.IndexPath(), "issue-*.json"))
		assert.Len(t, files, len(st.want), "step %d: a file per issue with something open, no more", i)
	}
	// a failed Update changes neither the ledger nor the index
	_, err = s.Update(ctx, 44, ask(s, "engineer", "architect", "q"))
	require.NoError(t, err)
	before, err := os.ReadFile(s.IssueIndexPath(44))
	require.NoError(t, err)
	_, err = s.Update(ctx, 44, func(*Ledger) error { return errors.New("no") })
	require.Error(t, err)
	after, err := os.ReadFile(s.IssueIndexPath(44))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}

// TestIndexSurvivesACrashBetweenRenames: the index file is written before
// the ledger is renamed into place. A writer killed between the two leaves
// an index file for a ledger version that never appeared: readers notice
// (the stamp does not match) and read the ledger instead; and a ledger
// changed behind agentx's back is read the same way.
func TestIndexSurvivesACrashBetweenRenames(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	_, _, err := s.RebuildIndex(ctx)
	require.NoError(t, err)
	_, err = s.Update(ctx, 7, ask(s, "engineer", "architect", "q"))
	require.NoError(t, err)
	// the crash: the index of the next version is there, the ledger is not
	crash := errors.New("killed")
	err = atomicfile.WriteWith(filepath.Join(t.TempDir(), "x"), []byte("{}"), 0o644, atomicfile.Options{BeforeRename: func(tmp os.FileInfo) error {
		l, rerr := s.Read(7)
		require.NoError(t, rerr)
		require.NoError(t, move(Answered)(l))
		require.NoError(t, s.writeIssueIndex(7, stampOf(tmp), EntriesOf(l), false))
		return crash
	}})
	require.ErrorIs(t, err, crash)
	assert.Equal(t, map[int][]string{7: {"CLR-7-001 pending"}}, indexIDs(t, s), "what the ledger on disk says")

	// another tool answers it, writing the ledger directly
	l, err := s.Read(7)
	require.NoError(t, err)
	require.NoError(t, move(Answered)(l))
	data, err := Encode(l)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.Path(7), data, 0o644))
	assert.Equal(t, map[int][]string{7: {"CLR-7-001 answered"}}, indexIDs(t, s))
}

// TestIndexMadeAfreshWhenItsLedgerMoved: in a workspace copied or cloned
// every file is a new inode, so no index file matches its ledger; the
// first read of an issue's open questions by a caller that may write reads
// the ledger and makes the index file afresh, and the reads after it use
// the index file again; a read that may not write leaves it as it is.
func TestIndexMadeAfreshWhenItsLedgerMoved(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	for _, n := range []int{1, 2} {
		_, err := s.Update(ctx, n, ask(s, "engineer", "architect", "q"))
		require.NoError(t, err)
	}
	_, err := s.Update(ctx, 3, func(*Ledger) error { return nil }) // no open question
	require.NoError(t, err)
	for _, n := range []int{1, 2, 3} { // the copy: same bytes, new files
		data, err := os.ReadFile(s.Path(n))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(s.Path(n)+".copy", data, 0o644))
		require.NoError(t, os.Rename(s.Path(n)+".copy", s.Path(n)))
	}
	for _, n := range []int{1, 2} {
		before, err := s.readIndexFile(n, false)
		require.NoError(t, err)
		fi, err := os.Stat(s.Path(n))
		require.NoError(t, err)
		require.NotEqual(t, stampOf(fi), before.Ledger, "the copy left the index file behind")

		// a read that may not write (doctor, a dry run) reads the
		// ledger and leaves the index file as it is
		es, err := s.OpenEntries(n)
		require.NoError(t, err)
		require.Len(t, es, 1)
		still, err := s.readIndexFile(n, false)
		require.NoError(t, err)
		require.Equal(t, before.Ledger, still.Ledger, "a plain read writes nothing")

		es, st, err := s.OpenEntriesStamped(n, true)
		require.NoError(t, err)
		require.Len(t, es, 1)
		assert.Equal(t, stampOf(fi), st, "read from an index file made from this ledger")
		after, err := s.readIndexFile(n, false)
		require.NoError(t, err)
		assert.Equal(t, stampOf(fi), after.Ledger, "made afresh")
		for i := range after.Entries {
			after.Entries[i].raw = nil // the bytes as read
		}
		assert.Equal(t, es, after.Entries)
	}
	es, st, err := s.OpenEntriesStamped(3, true)
	require.NoError(t, err)
	assert.Empty(t, es)
	assert.Zero(t, st)
	assert.NoFileExists(t, s.IssueIndexPath(3), "no index file for an issue without open questions")
}

// TestIndexEntry proves an entry carries what the monitor needs: the
// current round's question time and sketches of the last two questions.
func TestIndexEntry(t *testing.T) {
	c := &Clarification{
		ID: "CLR-42-001", From: "engineer", To: "architect", Topic: "t", Blocking: true, Status: Pending, Round: 2,
		Created: T(t0), StaleAfter: T(t0.Add(time.Hour)),
		Thread: []ThreadEntry{
			{Round: 1, From: "engineer", Type: Question, Body: "PostgreSQL or SQLite?", Timestamp: T(t0)},
			{Round: 1, From: "architect", Type: Answer, Body: "SQLite.", Timestamp: T(t0.Add(time.Minute))},
			{Round: 2, From: "engineer", Type: Question, Body: "And for production?", Timestamp: T(t0.Add(30 * time.Minute))},
		},
		X: &Extra{Monitor: &MonitorState{Retries: 1}},
	}
	e := EntryOf(42, c)
	assert.Equal(t, t0.Add(30*time.Minute), e.Asked.Time)
	assert.Equal(t, textsim.Of("And for production?"), e.Q)
	assert.Equal(t, textsim.Of("PostgreSQL or SQLite?"), e.PrevQ)
	e.Monitor.Retries = 5
	assert.Equal(t, 1, c.X.Monitor.Retries, "the entry does not alias the record")

	c.Thread = nil
	e = EntryOf(42, c)
	assert.Equal(t, t0, e.Asked.Time, "no question: asked when created")
	assert.Nil(t, e.Q)
}

// TestIndexRecovers proves the index is built from the ledgers when it
// never was (ledgers from an earlier version or another tool), that readers
// scan meanwhile, and that a corrupt index file is re-derived.
func TestIndexRecovers(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	// ledgers written before there was an index
	for _, n := range []int{1, 2, 3} {
		l := &Ledger{IssueNumber: n}
		require.NoError(t, ask(s, "engineer", "architect", "q")(l))
		data, err := Encode(l)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(s.Path(n)), 0o755))
		require.NoError(t, os.WriteFile(s.Path(n), data, 0o644))
	}
	_, _, err := s.ReadIndex()
	var unusable *IndexUnusableError
	require.True(t, errors.As(err, &unusable), "got %v", err)
	assert.Equal(t, "missing", unusable.Reason)
	_, err = s.Update(ctx, 4, ask(s, "engineer", "architect", "q"))
	require.NoError(t, err)
	ix, _, err := s.ReadOpen()
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3, 4}, ix.OpenIssues(), "an index never built: the ledgers are scanned")

	ix, rebuilt, skipped, err := s.LoadOpen(ctx)
	require.NoError(t, err)
	assert.True(t, rebuilt)
	assert.Empty(t, skipped)
	assert.Equal(t, []int{1, 2, 3, 4}, ix.OpenIssues())
	_, rebuilt, _, err = s.LoadOpen(ctx)
	require.NoError(t, err)
	assert.False(t, rebuilt, "a built index is used as it is")

	// a corrupt index file: that issue is read from its ledger
	require.NoError(t, os.WriteFile(s.IssueIndexPath(2), []byte("{not json"), 0o644))
	assert.Len(t, indexIDs(t, s), 4)

	// a corrupt ledger is left out of a rebuild and reported
	require.NoError(t, os.WriteFile(s.Path(2), []byte("{"), 0o644))
	ix, skipped, err = s.RebuildIndex(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3, 4}, ix.OpenIssues())
	require.Len(t, skipped, 1)
	var ce *CorruptError
	assert.True(t, errors.As(skipped[0], &ce))
	assert.Equal(t, s.Path(2), ce.Path)
}

func TestSyncIndex(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	_, _, err := s.RebuildIndex(ctx)
	require.NoError(t, err)
	_, err = s.Update(ctx, 42, ask(s, "engineer", "architect", "q"))
	require.NoError(t, err)
	changed, err := s.SyncIndex(ctx, 42)
	require.NoError(t, err)
	assert.False(t, changed, "in step: nothing written")

	behind, err := os.ReadFile(s.IssueIndexPath(42))
	require.NoError(t, err)
	_, err = s.Update(ctx, 42, move(Answered))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.IssueIndexPath(42), behind, 0o644))
	assert.Equal(t, map[int][]string{42: {"CLR-42-001 answered"}}, indexIDs(t, s), "a file left behind is not trusted")
	changed, err = s.SyncIndex(ctx, 42)
	require.NoError(t, err)
	assert.True(t, changed)
	raw, err := os.ReadFile(s.IssueIndexPath(42))
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"status":"answered"`)
}

// TestTestenvKnowsTheIndexMarker: the test workspaces other packages use
// mark their index built with the same file the store checks.
func TestTestenvKnowsTheIndexMarker(t *testing.T) {
	assert.Equal(t, IndexBuiltFile, testenv.IndexBuiltFile)
}

// TestForeignLedgersSeen: a ledger another tool wrote, with no index file
// of agentx's, is seen by every reader without a rebuild: a brand-new
// issue, and a question added where agentx had nothing open. A ledger
// found with nothing open is recorded by its stamp and not read again
// while it keeps it.
func TestForeignLedgersSeen(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	resolvedIssue(t, s, 42)
	assert.Empty(t, indexIDs(t, s))

	// foreign writes issue's ledger with n records, all resolved but the
	// last when lastPending
	foreign := func(issue, n int, lastPending bool) {
		t.Helper()
		l := &Ledger{IssueNumber: issue, Clarifications: []*Clarification{}}
		for i := range n {
			require.NoError(t, ask(s, "engineer", "architect", "Which adapter?")(l))
			if i < n-1 || !lastPending {
				l.Clarifications[i].Status = Resolved
			}
		}
		data, err := Encode(l)
		require.NoError(t, err)
		// written in place, as the extension's writer does: no index file, no rename
		f, err := os.OpenFile(s.Path(issue), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = f.Write(data)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	foreign(7, 1, true)
	assert.Equal(t, map[int][]string{7: {"CLR-7-001 pending"}}, indexIDs(t, s), "a brand-new issue")
	open, err := s.OpenIssues()
	require.NoError(t, err)
	assert.Contains(t, open, 7)

	foreign(42, 2, true)
	assert.Equal(t, map[int][]string{7: {"CLR-7-001 pending"}, 42: {"CLR-42-002 pending"}}, indexIDs(t, s),
		"a question added where agentx had nothing open")

	// a reader that may write records the closed ledgers; they are not read again
	foreign(42, 2, false)
	_, _, _, err = s.LoadOpen(ctx)
	require.NoError(t, err)
	closed := s.readClosed()
	require.Contains(t, closed, 42)
	indexed, err := s.IssuesWithFile(IndexDir)
	require.NoError(t, err)
	others, err := s.unaccounted(indexed, closed)
	require.NoError(t, err)
	assert.Empty(t, others, "every ledger accounted for: an index file, or closed as it is")
	assert.Equal(t, map[int][]string{7: {"CLR-7-001 pending"}}, indexIDs(t, s))
}

// TestForeignLedgersSweptOnce: once a reader that may write accounted for
// every ledger, later reads skip the listing while the ledger directory
// is as it was; a tool that takes the lock to write (creating and removing
// its lock file beside the ledger) moves it, and its write is seen.
func TestForeignLedgersSweptOnce(t *testing.T) {
	was := fstime.Default
	fstime.Default = fstime.Settle{} // every time has settled: the note is taken at once
	t.Cleanup(func() { fstime.Default = was })
	s := newTestStore(t)
	ctx := context.Background()
	resolvedIssue(t, s, 42)

	_, _, _, err := s.LoadOpen(ctx)
	require.NoError(t, err)
	dir, _, ok := s.ledgerDir()
	require.True(t, ok)
	assert.True(t, s.swept(dir), "every ledger accounted for: the next reads skip the listing")

	// the PowerShell tool's write: its lock, the file rewritten in place, the lock removed
	lockPath := s.Path(42) + ".lock"
	require.NoError(t, os.WriteFile(lockPath, []byte(`{"agent":"cli","created":"2026-02-26T10:00:00Z"}`), 0o644))
	l, err := s.Read(42)
	require.NoError(t, err)
	require.NoError(t, ask(s, "engineer", "architect", "And the pool?")(l))
	data, err := Encode(l)
	require.NoError(t, err)
	f, err := os.OpenFile(s.Path(42), os.O_TRUNC|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Remove(lockPath))

	assert.Equal(t, map[int][]string{42: {"CLR-42-002 pending"}}, indexIDs(t, s))
	ix, _, _, err := s.LoadOpen(ctx)
	require.NoError(t, err)
	require.Len(t, ix.Foreign, 1, "a reader that may write reports it, once")
	ix, _, _, err = s.LoadOpen(ctx)
	require.NoError(t, err)
	assert.Empty(t, ix.Foreign)
}

// TestOpenIssuesSettling: a reader that loads what the sweep found (the
// side monitor) notes the ledgers swept, as LoadOpen does, so the next
// reads skip the listing; one that did not load them all notes nothing.
func TestOpenIssuesSettling(t *testing.T) {
	was := fstime.Default
	fstime.Default = fstime.Settle{}
	t.Cleanup(func() { fstime.Default = was })
	s := newTestStore(t)
	resolvedIssue(t, s, 42)

	issues, settled, err := s.OpenIssuesSettling()
	require.NoError(t, err)
	assert.Equal(t, []int{42}, issues)
	settled(func(int) bool { return false }) // not loaded
	dir, _, ok := s.ledgerDir()
	require.True(t, ok)
	assert.False(t, s.swept(dir))

	_, _, _, err = s.LoadEntries(42, true)
	require.NoError(t, err)
	settled(func(n int) bool { return n == 42 })
	assert.True(t, s.swept(dir), "loaded: the next reads skip the listing")
	issues, err = s.OpenIssues()
	require.NoError(t, err)
	assert.Empty(t, issues)
}

// TestForeignLedgerTurnsFairnessOn: a ledger found written by another tool
// is noted in its lock's queue file, so agentx writers leave that tool its
// turns from then on (lock.Fairness: windows only where a foreign tool
// writes); a ledger only agentx wrote notes nothing.
func TestForeignLedgerTurnsFairnessOn(t *testing.T) {
	s := NewStore(t.TempDir(), lock.Options{Agent: "test", Fair: lock.Fairness{Bound: time.Second, Window: 100 * time.Millisecond}}, func() time.Time { return t0 })
	ctx := context.Background()
	_, _, err := s.RebuildIndex(ctx)
	require.NoError(t, err)
	_, err = s.Update(ctx, 42, ask(s, "engineer", "architect", "Dual adapter?"))
	require.NoError(t, err)
	seen := func(issue int) bool {
		data, err := os.ReadFile(s.Path(issue) + lock.Suffix + lock.QueueSuffix)
		require.NoError(t, err)
		f := strings.Fields(string(data))
		require.Len(t, f, 4, "queue file %q", data)
		return strings.Trim(f[3], "0") != ""
	}
	assert.False(t, seen(42), "agentx's own write")

	l := &Ledger{IssueNumber: 7, Clarifications: []*Clarification{}}
	require.NoError(t, ask(s, "engineer", "architect", "Which adapter?")(l))
	data, err := Encode(l)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(s.Path(7), data, 0o644)) // the extension's writer: in place, no index file
	_, _, _, err = s.LoadOpen(ctx)
	require.NoError(t, err)
	assert.True(t, seen(7), "a foreign tool's ledger")
	assert.False(t, seen(42))
}

// resolvedIssue builds s's index, as agentx init does, then asks a
// question on issue, answers and resolves it: issue has a ledger and no
// index file.
func resolvedIssue(t *testing.T, s *Store, issue int) {
	t.Helper()
	ctx := context.Background()
	_, _, err := s.RebuildIndex(ctx)
	require.NoError(t, err)
	for _, f := range []func(*Ledger) error{ask(s, "engineer", "architect", "Dual adapter?"), move(Answered), move(Resolved)} {
		_, err = s.Update(ctx, issue, f)
		require.NoError(t, err)
	}
}

// TestIndexFileAsARebuildWritesIt: the index file an update writes (the
// entries it kept written as read from the file before, the new ones
// encoded) is byte for byte the one RebuildIndex makes from the ledger,
// through the layout memo and read whole alike.
func TestIndexFileAsARebuildWritesIt(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	steps := []func(*Ledger) error{
		ask(s, "engineer", "architect", "A new question?"),
		ask(s, "qa", "engineer", "Another one?"),
		findAndMove("CLR-9-004", Answered),
		findAndMove("CLR-9-104", Answered), // open still, in the middle
		findAndMove("CLR-9-208", Resolved),
		findAndMove("CLR-9-401", Stale),
		func(l *Ledger) error { l.Whole(); return nil },
		ask(s, "engineer", "architect", "Last?"),
	}
	for i, fn := range steps {
		if i == len(steps)-2 {
			require.NoError(t, os.Remove(s.LayoutPath(9))) // one read whole
		}
		_, err := s.Update(ctx, 9, fn)
		require.NoError(t, err, i)
		wrote, err := os.ReadFile(s.IssueIndexPath(9))
		require.NoError(t, err, i)
		_, _, err = s.RebuildIndex(ctx)
		require.NoError(t, err, i)
		rebuilt, err := os.ReadFile(s.IssueIndexPath(9))
		require.NoError(t, err, i)
		require.Equal(t, string(rebuilt), string(wrote), "step %d", i)
	}
}

// TestIndexFileShortOfAnEntry: an update whose index file lacks an entry
// it should hold (the ledger's first open question) makes it afresh, the
// entries taken over from the file around the one made again.
func TestIndexFileShortOfAnEntry(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	require.True(t, laidOut(s, 9))
	ii, err := s.readIndexFile(9, true)
	require.NoError(t, err)
	require.Equal(t, "CLR-9-004", ii.Entries[0].ID)
	require.NoError(t, s.writeIndexFile(9, ii.Ledger, ii.Entries[1:], true))

	_, err = s.Update(ctx, 9, func(*Ledger) error { return nil })
	require.NoError(t, err)
	fi, err := os.Stat(s.Path(9))
	require.NoError(t, err)
	es, ok := s.noted(9, stampOf(fi))
	require.True(t, ok)
	made := 0
	for _, e := range es {
		if e.raw == nil {
			made++
		}
	}
	assert.Equal(t, 1, made, "the other entries are taken over as read")
	wrote, err := os.ReadFile(s.IssueIndexPath(9))
	require.NoError(t, err)
	_, _, err = s.RebuildIndex(ctx)
	require.NoError(t, err)
	rebuilt, err := os.ReadFile(s.IssueIndexPath(9))
	require.NoError(t, err)
	require.Equal(t, string(rebuilt), string(wrote))
}
