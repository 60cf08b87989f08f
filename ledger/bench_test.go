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
	s := NewStore(b.TempDir(), lock.Options{}, nil)
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		if _, err := s.Update(ctx, 1, ask(s, "engineer", "architect", "warm-up question")); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// keep the ledger at a steady size so every iteration does the same work
		if i%50 == 0 {
			s = NewStore(b.TempDir(), lock.Options{}, nil)
			for j := 0; j < 20; j++ {
				_, _ = s.Update(ctx, 1, ask(s, "engineer", "architect", "warm-up question"))
			}
		}
		b.StartTimer()
		if _, err := s.Update(ctx, 1, ask(s, "engineer", "architect", "What is the retry policy?")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead measures an unlocked read of a 20-record ledger.
func BenchmarkRead(b *testing.B) {
	s := NewStore(b.TempDir(), lock.Options{}, nil)
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		if _, err := s.Update(ctx, 1, ask(s, "engineer", "architect", "warm-up question")); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Read(1); err != nil {
			b.Fatal(err)
		}
	}
}
