package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agentx-cli/agentx/lock"
)

// BenchmarkUpdateAppend measures one Store.Update that appends a
// clarification to a ledger of 20 (lock, read, decode, validate, encode,
// write, fsync file and directory, rename, unlock).
func BenchmarkUpdateAppend(b *testing.B) {
	s := filledStore(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// keep the ledger at a steady size so every iteration does the same work
		if i%50 == 0 {
			s = filledStore(b)
		}
		b.StartTimer()
		if _, err := s.Update(ctx, 1, ask(s, "engineer", "architect", "What is the retry policy?")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead measures an unlocked read of a 20-record ledger.
func BenchmarkRead(b *testing.B) {
	s := filledStore(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Read(1); err != nil {
			b.Fatal(err)
		}
	}
}

// filledStore is a store whose issue 1 holds 20 clarifications.
func filledStore(b *testing.B) *Store {
	b.Helper()
	s := NewStore(b.TempDir(), lock.Options{}, nil)
	for i := 0; i < 20; i++ {
		if _, err := s.Update(context.Background(), 1, ask(s, "engineer", "architect", "warm-up question")); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkUpdateAppendLong measures one Store.Update that appends a
// clarification to a ledger of 5,000 (500 of them open), read through its
// layout memo: what history adds to an ask.
func BenchmarkUpdateAppendLong(b *testing.B) { benchAppendLong(b, 5000) }

// BenchmarkUpdateAppend20000 is BenchmarkUpdateAppendLong on 20,000
// clarifications (2,000 open): bench/bigledger's long ledger.
func BenchmarkUpdateAppend20000(b *testing.B) { benchAppendLong(b, 20_000) }

func benchAppendLong(b *testing.B, n int) {
	s := longStore(b, n)
	ctx := context.Background()
	q := ask(s, "engineer", "architect", "What is the retry policy?")
	if _, err := s.Update(ctx, 1, q); err != nil { // the memo and index file
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Update(ctx, 1, q); err != nil {
			b.Fatal(err)
		}
	}
}

// longStore is a store whose issue 1 holds n clarifications, one in ten
// open, written whole (no layout memo yet).
func longStore(tb testing.TB, n int) *Store {
	tb.Helper()
	s := NewStore(tb.TempDir(), lock.Options{}, nil)
	l := &Ledger{IssueNumber: 1, Clarifications: []*Clarification{}}
	for i := range n {
		var one Ledger // ask numbers it 001: renumbered, so that making the ledger is linear
		if err := ask(s, "engineer", "architect", "Which retry budget applies to call "+strconv.Itoa(i)+", and where is it configured?")(&one); err != nil {
			tb.Fatal(err)
		}
		c := one.Clarifications[0]
		c.ID = FormatID(1, i+1)
		if i%10 != 0 {
			c.Status = Resolved
		}
		l.Clarifications = append(l.Clarifications, c)
	}
	data, err := Encode(l)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(s.Path(1)), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(s.Path(1), data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkEncode20000 measures Encode of a ledger of 20,000
// clarifications decoded from its bytes (its closed records sealed): what
// remote mode's commit of it costs agentx before git.
func BenchmarkEncode20000(b *testing.B) {
	s := longStore(b, 20_000)
	data, err := os.ReadFile(s.Path(1))
	if err != nil {
		b.Fatal(err)
	}
	l, err := DecodeIssue("bench", 1, data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(l); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindHandedOn20000 measures how a write made again on a shared
// ledger fetched since looks for its question there (findOpen: among the
// open records) against the look of a writer whose holder died (findMade:
// its asker's closed records opened too), on 20,000 clarifications, 18,000
// of them closed, all the asker's, the question not there (the usual
// retry: the earlier try did not land). The whole search takes a tenth
// of a second a run: CI's short pass leaves it out (-skip), run it by
// hand (-bench FindHandedOn20000).
func BenchmarkFindHandedOn20000(b *testing.B) {
	s := longStore(b, 20_000)
	data, err := os.ReadFile(s.Path(1))
	if err != nil {
		b.Fatal(err)
	}
	l, err := DecodeIssue("bench", 1, data) // a fetched ledger: its closed records sealed
	if err != nil {
		b.Fatal(err)
	}
	a := &Asking{Question: NewQuestion{From: "engineer", To: "architect", Topic: "not asked", Body: "Not asked?"}, At: t0}
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			if a.findOpen(l) != nil { // opens nothing: l stays as read
				b.Fatal("found a question never asked")
			}
		}
	})
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			again := resealed(l) // findMade opens the records it looks at
			b.StartTimer()
			if a.findMade(again) != nil {
				b.Fatal("found a question never asked")
			}
		}
	})
}

// resealed is a copy of l whose records are as l's were read (opening a
// record of the copy leaves l's as it is).
func resealed(l *Ledger) *Ledger {
	out := &Ledger{IssueNumber: l.IssueNumber, Clarifications: make([]*Clarification, len(l.Clarifications))}
	for i, c := range l.Clarifications {
		x := *c
		out.Clarifications[i] = &x
	}
	return out
}
