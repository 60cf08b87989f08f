package lock

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestHandoff: Post is called only when the queue is held by another,
// before the wait; Done when the queue is granted after a Post. Done true
// ends the acquisition with ErrHanded, no lock file made and the queue
// free; false gives the lock as before.
func TestHandoff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		busy   bool
		done   bool
		posts  int32
		dones  int32
		handed bool
	}{
		{"free: nothing handed", false, true, 0, 0, false},
		{"held, then made by the holder", true, true, 1, 1, true},
		{"held, then taken back", true, false, 1, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "issue-7.json")
			var held *Lock
			if tc.busy {
				var err error
				if held, err = Acquire(t.Context(), data, Options{Agent: "holder"}); err != nil {
					t.Fatal(err)
				}
			}
			var posts, dones atomic.Int32
			posted := make(chan struct{})
			hand := &Handoff{
				Post: func() { posts.Add(1); close(posted) },
				Done: func() bool { dones.Add(1); return tc.done },
			}
			type result struct {
				lk  *Lock
				err error
			}
			r := make(chan result, 1)
			go func() {
				lk, err := Acquire(t.Context(), data, Options{Agent: "asker", Hand: hand})
				r <- result{lk, err}
			}()
			if tc.busy {
				select {
				case <-posted:
				case <-time.After(10 * time.Second):
					t.Fatal("Post was not called while the queue was held")
				}
				if dones.Load() != 0 {
					t.Fatal("Done called before the queue was granted")
				}
				if err := held.Release(); err != nil {
					t.Fatal(err)
				}
			}
			got := <-r
			if posts.Load() != tc.posts || dones.Load() != tc.dones {
				t.Errorf("Post %d and Done %d times, want %d and %d", posts.Load(), dones.Load(), tc.posts, tc.dones)
			}
			if tc.handed {
				if !errors.Is(got.err, ErrHanded) || got.lk != nil {
					t.Fatalf("got %v, %v; want ErrHanded", got.lk, got.err)
				}
				if _, err := os.Lstat(data + Suffix); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a lock file was made: %v", err)
				}
				next, err := Acquire(t.Context(), data, Options{Wait: 500 * time.Millisecond})
				if err != nil {
					t.Fatalf("the queue was left held: %v", err)
				}
				_ = next.Release()
				return
			}
			if got.err != nil {
				t.Fatal(got.err)
			}
			if err := got.lk.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
