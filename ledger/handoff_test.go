package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/lock"
)

// asking is a question of from's to the architect, asked at t0 plus n
// milliseconds (each question of a test its own time).
func asking(from, body string, n int) Asking {
	return Asking{
		Question: NewQuestion{From: from, To: "architect", Topic: "storage", Body: body, MaxRounds: 3, SLA: time.Hour},
		At:       t0.Add(time.Duration(n) * time.Millisecond),
	}
}

// countHanded counts, for the rest of the test, the asks that return a
// record the lock's holder made.
func countHanded(t *testing.T) *atomic.Int32 {
	var n atomic.Int32
	handedHook = func() { n.Add(1) }
	t.Cleanup(func() { handedHook = nil })
	return &n
}

// asked is what one ask returned.
type asked struct {
	c   *Clarification
	err error
}

// askAsync asks a in a goroutine.
func askAsync(s *Store, issue int, a Asking) <-chan asked {
	ch := make(chan asked, 1)
	go func() {
		c, err := s.Ask(context.Background(), issue, a)
		ch <- asked{c, err}
	}()
	return ch
}

// waitHanded waits until n questions and changes are left in issue's hand-off
// directory, and returns their paths.
func waitHanded(t *testing.T, s *Store, issue, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		names, _ := filepath.Glob(filepath.Join(s.Path(issue)+HandoffSuffix, "*"+askEnd))
		changes, _ := filepath.Glob(filepath.Join(s.Path(issue)+HandoffSuffix, "*"+changeEnd))
		names = append(names, changes...)
		if len(names) >= n {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d questions handed, want %d", len(names), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// handedWhileHeld takes issue 7's lock and starts an ask of a, which
// finds it held and hands its question over: the lock, what the ask will
// return, and its question's file.
func handedWhileHeld(t *testing.T, s *Store, a Asking) (*Locked, <-chan asked, string) {
	t.Helper()
	f, err := s.Lock(context.Background(), 7)
	require.NoError(t, err)
	r := askAsync(s, 7, a)
	return f, r, waitHanded(t, s, 7, 1)[0]
}

// drainAsHolder is what a holder of f's lock making an ask does with the
// questions handed to it: it makes them in its write and tells their
// askers.
func drainAsHolder(t *testing.T, s *Store, f *Locked) []handedOne {
	t.Helper()
	var batch []handedOne
	h := &handing{spool: f.Path + HandoffSuffix, issue: f.Issue, changers: s.changers}
	_, err := s.change(f, func(l *Ledger) error {
		batch = h.drain(l)
		return nil
	}, func() { h.tell(batch, false) })
	require.NoError(t, err)
	return batch
}

// spoolLeft is what is left in issue's hand-off directory.
func spoolLeft(t *testing.T, s *Store, issue int) []string {
	t.Helper()
	ents, err := os.ReadDir(s.Path(issue) + HandoffSuffix)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestHandedAsksAreMadeInTheHoldersWrite: two asks find the lock held and
// hand their questions over; the holder makes both in its one write, and
// each asker gets its record without writing.
func TestHandedAsksAreMadeInTheHoldersWrite(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	handed := countHanded(t)
	f, err := s.Lock(ctx, 7)
	require.NoError(t, err)
	a, b := asking("engineer", "Which layout?", 1), asking("reviewer", "Which retry budget?", 2)
	ra := askAsync(s, 7, a)
	waitHanded(t, s, 7, 1)
	rb := askAsync(s, 7, b)
	waitHanded(t, s, 7, 2)

	batch := drainAsHolder(t, s, f)
	require.Len(t, batch, 2)
	require.NoError(t, f.Release())
	got := map[string]asked{"a": <-ra, "b": <-rb}
	for name, r := range got {
		require.NoError(t, r.err, name)
	}
	assert.Equal(t, int32(2), handed.Load(), "both records came from the holder")
	assert.Equal(t, "CLR-7-001", got["a"].c.ID, "oldest first")
	assert.Equal(t, "CLR-7-002", got["b"].c.ID)
	l, err := s.Read(7)
	require.NoError(t, err)
	require.Len(t, l.Clarifications, 2)
	for i, want := range []Asking{a, b} {
		c := l.Clarifications[i]
		assert.True(t, want.made(c), "record %d is its question", i)
		gotJSON, _ := RecordJSON([]*Clarification{got["a"].c, got["b"].c}[i])
		wantJSON, _ := RecordJSON(c)
		assert.JSONEq(t, string(wantJSON), string(gotJSON), "the asker is told the record as written")
	}
	assert.Empty(t, spoolLeft(t, s, 7), "each asker took what it was told")
}

// TestHandedAskTakenBack: an ask that finds the lock held and that no
// holder serves takes its question back when its turn comes and makes it
// itself; so does one whose question the holder could not make.
func TestHandedAskTakenBack(t *testing.T) {
	t.Run("no holder took it", func(t *testing.T) {
		s := newTestStore(t)
		handed := countHanded(t)
		f, r, _ := handedWhileHeld(t, s, asking("engineer", "Which layout?", 1))
		require.NoError(t, f.Release()) // a holder that made no ask
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, "CLR-7-001", got.c.ID)
		assert.Zero(t, handed.Load())
		assert.Empty(t, spoolLeft(t, s, 7))
	})
	t.Run("the cap refused it at the holder", func(t *testing.T) {
		s := newTestStore(t)
		_, err := s.Update(context.Background(), 7, ask(s, "engineer", "architect", "the first"))
		require.NoError(t, err)
		capped := errors.New("capped")
		a := asking("engineer", "the second", 1)
		a.Cap, a.Capped = Cap{Max: 1}, func(n int) error { return fmt.Errorf("%w at %d", capped, n) }
		f, r, _ := handedWhileHeld(t, s, a)
		batch := drainAsHolder(t, s, f)
		require.Len(t, batch, 1)
		assert.Nil(t, batch[0].record, "the holder did not make it")
		require.NoError(t, f.Release())
		got := <-r
		require.ErrorIs(t, got.err, capped, "the asker made it again and words the refusal")
		assert.EqualError(t, got.err, "capped at 1")
		l, err := s.Read(7)
		require.NoError(t, err)
		assert.Len(t, l.Clarifications, 1)
	})
	t.Run("not a valid record", func(t *testing.T) {
		s := newTestStore(t)
		a := asking("engineer", "Which layout?", 1)
		a.Question.To = "engineer"
		f, r, _ := handedWhileHeld(t, s, a)
		batch := drainAsHolder(t, s, f)
		require.Len(t, batch, 1)
		assert.Nil(t, batch[0].record)
		require.NoError(t, f.Release())
		got := <-r
		require.Error(t, got.err)
		assert.Contains(t, got.err.Error(), "an agent cannot ask itself", "the asker's own error")
		l, err := s.Read(7)
		require.NoError(t, err)
		assert.Empty(t, l.Clarifications)
	})
}

// TestHandedAskWhoseHolderDied: a holder that took a question and died
// before telling its asker (the kernel frees its lock) leaves the asker to
// look in the ledger: there, the question is not made twice; not there,
// it is made; and what a file says it was told is checked.
func TestHandedAskWhoseHolderDied(t *testing.T) {
	for _, tc := range []struct {
		name    string
		made    bool   // the holder wrote the question before it died
		told    string // a .done left for the asker: "" none, "other" another record
		records int
		handed  int32
	}{
		{"taken and not made", false, "", 1, 0},
		{"made and not told", true, "", 1, 1},
		{"told another question's record", false, "other", 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			handed := countHanded(t)
			f, r, name := handedWhileHeld(t, s, asking("engineer", "Which layout?", 1))
			data, err := os.ReadFile(name)
			require.NoError(t, err)
			require.NoError(t, os.Remove(name), "the holder takes it")
			var hf handedFile
			require.NoError(t, json.Unmarshal(data, &hf))
			if tc.made || tc.told != "" {
				other := Asking{Question: *hf.Question, At: hf.At}
				if tc.told == "other" {
					other.Question.Body = "Another question"
				}
				var c *Clarification
				_, err := s.change(f, func(l *Ledger) error {
					c, err = other.apply(l)
					return err
				}, nil)
				require.NoError(t, err)
				if tc.told != "" {
					(&handing{}).tell([]handedOne{{done: strings.TrimSuffix(name, askEnd) + doneEnd, record: c}}, false)
				}
			}
			require.NoError(t, f.Release()) // as the kernel does for a dead holder
			got := <-r
			require.NoError(t, got.err)
			assert.Equal(t, "Which layout?", got.c.Thread[0].Body)
			l, err := s.Read(7)
			require.NoError(t, err)
			assert.Len(t, l.Clarifications, tc.records, "the question is in the ledger once")
			assert.Equal(t, tc.handed, handed.Load())
			assert.Empty(t, spoolLeft(t, s, 7))
		})
	}
}

// TestHandedAskAndTheWaitBudget: an ask whose wait for the lock runs out
// takes its question back and fails as before, nothing written; one whose
// question a holder took first waits for that holder instead, and gets
// its record.
func TestHandedAskAndTheWaitBudget(t *testing.T) {
	opts := lock.Options{Agent: "test", Wait: 300 * time.Millisecond}
	t.Run("not taken", func(t *testing.T) {
		s := NewStore(t.TempDir(), opts, func() time.Time { return t0 })
		f, err := s.Lock(context.Background(), 7)
		require.NoError(t, err)
		defer f.Release()
		_, err = s.Ask(context.Background(), 7, asking("engineer", "Which layout?", 1))
		var te *lock.TimeoutError
		require.ErrorAs(t, err, &te)
		assert.Empty(t, spoolLeft(t, s, 7), "the question was taken back")
	})
	t.Run("taken by a slow holder", func(t *testing.T) {
		s := NewStore(t.TempDir(), opts, func() time.Time { return t0 })
		handed := countHanded(t)
		f, r, _ := handedWhileHeld(t, s, asking("engineer", "Which layout?", 1))
		holder := &handing{spool: f.Path + HandoffSuffix, issue: 7}
		var batch []handedOne
		_, err := s.change(f, func(l *Ledger) error {
			batch = holder.take(7, nil)
			time.Sleep(400 * time.Millisecond) // past the asker's wait
			makeAll(batch, l)
			return nil
		}, func() { holder.tell(batch, false) })
		require.NoError(t, err)
		require.NoError(t, f.Release())
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, "CLR-7-001", got.c.ID)
		assert.Equal(t, int32(1), handed.Load())
	})
}

// FuzzHandedFile: whatever a question's file holds, a holder never fails
// nor makes a ledger that does not check.
func FuzzHandedFile(f *testing.F) {
	q := asking("engineer", "q", 2).Question
	good, _ := json.Marshal(handedFile{V: 1, Issue: 7, Question: &q, At: t0})
	f.Add(good)
	change, _ := json.Marshal(handedFile{V: 1, Issue: 7, At: t0, Change: &Change{Kind: "note", ID: "CLR-7-001", By: "engineer", At: t0, Args: json.RawMessage(`"a note"`)}})
	f.Add(change)
	f.Add([]byte(`{"v":1,"issue":7,"change":{"kind":"note","id":"CLR-7-001","args":"\u0000"}}`))
	f.Add([]byte(`{"v":1,"issue":7,"change":{"kind":"note","id":"CLR-8-001"},"question":{"From":"engineer"}}`))
	f.Add([]byte(`{"v":1,"issue":7,"question":{"From":"a","To":"a"}}`))
	f.Add([]byte(`{"v":1,"issue":7,"question":{"From":"engineer","To":"architect","MaxRounds":-4,"Body":"\u0000"},"cap":{"Max":3}}`))
	f.Add([]byte(`{"v":1,"issue":7,"context":{"refs":[{}]},"at":"0001-01-01T00:00:00Z"}`))
	dir := f.TempDir()
	var n atomic.Int64
	var mu sync.Mutex
	f.Fuzz(func(t *testing.T, data []byte) {
		mu.Lock()
		defer mu.Unlock()
		s := NewStore(filepath.Join(dir, fmt.Sprint(n.Add(1))), lock.Options{Agent: "fuzz"}, nil)
		s.Handle("note", noter{})
		_, err := s.Ask(context.Background(), 7, asking("engineer", "the first", 0))
		require.NoError(t, err)
		lk, err := s.Lock(context.Background(), 7)
		require.NoError(t, err)
		defer lk.Release()
		require.NoError(t, os.MkdirAll(s.Path(7)+HandoffSuffix, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(s.Path(7)+HandoffSuffix, "q.ask"), data, 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(s.Path(7)+HandoffSuffix, "c.change"), data, 0o600))
		var batch []handedOne
		h := &handing{spool: lk.Path + HandoffSuffix, issue: 7, changers: s.changers}
		_, err = s.change(lk, func(l *Ledger) error {
			batch = h.drain(l)
			return nil
		}, func() { h.tell(batch, false) })
		h.unmark() // a failed write tells nobody
		require.NoError(t, err, "the holder's write")
		l, err := s.Read(7)
		require.NoError(t, err)
		require.NoError(t, l.Validate())
		_ = os.RemoveAll(s.Dir())
	})
}

// TestHandedAsksOnALargeLedger: a holder's write of several handed
// questions on a ledger read through its layout memo (and, on Linux,
// written through its shadow) makes the file a whole read and write would,
// and leaves a memo that describes it.
func TestHandedAsksOnALargeLedger(t *testing.T) {
	s := newTestStore(t)
	seedHistory(t, s, 7, 400)
	_, err := s.Update(context.Background(), 7, ask(s, "engineer", "architect", "one more, to leave a memo"))
	require.NoError(t, err)
	require.True(t, laidOut(s, 7))
	f, err := s.Lock(context.Background(), 7)
	require.NoError(t, err)
	var rs []<-chan asked
	for i := range 3 {
		rs = append(rs, askAsync(s, 7, asking("engineer", fmt.Sprintf("handed %d", i), 10+i)))
		waitHanded(t, s, 7, i+1)
	}
	require.Len(t, drainAsHolder(t, s, f), 3)
	require.NoError(t, f.Release())
	for i, r := range rs {
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, FormatID(7, 402+i), got.c.ID)
	}
	l := requireWholeWrite(t, s, "the holder")
	require.Len(t, l.Clarifications, 404)
}
