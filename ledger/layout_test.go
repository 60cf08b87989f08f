package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/lock"
)

// seedHistory gives issue a ledger of n clarifications, large enough for a
// layout memo: nine in ten resolved, the others answered or pending, each
// with a question and an answer.
func seedHistory(t testing.TB, s *Store, issue, n int) {
	t.Helper()
	body := strings.Repeat("Which of the two storage layouts should the export use? ", 8)
	_, err := s.Update(context.Background(), issue, func(l *Ledger) error {
		for i := 0; i < n; i++ {
			now := T(s.Now().Add(time.Duration(i) * time.Minute))
			st := Resolved
			switch i % 10 {
			case 3:
				st = Pending
			case 7:
				st = Answered
			}
			c := &Clarification{
				ID: l.NextID(), From: "engineer", To: "architect", Topic: "storage", Blocking: i%2 == 0,
				Status: st, Round: 1, MaxRounds: 3, Created: now, StaleAfter: T(s.Now().Add(time.Hour)),
				Thread: []ThreadEntry{{Round: 1, From: "engineer", Type: Question, Body: fmt.Sprintf("%d: %s", i, body), Timestamp: now}},
			}
			if st != Pending {
				c.Thread = append(c.Thread, ThreadEntry{Round: 1, From: "architect", Type: Answer, Body: "One file per environment.", Timestamp: now})
			}
			if st == Resolved {
				c.Thread = append(c.Thread, ThreadEntry{Round: 1, From: "engineer", Type: Resolution, Body: "Done.", Timestamp: now})
				c.ResolvedAt = &now
			}
			l.Clarifications = append(l.Clarifications, c)
		}
		return nil
	})
	require.NoError(t, err)
}

// laidOut reports whether the next Update of issue reads it through its
// layout memo.
func laidOut(s *Store, issue int) bool {
	l, ok := s.openLaidOut(s.Path(issue), issue)
	if ok {
		l.close()
	}
	return ok
}

// findAndMove is an Update that opens a record and moves it.
func findAndMove(id string, to Status) func(*Ledger) error {
	return func(l *Ledger) error {
		c := l.Find(id)
		if c == nil {
			return fmt.Errorf("%s: %w", id, ErrNotFound)
		}
		return c.Move(to)
	}
}

// TestLayoutWritesWhatAWholeReadWould runs the same updates on two
// workspaces, one through its layout memo and one read whole each time:
// the ledgers stay byte for byte the same, the index files hold the same
// entries, and the memo always describes its ledger.
func TestLayoutWritesWhatAWholeReadWould(t *testing.T) {
	ctx := context.Background()
	memo, whole := newTestStore(t), newTestStore(t)
	for _, s := range []*Store{memo, whole} {
		seedHistory(t, s, 9, 400)
	}
	require.FileExists(t, memo.LayoutPath(9))
	fi, err := os.Stat(memo.Path(9))
	require.NoError(t, err)
	require.Greater(t, fi.Size(), int64(layoutMin), "the seed must be large enough for a memo")

	steps := []struct {
		name string
		fn   func(s *Store) func(*Ledger) error
	}{
		{"ask", func(s *Store) func(*Ledger) error { return ask(s, "engineer", "architect", "A new question?") }},
		{"answer an old pending one", func(*Store) func(*Ledger) error { return findAndMove("CLR-9-004", Answered) }},
		{"resolve an answered one in the middle", func(*Store) func(*Ledger) error { return findAndMove("CLR-9-208", Resolved) }},
		{"mark the newest stale", func(*Store) func(*Ledger) error { return findAndMove("CLR-9-401", Stale) }},
		{"ask twice in one update", func(s *Store) func(*Ledger) error {
			return func(l *Ledger) error {
				if err := ask(s, "engineer", "architect", "One?")(l); err != nil {
					return err
				}
				return ask(s, "qa", "architect", "Two?")(l)
			}
		}},
		{"open every record and change nothing", func(*Store) func(*Ledger) error {
			return func(l *Ledger) error { l.Whole(); return nil }
		}},
		{"ask after the whole was opened", func(s *Store) func(*Ledger) error { return ask(s, "engineer", "architect", "Last?") }},
	}
	for _, st := range steps {
		require.True(t, laidOut(memo, 9), "%s: the update must read through the memo", st.name)
		require.NoError(t, os.Remove(whole.LayoutPath(9)))
		_, err := memo.Update(ctx, 9, st.fn(memo))
		require.NoError(t, err, st.name)
		_, err = whole.Update(ctx, 9, st.fn(whole))
		require.NoError(t, err, st.name)

		a, err := os.ReadFile(memo.Path(9))
		require.NoError(t, err)
		b, err := os.ReadFile(whole.Path(9))
		require.NoError(t, err)
		require.True(t, bytes.Equal(a, b), "%s: the ledger written through the memo differs from the one read whole", st.name)
		require.NoError(t, memo.CheckLayout(9), st.name)

		ia, err := memo.readIndexFile(9, false)
		require.NoError(t, err, st.name)
		ib, err := whole.readIndexFile(9, false)
		require.NoError(t, err, st.name)
		assert.Equal(t, ib.Entries, ia.Entries, "%s: index entries", st.name)
	}
}

// TestLayoutIgnoredWhenTheFileChanged: a ledger changed by anyone else, in
// place with its size and modification time put back, or replaced, is read
// whole: the memo is only trusted for the very file it was made for.
func TestLayoutIgnoredWhenTheFileChanged(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	require.True(t, laidOut(s, 9))

	// In place: answered -> resolved has the same length.
	path := s.Path(9)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	at := bytes.Index(data, []byte(`"status": "answered"`))
	require.Positive(t, at)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(`"status": "resolved"`), int64(at))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
	after, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, stampOf(fi), stampOf(after), "size, inode and modification time are as before")

	assert.False(t, laidOut(s, 9), "the change time differs: the memo is not used")
	_, err = s.Update(ctx, 9, ask(s, "engineer", "architect", "After the edit?"))
	require.NoError(t, err)
	ii, err := s.readIndexFile(9, false)
	require.NoError(t, err)
	for _, e := range ii.Entries {
		assert.NotEqual(t, "CLR-9-008", e.ID, "the record edited to resolved is no longer open")
	}
	require.True(t, laidOut(s, 9), "the write made a new memo")

	// Replaced by another tool: a new file.
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".new", data, 0o644))
	require.NoError(t, os.Rename(path+".new", path))
	assert.False(t, laidOut(s, 9))
}

// forgeLayout rewrites issue's layout memo, stamped right, with records 4
// and 5 misplaced (the same total: head and tail still match).
func forgeLayout(t *testing.T, s *Store, issue int) {
	t.Helper()
	l, ok := s.openLaidOut(s.Path(issue), issue)
	require.True(t, ok)
	lo := l.src.lo
	lens := make([]int64, len(lo.exts))
	for i, x := range lo.exts {
		lens[i] = x.n
	}
	lens[3], lens[4] = lens[3]+5, lens[4]-5
	forged := encodeLayout(issue, lo.file, lo.head, l.Clarifications, lens, shadowHeld{}, nil, 0)
	l.close()
	require.NoError(t, os.WriteFile(s.LayoutPath(issue), forged, 0o644))
}

// TestLayoutForgedIsCaught: a memo stamped right that lies about where
// the records lie is reported by CheckLayout (doctor), and an update that
// opens a record it misplaces fails naming the memo, writing nothing.
func TestLayoutForgedIsCaught(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	require.NoError(t, s.CheckLayout(9))

	forgeLayout(t, s, 9)

	var le *LayoutError
	require.ErrorAs(t, s.CheckLayout(9), &le)
	assert.Contains(t, le.Error(), "record 4")

	before, err := os.ReadFile(s.Path(9))
	require.NoError(t, err)
	_, err = s.Update(ctx, 9, findAndMove("CLR-9-004", Answered))
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, s.LayoutPath(9), ce.Path)
	assert.True(t, ce.Derived, "doctor --fix may move it aside")
	after, err := os.ReadFile(s.Path(9))
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing written")

	require.NoError(t, os.Remove(s.LayoutPath(9)))
	_, err = s.Update(ctx, 9, findAndMove("CLR-9-004", Answered))
	require.NoError(t, err, "without the memo the ledger is read whole")
}

// TestLayoutSmallLedgerHasNone: under layoutMin no memo is kept, and one
// left from before is removed.
func TestLayoutSmallLedgerHasNone(t *testing.T) {
	s := newTestStore(t)
	seedHistory(t, s, 9, 5)
	assert.NoFileExists(t, s.LayoutPath(9))
	require.NoError(t, os.MkdirAll(s.dir+"/"+LayoutDir, 0o755))
	require.NoError(t, os.WriteFile(s.LayoutPath(9), []byte("stale"), 0o644))
	_, err := s.Update(context.Background(), 9, ask(s, "engineer", "architect", "Small?"))
	require.NoError(t, err)
	assert.NoFileExists(t, s.LayoutPath(9))
}

func TestFormatID(t *testing.T) {
	for _, c := range [][2]int{{1, 1}, {42, 7}, {42, 99}, {42, 100}, {7, 123456789}, {0, 0}, {-1, 5}, {5, -3}} {
		assert.Equal(t, fmt.Sprintf("CLR-%d-%03d", c[0], c[1]), FormatID(c[0], c[1]))
	}
}

// FuzzDecodeLayout: whatever a memo file holds, reading it never panics,
// and what it reads encodes back to the same layout.
func FuzzDecodeLayout(f *testing.F) {
	s := NewStore(f.TempDir(), lock.Options{Agent: "test"}, func() time.Time { return t0 })
	seedHistory(f, s, 3, 300)
	good, err := os.ReadFile(s.LayoutPath(3))
	require.NoError(f, err)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(layoutMagic())
	f.Fuzz(func(t *testing.T, data []byte) {
		lo, err := decodeLayout(data)
		if err != nil {
			if !errors.Is(err, errLayout) {
				t.Fatalf("error %v is not errLayout", err)
			}
			return
		}
		cs := make([]*Clarification, len(lo.stubs))
		lens := make([]int64, len(lo.stubs))
		for i := range lo.stubs {
			cs[i], lens[i] = &lo.stubs[i], lo.exts[i].n
		}
		again, err := decodeLayout(encodeLayout(lo.issue, lo.file, lo.head, cs, lens, lo.shadow, nil, 0))
		require.NoError(t, err)
		require.Equal(t, lo.tail, again.tail)
		require.Equal(t, len(lo.stubs), len(again.stubs))
		for i := range lo.stubs {
			require.Equal(t, lo.stubs[i].ID, again.stubs[i].ID)
			require.Equal(t, lo.stubs[i].From, again.stubs[i].From)
			require.Equal(t, lo.stubs[i].Status, again.stubs[i].Status)
			require.Equal(t, lo.exts[i].off, again.exts[i].off)
		}
	})
}

// TestLayoutOfAnotherBuild: a memo another build of agentx wrote is not
// used (how it writes ledgers may differ); the next write makes this
// build's.
func TestLayoutOfAnotherBuild(t *testing.T) {
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	data, err := os.ReadFile(s.LayoutPath(9))
	require.NoError(t, err)
	other := bytes.Replace(data, layoutMagic(), []byte("agentx-ledger-layout 1 v0.9.0@0123abc\n"), 1)
	require.NotEqual(t, data, other)
	require.NoError(t, os.WriteFile(s.LayoutPath(9), other, 0o644))
	assert.False(t, laidOut(s, 9))
	_, err = s.Update(context.Background(), 9, ask(s, "engineer", "architect", "Upgraded?"))
	require.NoError(t, err)
	assert.True(t, laidOut(s, 9))
}

// TestLayoutEntriesOfInsideUpdate: a function inside Update that takes
// the index entries of the ledger (the monitor's guards re-run their
// detectors on them) sees the open records whole, not their stubs.
func TestLayoutEntriesOfInsideUpdate(t *testing.T) {
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	require.True(t, laidOut(s, 9))
	var es []IndexEntry
	_, err := s.Update(context.Background(), 9, func(l *Ledger) error {
		es = EntriesOf(l)
		return nil
	})
	require.NoError(t, err)
	require.Len(t, es, 80)
	for _, e := range es {
		assert.Equal(t, "architect", e.To, e.ID)
		assert.NotEmpty(t, e.Q, e.ID)
		assert.False(t, e.Asked.IsZero(), e.ID)
	}
}

// TestLayoutGet: Get reads one record through the layout memo (a waiter
// polls it), the same record as a whole read gives; with a memo that
// misleads it reads the whole file instead.
func TestLayoutGet(t *testing.T) {
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	require.True(t, laidOut(s, 9))
	whole, err := s.Read(9)
	require.NoError(t, err)
	for _, id := range []string{"CLR-9-001", "CLR-9-004", "CLR-9-208", "CLR-9-400"} {
		c, err := s.Get(id)
		require.NoError(t, err, id)
		assert.Equal(t, whole.Find(id), c, id)
	}
	_, err = s.Get("CLR-9-401")
	require.ErrorIs(t, err, ErrNotFound)

	forgeLayout(t, s, 9)
	c, err := s.Get("CLR-9-004")
	require.NoError(t, err, "the whole file is read instead")
	assert.Equal(t, whole.Find("CLR-9-004"), c)
}

// TestLayoutRandomChanges: random runs of changes on two workspaces, one
// through its layout memo and one read whole each time, with another tool
// rewriting the ledger now and then (as agentx writes it, or compact) and
// the memo lost now and then: the ledgers stay byte for byte the same, the
// open entries the same, and a memo in force always true.
func TestLayoutRandomChanges(t *testing.T) {
	seeds := uint64(3)
	if testenv.Race {
		seeds = 1 // see testenv.Race
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			ctx := context.Background()
			memo, whole := newTestStore(t), newTestStore(t)
			for _, s := range []*Store{memo, whole} {
				seedHistory(t, s, 9, 300)
			}
			updates, throughMemo := 0, 0
			defer func() {
				assert.Greater(t, throughMemo, updates/2, "most updates went through the memo (%d of %d)", throughMemo, updates)
			}()
			for step := range 40 {
				var fn func(s *Store) func(*Ledger) error
				what := ""
				switch k := r.IntN(10); {
				case k < 4:
					what = "ask"
					fn = func(s *Store) func(*Ledger) error {
						return ask(s, "engineer", "architect", fmt.Sprintf("Step %d?", step))
					}
				case k < 8:
					l, err := whole.Read(9)
					require.NoError(t, err)
					var open []*Clarification
					for _, c := range l.Clarifications {
						if len(c.Status.Allowed()) > 0 {
							open = append(open, c)
						}
					}
					if len(open) == 0 {
						continue
					}
					c := open[r.IntN(len(open))]
					to := c.Status.Allowed()[r.IntN(len(c.Status.Allowed()))]
					what = fmt.Sprintf("move %s %s -> %s", c.ID, c.Status, to)
					fn = func(*Store) func(*Ledger) error { return findAndMove(c.ID, to) }
				case k == 8:
					what = "another tool rewrites the ledger"
					compact := r.IntN(2) == 0
					for _, s := range []*Store{memo, whole} {
						data, err := os.ReadFile(s.Path(9))
						require.NoError(t, err)
						if compact {
							var b bytes.Buffer
							require.NoError(t, json.Compact(&b, data))
							data = b.Bytes()
						}
						require.NoError(t, os.WriteFile(s.Path(9)+".new", data, 0o644))
						require.NoError(t, os.Rename(s.Path(9)+".new", s.Path(9)))
					}
					continue
				default:
					what = "the memo is lost"
					_ = os.Remove(memo.LayoutPath(9))
					continue
				}
				require.NoError(t, os.RemoveAll(whole.LayoutPath(9)))
				if laidOut(memo, 9) {
					throughMemo++
				}
				updates++
				_, err := memo.Update(ctx, 9, fn(memo))
				_, werr := whole.Update(ctx, 9, fn(whole))
				require.Equal(t, werr == nil, err == nil, "step %d (%s): %v / %v", step, what, err, werr)
				a, err := os.ReadFile(memo.Path(9))
				require.NoError(t, err)
				b, err := os.ReadFile(whole.Path(9))
				require.NoError(t, err)
				require.True(t, bytes.Equal(a, b), "step %d (%s): the ledgers differ", step, what)
				require.NoError(t, memo.CheckLayout(9), "step %d (%s)", step, what)
				ea, err := memo.OpenEntries(9)
				require.NoError(t, err)
				eb, err := whole.OpenEntries(9)
				require.NoError(t, err)
				require.Equal(t, len(eb), len(ea), "step %d (%s)", step, what)
				for i := range ea {
					ea[i].raw, eb[i].raw = nil, nil
				}
				require.Equal(t, eb, ea, "step %d (%s)", step, what)
			}
		})
	}
}

// TestCheckpointThroughTheMemo: the checkpoint an update takes of a
// ledger read through its layout memo is the memo's extents, copying
// nothing, and holds what a copy would; the checks against it still refuse
// a move the table forbids, on a record opened or not.
func TestCheckpointThroughTheMemo(t *testing.T) {
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	l, ok := s.openLaidOut(s.Path(9), 9)
	require.True(t, ok)
	defer l.close()

	cp, copied := l.asRead(), l.Checkpoint()
	require.Len(t, cp.read, 400, "the records come from the memo")
	require.Empty(t, cp.recs)
	require.Equal(t, copied.len(), cp.len())
	for i := range cp.len() {
		require.Equal(t, copied.rec(i), cp.rec(i))
	}
	allocs := testing.AllocsPerRun(20, func() { _ = l.asRead() })
	assert.Zero(t, allocs, "the checkpoint copies nothing")

	// a move the table forbids (resolved back to pending), set on a record
	// opened and on a stub, is refused by the write's checks
	for i, open := range []bool{true, false} {
		require.True(t, laidOut(s, 9))
		id := FormatID(9, i+1)
		_, err := s.Update(context.Background(), 9, func(l *Ledger) error {
			c := l.Clarifications[i]
			if open {
				c = l.Find(id)
			}
			c.Status = Pending
			return nil
		})
		var te *TransitionError
		require.ErrorAs(t, err, &te, id)
		assert.Equal(t, id, te.ID)
	}
}

// TestNextIDThroughTheMemo: NextID of a ledger read through its layout
// memo, which takes the stubs' highest sequence number from the memo, is
// NextID of the ledger read whole: as read, with a record opened, and with
// records appended.
func TestNextIDThroughTheMemo(t *testing.T) {
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	whole, err := s.Read(9)
	require.NoError(t, err)
	l, ok := s.openLaidOut(s.Path(9), 9)
	require.True(t, ok)
	defer l.close()
	_, n := l.memoSeq()
	require.Equal(t, 400, n, "the memo gives the stubs' sequence numbers")
	require.Equal(t, whole.NextID(), l.NextID())
	require.NotNil(t, l.Find("CLR-9-400"))
	require.Equal(t, "CLR-9-401", l.NextID())
	for _, want := range []string{"CLR-9-401", "CLR-9-402"} {
		id := l.NextID()
		require.Equal(t, want, id)
		l.Clarifications = append(l.Clarifications, &Clarification{ID: id, From: "engineer", Status: Pending})
	}
	l.Clarifications = append(l.Clarifications, &Clarification{ID: "CLR-9-900", From: "engineer", Status: Pending})
	require.Equal(t, "CLR-9-901", l.NextID(), "a record after the stubs is read")

	// a stub's id changed: NextID does not see it, and the change fails
	for _, open := range []bool{false, true} {
		_, err = s.Update(context.Background(), 9, func(l *Ledger) error {
			c := l.Clarifications[5]
			if open {
				c = l.Find(c.ID)
			}
			c.ID = "CLR-9-999"
			return ask(s, "engineer", "architect", "After?")(l)
		})
		require.ErrorContains(t, err, "CLR-9-006: a clarification may not be deleted", "opened: %v", open)
	}
}
