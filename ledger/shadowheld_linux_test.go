package ledger

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// shadowInForce reports whether the next Update of issue will take the
// first bytes of its shadow on the memo's word, and how many.
func shadowInForce(t *testing.T, s *Store, issue int) int64 {
	t.Helper()
	l, ok := s.openLaidOut(s.Path(issue), issue)
	if !ok {
		return 0
	}
	defer l.close()
	fi, err := os.Lstat(atomicfile.ShadowOf(s.Path(issue)))
	if err != nil {
		return 0
	}
	n, forget := s.shadowHolds(l.src)(fi)
	if forget == nil {
		return 0
	}
	return n
}

// TestShadowHeldWritesWhatAWholeReadWould: the writes that take the
// shadow's first bytes on the memo's word (shadowHeld) write, byte for
// byte, the ledger a write that reads it whole and writes a new file
// does: asks in a row, each appending after what the last one appended;
// an answer to an old record, which changes bytes the memo vouched for
// (the memo is dropped before the shadow is touched); and asks again.
func TestShadowHeldWritesWhatAWholeReadWould(t *testing.T) {
	ctx := context.Background()
	fast, whole := newTestStore(t), newTestStore(t)
	for _, s := range []*Store{fast, whole} {
		seedHistory(t, s, 9, 400)
	}
	steps := []struct {
		name string
		held bool // the write before left a shadow the memo vouches for
		fn   func(s *Store) func(*Ledger) error
	}{
		{"first ask: a new shadow", false, func(s *Store) func(*Ledger) error { return ask(s, "engineer", "architect", "One?") }},
		{"second ask: the shadow is the ledger before last", true, func(s *Store) func(*Ledger) error { return ask(s, "engineer", "architect", "Two?") }},
		{"third ask", true, func(s *Store) func(*Ledger) error { return ask(s, "engineer", "architect", "Three?") }},
		{"fourth ask", true, func(s *Store) func(*Ledger) error { return ask(s, "qa", "architect", "Four?") }},
		{"answer the newest", true, func(*Store) func(*Ledger) error { return findAndMove("CLR-9-404", Answered) }},
		{"answer an old one", true, func(*Store) func(*Ledger) error { return findAndMove("CLR-9-004", Answered) }},
		{"ask after it", true, func(s *Store) func(*Ledger) error { return ask(s, "engineer", "architect", "Five?") }},
		{"ask again", true, func(s *Store) func(*Ledger) error { return ask(s, "engineer", "architect", "Six?") }},
		{"resolve one in the middle", true, func(*Store) func(*Ledger) error { return findAndMove("CLR-9-208", Resolved) }},
		{"and ask", true, func(s *Store) func(*Ledger) error { return ask(s, "engineer", "architect", "Seven?") }},
	}
	last := int64(0)
	for _, st := range steps {
		n := shadowInForce(t, fast, 9)
		if st.name == "ask after it" {
			require.Less(t, n, last, "the answer changed a record the memo vouched for")
		}
		last = n
		if st.held {
			require.Positive(t, n, "%s: the memo vouches for the shadow", st.name)
		} else {
			require.Zero(t, n, "%s: nothing to vouch for", st.name)
		}
		require.NoError(t, os.Remove(whole.LayoutPath(9)))
		require.NoError(t, os.RemoveAll(atomicfile.ShadowOf(whole.Path(9))))
		_, err := fast.Update(ctx, 9, st.fn(fast))
		require.NoError(t, err, st.name)
		_, err = whole.Update(ctx, 9, st.fn(whole))
		require.NoError(t, err, st.name)

		a, err := os.ReadFile(fast.Path(9))
		require.NoError(t, err)
		b, err := os.ReadFile(whole.Path(9))
		require.NoError(t, err)
		require.True(t, bytes.Equal(a, b), "%s: the ledger written on the memo's word differs from the one read whole", st.name)
		require.NoError(t, fast.CheckLayout(9), st.name)
		if n := shadowInForce(t, fast, 9); n > 0 {
			sh, err := os.ReadFile(atomicfile.ShadowOf(fast.Path(9)))
			require.NoError(t, err)
			require.GreaterOrEqual(t, int64(len(sh)), n)
			assert.True(t, bytes.Equal(sh[:n], a[:n]), "%s: the shadow holds the %d bytes the memo says", st.name, n)
		}
	}
}

// shadowedStore is a store whose issue 9 has a long ledger asked on
// twice since: its memo vouches for its shadow.
func shadowedStore(t *testing.T) *Store {
	t.Helper()
	s := newTestStore(t)
	seedHistory(t, s, 9, 400)
	for _, q := range []string{"One?", "Two?"} {
		_, err := s.Update(context.Background(), 9, ask(s, "engineer", "architect", q))
		require.NoError(t, err)
	}
	return s
}

// TestShadowHeldNotTrustedWhenTouched: a shadow written by anyone after
// the memo stamped it is compared whole again, and the write is right.
func TestShadowHeldNotTrustedWhenTouched(t *testing.T) {
	ctx := context.Background()
	s := shadowedStore(t)
	require.Positive(t, shadowInForce(t, s, 9))
	// spoil the shadow's first record, same size
	shadow := atomicfile.ShadowOf(s.Path(9))
	data, err := os.ReadFile(shadow)
	require.NoError(t, err)
	at := bytes.Index(data, []byte("storage"))
	require.Positive(t, at)
	f, err := os.OpenFile(shadow, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("STORAGE"), int64(at))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Zero(t, shadowInForce(t, s, 9), "the shadow's change time moved: the memo's word no longer holds")

	want, err := s.Read(9)
	require.NoError(t, err)
	require.NoError(t, ask(s, "engineer", "architect", "Three?")(want))
	_, err = s.Update(ctx, 9, ask(s, "engineer", "architect", "Three?"))
	require.NoError(t, err)
	got, err := os.ReadFile(s.Path(9))
	require.NoError(t, err)
	enc, err := Encode(want)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(enc, got), "the ledger is what a whole encode gives")
	assert.NotContains(t, string(got), "STORAGE")
}

// TestShadowHeldForgedIsCaught: a memo stamped right whose word on the
// shadow is false (only a hand-made one could be) is reported by
// CheckLayout (doctor).
func TestShadowHeldForgedIsCaught(t *testing.T) {
	s := shadowedStore(t)
	require.NoError(t, s.CheckLayout(9))
	l, ok := s.openLaidOut(s.Path(9), 9)
	require.True(t, ok)
	lo := l.src.lo
	lens := make([]int64, len(lo.exts))
	for i, x := range lo.exts {
		lens[i] = x.n
	}
	sh := lo.shadow
	require.Positive(t, sh.n)
	sh.n = sh.file.Size // the whole shadow: it lacks the last record
	forged := encodeLayout(9, lo.file, lo.head, l.Clarifications, lens, sh, nil, 0)
	l.close()
	require.NoError(t, os.WriteFile(s.LayoutPath(9), forged, 0o644))
	var le *LayoutError
	require.ErrorAs(t, s.CheckLayout(9), &le)
	assert.Contains(t, le.Error(), "shadow")
}

// TestLayoutKeptEntriesAsEncoded: a memo whose entries an ask copied from
// the memo before (encodeLayout's prev) is byte for byte the memo encoded
// afresh from its records, a new sender included.
func TestLayoutKeptEntriesAsEncoded(t *testing.T) {
	s := shadowedStore(t)
	for _, from := range []string{"engineer", "qa"} {
		l, ok := s.openLaidOut(s.Path(9), 9)
		require.True(t, ok)
		prev := l.src.lo
		l.close()
		_, err := s.Update(context.Background(), 9, ask(s, from, "architect", "Kept?"))
		require.NoError(t, err)
		memo, err := os.ReadFile(s.LayoutPath(9))
		require.NoError(t, err)

		l, ok = s.openLaidOut(s.Path(9), 9)
		require.True(t, ok)
		lo := l.src.lo
		lens := make([]int64, len(lo.exts))
		for i, x := range lo.exts {
			lens[i] = x.n
		}
		assert.Equal(t, len(prev.stubs)+1, len(lo.stubs))
		afresh := encodeLayout(9, lo.file, lo.head, l.Clarifications, lens, lo.shadow, nil, 0)
		l.close()
		assert.True(t, bytes.Equal(afresh, memo), "asked by %s: the memo differs from one encoded afresh", from)
	}
}
