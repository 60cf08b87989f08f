package ledger

import (
	"context"
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
