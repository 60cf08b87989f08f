package lock

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestParseRun: the queue file's run state is read only in the form
// formatRun writes; anything else is no run.
func TestParseRun(t *testing.T) {
	start, release := time.Unix(0, 1_700_000_000_000_000_000), time.Unix(0, 1_700_000_000_400_000_000)
	good := string(formatRun(runState{Start: start, Release: release}))
	if good != "agentx-run 01700000000000000000 01700000000400000000 00000000000000000000\n" {
		t.Fatalf("formatRun = %q", good)
	}
	seen := formatRun(runState{Start: start, Release: release, Foreign: release})
	if s, ok := parseRun(seen); !ok || !s.Foreign.Equal(release) || len(seen) != len(good) {
		t.Fatalf("parseRun(%q) = %+v, %v: want the foreign sighting back, the line as long as without", seen, s, ok)
	}
	cases := []struct {
		name, in string
		ok       bool
	}{
		{"as written", good, true},
		{"same instant", "agentx-run 5 5\n", true},
		{"empty (an older agentx's queue file)", "", false},
		{"no newline (cut short)", "agentx-run 1700000000000000000 1700000000400000000", false},
		{"other magic", "agentx-ran 1 2\n", false},
		{"release before start", "agentx-run 2 1\n", false},
		{"zero start", "agentx-run 0 1\n", false},
		{"negative", "agentx-run -5 1\n", false},
		{"not a number", "agentx-run 1x 2\n", false},
		{"too big", "agentx-run 1 99999999999999999999\n", false},
		{"the earlier line, without FOREIGN", "agentx-run 1700000000000000000 1700000000400000000\n", true},
		{"foreign seen", "agentx-run 1 2 3\n", true},
		{"negative foreign", "agentx-run 1 2 -3\n", false},
		{"extra field", "agentx-run 1 2 3 4\n", false},
		{"missing field", "agentx-run 1\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := parseRun([]byte(tc.in))
			if ok != tc.ok {
				t.Fatalf("parseRun(%q) ok = %v, want %v", tc.in, ok, tc.ok)
			}
			if tc.in == good && (!s.Start.Equal(start) || !s.Release.Equal(release)) {
				t.Errorf("parseRun = %+v", s)
			}
		})
	}
}

// FuzzParseRun: any queue file content parses or is no run, never a
// panic; what parses has a start at or before its release and writes back
// to itself.
func FuzzParseRun(f *testing.F) {
	for _, s := range []string{"agentx-run 01700000000000000000 01700000000400000000\n", "agentx-run 1700000000000000000 1700000000400000000\n", "", "agentx-run 1 1\n", "agentx-run  9 10 \n", "\xff\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ok := parseRun(data)
		if !ok {
			return
		}
		if s.Release.Before(s.Start) || s.Start.UnixNano() <= 0 {
			t.Fatalf("parseRun(%q) = %+v", data, s)
		}
		again, ok := parseRun(formatRun(s))
		if !ok || !again.Start.Equal(s.Start) || !again.Release.Equal(s.Release) {
			t.Fatalf("round trip of %+v: %+v, %v", s, again, ok)
		}
	})
}

// seedRun records in data's queue file a run that began at start and was
// last released at release, as a previous holder would have.
func seedRun(t *testing.T, data string, start, release time.Time) {
	t.Helper()
	seedRunSeen(t, data, start, release, release)
}

// seedRunSeen is seedRun with a foreign tool's lock last seen at foreign
// (zero: never).
func seedRunSeen(t *testing.T, data string, start, release, foreign time.Time) {
	t.Helper()
	writeFile(t, data+Suffix+QueueSuffix, string(formatRun(runState{Start: start, Release: release, Foreign: foreign})))
}

// poller tries, from 20 ms on until the lock is taken or until stop, to
// create the lock file as a foreign tool does, every 15 ms; once it has it, it
// holds it for hold and removes it. It reports when it got it (zero: never).
func poller(t *testing.T, lockPath string, hold, stop time.Duration) <-chan time.Time {
	t.Helper()
	got := make(chan time.Time, 1)
	go func() {
		deadline := time.Now().Add(stop)
		time.Sleep(20 * time.Millisecond)
		for time.Now().Before(deadline) {
			f, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err == nil {
				_, _ = f.WriteString(`{"pid":1,"timestamp":"` + stamp(time.Now()) + `","agent":"engineer"}`)
				_ = f.Close()
				at := time.Now()
				time.Sleep(hold)
				_ = os.Remove(lockPath)
				got <- at
				return
			}
			time.Sleep(15 * time.Millisecond)
		}
		got <- time.Time{}
	}()
	return got
}

// TestFairWindow: a holder that continues a run of agentx holders older
// than the bound leaves the lock file absent for the window first: a
// foreign poller gets in, and the holder waits for it and then leaves
// another window. A run younger than the bound, one that ended longer than
// a window ago, and the fair hand-off off, all take the lock at once, and
// the poller does not get in while it is held.
func TestFairWindow(t *testing.T) {
	fair := Fairness{Bound: 100 * time.Millisecond, Window: 250 * time.Millisecond}
	cases := []struct {
		name       string
		fair       Fairness
		runAge     time.Duration // how long ago the recorded run began
		releaseAgo time.Duration // and its last holder released
		seenAgo    time.Duration // and a foreign tool's lock was seen; -1: never
		window     bool
	}{
		{"long run: window", fair, time.Second, 0, time.Minute, true},
		{"young run: none", fair, 50 * time.Millisecond, 0, time.Minute, false},
		{"quiet since: none", fair, time.Second, 300 * time.Millisecond, time.Minute, false},
		{"fair hand-off off", Fairness{}, time.Second, 0, time.Minute, false},
		{"window 0 is off", Fairness{Bound: time.Millisecond}, time.Second, 0, time.Minute, false},
		{"no foreign tool ever seen: none", fair, time.Second, 0, -1, false},
		{"a foreign tool seen over a day ago: none", fair, time.Second, 0, ForeignMemory + time.Minute, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "issue-1.json")
			now := time.Now()
			var seen time.Time
			if tc.seenAgo >= 0 {
				seen = now.Add(-tc.seenAgo)
			}
			seedRunSeen(t, data, now.Add(-tc.runAge), now.Add(-tc.releaseAgo), seen)
			got := poller(t, data+Suffix, 50*time.Millisecond, 400*time.Millisecond)
			start := time.Now()
			l, err := Acquire(t.Context(), data, Options{Fair: tc.fair})
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			time.Sleep(150 * time.Millisecond) // hold it while the poller tries
			released := time.Now()
			if err := l.Release(); err != nil {
				t.Fatal(err)
			}
			at := <-got
			if !tc.window {
				if took > 100*time.Millisecond {
					t.Errorf("Acquire took %v, want at once", took)
				}
				if !at.IsZero() && at.Before(released) {
					t.Errorf("the poller got in %v after Acquire began, while the lock was held", at.Sub(start))
				}
				return
			}
			if at.IsZero() || at.After(start.Add(took)) {
				t.Fatalf("the poller did not get in during the window (got it at %v, Acquire took %v)", at.Sub(start), took)
			}
			// after the poller's 50 ms, another window
			if want := at.Sub(start) + 50*time.Millisecond + fair.Window; took < want-20*time.Millisecond {
				t.Errorf("Acquire took %v, want at least %v (the poller's hold and another window)", took, want)
			}
		})
	}
}

// TestFairWindowBounded: foreign tools that come in again and again keep a
// holder out for at most FairChains windows (then it waits only for the
// one in, as for any foreign lock); the lock's wait budget cuts a window
// short too.
func TestFairWindowBounded(t *testing.T) {
	data := filepath.Join(t.TempDir(), "issue-2.json")
	lockPath := data + Suffix
	fair := Fairness{Bound: time.Millisecond, Window: 100 * time.Millisecond}
	seedRun(t, data, time.Now().Add(-time.Second), time.Now())
	ctx, cancel := context.WithCancel(t.Context())
	var ins atomic.Int32
	done := make(chan struct{})
	go func() { // come in 30 ms after the lock file goes, hold it 20 ms
		defer close(done)
		for ctx.Err() == nil {
			if _, err := os.Lstat(lockPath); errors.Is(err, fs.ErrNotExist) {
				time.Sleep(30 * time.Millisecond)
				if f, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
					_, _ = f.WriteString(`{"pid":1,"timestamp":"` + stamp(time.Now()) + `","agent":"cli"}`)
					_ = f.Close()
					ins.Add(1)
					time.Sleep(20 * time.Millisecond)
					_ = os.Remove(lockPath)
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	start := time.Now()
	l, err := Acquire(t.Context(), data, Options{Fair: fair})
	took := time.Since(start)
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if n := ins.Load(); n < 2 {
		t.Errorf("the foreign tool came in %d times, want it let in again after each hold", n)
	}
	if limit := FairChains*fair.Window + 500*time.Millisecond; took > limit {
		t.Errorf("Acquire took %v with a foreign tool coming in over and over, want under %v", took, limit)
	}

	// The wait budget bounds a window.
	data2 := filepath.Join(t.TempDir(), "issue-3.json")
	seedRun(t, data2, time.Now().Add(-time.Second), time.Now())
	start = time.Now()
	l2, err := Acquire(t.Context(), data2, Options{Wait: 150 * time.Millisecond, Fair: Fairness{Bound: time.Millisecond, Window: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Release()
	if took := time.Since(start); took < 140*time.Millisecond || took > time.Second {
		t.Errorf("Acquire took %v, want the 150ms wait", took)
	}
}

// TestFairWindowSkipsOrphans: a lock file create takes over at once (left
// by a dead agentx process) ends the window at once.
func TestFairWindowSkipsOrphans(t *testing.T) {
	data := filepath.Join(t.TempDir(), "issue-4.json")
	seedRun(t, data, time.Now().Add(-time.Second), time.Now())
	now := stamp(time.Now())
	writeFile(t, data+Suffix, `{"pid":`+strconv.Itoa(os.Getpid())+`,"host":"`+Hostname()+`","agent":"agentx","token":"dead","timestamp":"`+now+`","created":"`+now+`"}`)
	start := time.Now()
	l, err := Acquire(t.Context(), data, Options{Fair: Fairness{Bound: time.Millisecond, Window: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("Acquire took %v, want at once", took)
	}
	if prev, _ := l.TakenOver(); prev == nil || prev.Token != "dead" {
		t.Errorf("TakenOver = %+v", prev)
	}
}

// TestReleaseRecordsRun: with the fair hand-off on, Release records the
// run in the queue file (the next holder's start continues it); off, the
// queue file stays empty.
func TestReleaseRecordsRun(t *testing.T) {
	for _, fair := range []Fairness{{Bound: time.Second, Window: time.Second}, {}} {
		data := filepath.Join(t.TempDir(), "issue-5.json")
		if fair.on() { // something longer than a run line is cut to it
			writeFile(t, data+Suffix+QueueSuffix, strings.Repeat("damage ", 40))
		}
		before := time.Now()
		for range 2 {
			l, err := Acquire(t.Context(), data, Options{Fair: fair})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Release(); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := os.ReadFile(data + Suffix + QueueSuffix)
		if err != nil {
			t.Fatal(err)
		}
		if !fair.on() {
			if len(raw) != 0 {
				t.Errorf("fair hand-off off: queue file holds %q", raw)
			}
			continue
		}
		s, ok := parseRun(raw)
		if !ok || s.Start.Before(before) || s.Release.Before(s.Start) || s.Release.After(time.Now()) {
			t.Errorf("queue file %q: %+v, %v", raw, s, ok)
		}
	}
}

// TestForeignSeen: a foreign tool's lock found by a holder is recorded in
// the queue file at its release; Lock.NoteForeign records one too. A stale lock file left by nobody alive
// records nothing.
func TestForeignSeen(t *testing.T) {
	fair := Fairness{Bound: time.Millisecond, Window: 50 * time.Millisecond}
	data := filepath.Join(t.TempDir(), "issue-5.json")
	lockPath := data + Suffix
	// a foreign tool holds the lock for 100 ms while an agentx holder waits
	writeFile(t, lockPath, `{"pid":1,"timestamp":"`+stamp(time.Now())+`","agent":"engineer"}`)
	go func() { time.Sleep(100 * time.Millisecond); _ = os.Remove(lockPath) }()
	l, err := Acquire(t.Context(), data, Options{Fair: fair})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	s, ok := readRun(data + Suffix + QueueSuffix)
	if !ok || !s.foreignAbout(time.Now()) {
		t.Fatalf("queue file after a foreign hold: %+v, %v; want the foreign tool seen", s, ok)
	}

	fresh := filepath.Join(t.TempDir(), "issue-6.json")
	l, err = Acquire(t.Context(), fresh, Options{Fair: fair})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := readRun(fresh + Suffix + QueueSuffix); !s.Foreign.IsZero() {
		t.Fatalf("a fresh lock's queue file says a foreign tool was seen: %+v", s)
	}
	l.NoteForeign()
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if s, ok := readRun(fresh + Suffix + QueueSuffix); !ok || !s.foreignAbout(time.Now()) {
		t.Fatalf("queue file after NoteForeign: %+v, %v; want the foreign tool seen", s, ok)
	}

	stale := filepath.Join(t.TempDir(), "issue-8.json")
	writeFile(t, stale+Suffix, `{"pid":1,"timestamp":"`+stamp(time.Now().Add(-time.Hour))+`","agent":"engineer"}`)
	l, err = Acquire(t.Context(), stale, Options{Fair: fair})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if s, _ := readRun(stale + Suffix + QueueSuffix); !s.Foreign.IsZero() {
		t.Fatalf("a stale lock taken over was counted as a foreign tool about: %+v", s)
	}
}
