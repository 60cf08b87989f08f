package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentx-cli/agentx/internal/testenv"
)

// helperEnv makes the test binary act as a helper process (runHelper).
const helperEnv = "AGENTX_LOCK_HELPER"

func TestMain(m *testing.M) {
	testenv.QuickRaceExit()
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

var stampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// TestLockFileContent: the lock file is JSON with pid, host, agent, a random
// hex token and equal timestamp/created in RFC 3339 UTC with milliseconds;
// no temp file is left; Release removes the lock but not the guard file.
func TestLockFileContent(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "issue-42.json")
	before := time.Now().UTC().Truncate(time.Millisecond)
	l, err := Acquire(t.Context(), data, Options{Agent: "engineer"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != data+".lock" {
		t.Errorf("Path = %q", l.Path())
	}
	raw, err := os.ReadFile(data + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("lock content %q: %v", raw, err)
	}
	if len(m) != 6 {
		t.Errorf("lock has fields %v, want pid host agent token timestamp created", m)
	}
	var info Info
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if info.PID != os.Getpid() || info.Host != host || info.Agent != "engineer" {
		t.Errorf("lock = %+v", info)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(info.Token) {
		t.Errorf("token %q is not 32 hex digits", info.Token)
	}
	if !stampRE.MatchString(info.Timestamp) || info.Created != strings.TrimSuffix(info.Timestamp, "Z") {
		t.Errorf("timestamp %q, created %q: want RFC 3339 UTC with ms, and the same UTC time with no zone", info.Timestamp, info.Created)
	}
	if at, _ := info.CreatedAt(); at.Before(before) || at.After(time.Now()) {
		t.Errorf("created %v not within the call", at)
	}
	if l.Info() != info {
		t.Errorf("Lock.Info() = %+v, file has %+v", l.Info(), info)
	}
	if prev, _ := l.TakenOver(); prev != nil {
		t.Errorf("TakenOver = %+v on a free lock", prev)
	}
	assertNoTemps(t, dir)

	l2, err := Acquire(t.Context(), data, Options{Wait: 20 * time.Millisecond})
	if err == nil {
		l2.Release()
		t.Fatal("second Acquire succeeded while held")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(data + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file after Release: %v", err)
	}
	if _, err := os.Stat(data + ".lock" + QueueSuffix); err != nil {
		t.Errorf("queue file: %v", err)
	}
	assertNoTemps(t, dir)
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	temps, _ := filepath.Glob(filepath.Join(dir, "*"+TempInfix+"*"))
	if len(temps) > 0 {
		t.Errorf("temp files left: %v", temps)
	}
}

// TestTimeoutAdvice: what a timeout advises follows what the holder is
// doing: paused, resume it; running, wait (and end it only after a minute);
// unknown, resume or end it.
func TestTimeoutAdvice(t *testing.T) {
	holder := &Info{Agent: "engineer", PID: 4242, Host: Hostname()}
	tests := []struct {
		name          string
		e             TimeoutError
		want, notWant []string
	}{
		{"paused", TimeoutError{Path: "l", Holder: holder, Age: 5 * time.Second, HolderStopped: true},
			[]string{"is paused", "kill -CONT 4242"}, []string{"kill 4242"}},
		{"running a few seconds", TimeoutError{Path: "l", Holder: holder, Age: 5 * time.Second, HolderRunning: true},
			[]string{"is running", "a slow write", "[lock] wait"}, []string{"kill"}},
		{"running over a minute", TimeoutError{Path: "l", Holder: holder, Age: 90 * time.Second, HolderRunning: true},
			[]string{"is running", "may be stuck", "kill 4242"}, []string{"kill -CONT"}},
		{"state unknown", TimeoutError{Path: "l", Holder: holder, Age: 5 * time.Second},
			[]string{"kill -CONT 4242", "kill 4242"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := tt.e.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("message %q says %q", msg, w)
				}
			}
		})
	}
}

// TestTimeout: a lock held by a live process (this one, another token) makes
// Acquire with Wait 100ms return *TimeoutError naming the holder and saying
// how to clear it.
func TestTimeout(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "issue-7.json")
	held, err := Acquire(t.Context(), data, Options{Agent: "engineer"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()

	start := time.Now()
	_, err = Acquire(t.Context(), data, Options{Wait: 100 * time.Millisecond, Agent: "architect"})
	elapsed := time.Since(start)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want *TimeoutError", err)
	}
	if elapsed < 100*time.Millisecond || elapsed > 2*time.Second {
		t.Errorf("returned after %v, want ~100ms", elapsed)
	}
	if te.Path != data+".lock" || te.Holder == nil || te.Holder.Token != held.Info().Token ||
		te.Holder.PID != os.Getpid() || te.Waited < 100*time.Millisecond || te.Age <= 0 || te.Age > 2*time.Second {
		t.Errorf("TimeoutError = %+v holder %+v", te, te.Holder)
	}
	msg := err.Error()
	wants := []string{data + ".lock", `agent "engineer"`, fmt.Sprintf("pid %d", os.Getpid()), fmt.Sprintf("host %q", Hostname()), "[lock] wait"}
	if runtime.GOOS == "linux" {
		// the holder (this process) runs: slow, not stuck; no kill advised
		wants = append(wants, fmt.Sprintf("the holder (pid %d) is running", os.Getpid()))
		if strings.Contains(msg, "kill") {
			t.Errorf("message %q advises ending a holder that is only slow", msg)
		}
	} else {
		wants = append(wants, fmt.Sprintf("kill -CONT %d", os.Getpid()), "freed the moment it exits")
	}
	for _, want := range wants {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	t.Log(msg)
	assertNoTemps(t, dir)
}

// TestContextCancel: cancelling ctx makes a waiting Acquire return promptly
// with an error matching context.Canceled (not a TimeoutError); so does an
// already-cancelled ctx, and a ctx deadline gives context.DeadlineExceeded.
func TestContextCancel(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.json")
	held, err := Acquire(t.Context(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()

	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err = Acquire(ctx, data, Options{Wait: 10 * time.Second})
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("cancel took %v to take effect", elapsed)
	}
	var te *TimeoutError
	if !errors.Is(err, context.Canceled) || errors.As(err, &te) || !strings.Contains(err.Error(), data+".lock") {
		t.Errorf("err = %v, want wrapped context.Canceled", err)
	}

	if _, err := Acquire(ctx, filepath.Join(dir, "free.json"), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx, free lock: err = %v", err)
	}

	dctx, dcancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer dcancel()
	if _, err := Acquire(dctx, data, Options{Wait: 10 * time.Second}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ctx deadline: err = %v", err)
	}
	assertNoTemps(t, dir)
}

// TestReleaseForeignToken: Release leaves alone a lock file that now carries
// another token, or that is gone, and returns ErrNotHeld; a second Release
// also gives ErrNotHeld.
func TestReleaseForeignToken(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "r.json")
	l, err := Acquire(t.Context(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Someone took it over (as if ours had gone stale) and holds it now.
	foreign := fmt.Sprintf(`{"pid":%d,"host":"other","agent":"x","token":"feedface","timestamp":"%s","created":"%s"}`,
		os.Getpid(), stamp(time.Now()), stamp(time.Now()))
	if err := os.Remove(data + ".lock"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, data+".lock", foreign)

	err = l.Release()
	if !errors.Is(err, ErrNotHeld) || !strings.Contains(err.Error(), `agent "x"`) {
		t.Errorf("Release = %v, want ErrNotHeld naming the holder", err)
	}
	if got, _ := os.ReadFile(data + ".lock"); string(got) != foreign {
		t.Errorf("foreign lock changed to %q", got)
	}
	if err := l.Release(); !errors.Is(err, ErrNotHeld) {
		t.Errorf("second Release = %v, want ErrNotHeld", err)
	}

	// The lock file is gone.
	os.Remove(data + ".lock")
	l, err = Acquire(t.Context(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(data + ".lock")
	if err := l.Release(); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Release of a vanished lock = %v, want ErrNotHeld", err)
	}

	// Normal double release.
	l, err = Acquire(t.Context(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); !errors.Is(err, ErrNotHeld) {
		t.Errorf("double Release = %v, want ErrNotHeld", err)
	}
}

// TestOtherHostRecoveredOnlyAfterStaleAge: a lock from host "elsewhere"
// (whose pid means nothing here) is respected while fresh and taken over once
// older than StaleAge, with a fake clock and with a real short wait.
func TestOtherHostRecoveredOnlyAfterStaleAge(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "o.json")
	base := time.Now()
	writeFile(t, data+".lock", fmt.Sprintf(`{"pid":%d,"host":"elsewhere","agent":"engineer","token":"remote","timestamp":"%s","created":"%s"}`,
		1<<30, stamp(base), stamp(base))) // pid 1<<30 does not exist here

	at := func(d time.Duration) func() time.Time { return func() time.Time { return base.Add(d) } }
	_, err := Acquire(t.Context(), data, Options{Wait: 100 * time.Millisecond, Now: at(29 * time.Second)})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Holder == nil || te.Holder.Host != "elsewhere" {
		t.Fatalf("fresh foreign lock: err = %v, want TimeoutError naming host elsewhere", err)
	}
	if !strings.Contains(err.Error(), "goes stale in 1s") || !strings.Contains(err.Error(), "not an agentx process") {
		t.Errorf("message %q does not say when it goes stale", err)
	}
	l, err := Acquire(t.Context(), data, Options{Wait: 100 * time.Millisecond, Now: at(31 * time.Second)})
	if err != nil {
		t.Fatalf("stale foreign lock not taken over: %v", err)
	}
	prev, reason := l.TakenOver()
	if prev == nil || prev.Token != "remote" || !strings.Contains(reason, "older than the stale age") {
		t.Errorf("TakenOver = %+v, %q", prev, reason)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}

	// Real clock: StaleAge 300ms is raised to the floor, MinStaleAge.
	now := time.Now()
	writeFile(t, data+".lock", fmt.Sprintf(`{"pid":1,"host":"elsewhere","agent":"engineer","token":"remote2","timestamp":"%s","created":"%s"}`,
		stamp(now), stamp(now)))
	start := time.Now()
	l, err = Acquire(t.Context(), data, Options{StaleAge: 300 * time.Millisecond, Wait: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 900*time.Millisecond || waited > 2500*time.Millisecond {
		t.Errorf("taken over after %v, want about 1s", waited)
	}
	if prev, _ := l.TakenOver(); prev == nil || prev.Token != "remote2" {
		t.Errorf("TakenOver = %+v", prev)
	}
	l.Release()
}

// TestForeignToolLocks: locks written by the AgentX TypeScript and PowerShell
// tools (no host, no token) are respected while fresh and taken over when
// old; an empty lock is respected for the grace window only.
func TestForeignToolLocks(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name    string
		content string
		modAgo  time.Duration
		stale   bool
	}{
		{"TS fresh, dead pid", fmt.Sprintf(`{"pid":%d,"timestamp":"%s","agent":"engineer"}`, 1<<30, stamp(now)), 0, false},
		{"TS old", fmt.Sprintf(`{"pid":%d,"timestamp":"%s","agent":"engineer"}`, os.Getpid(), stamp(now.Add(-time.Minute))), 0, true},
		{"PowerShell fresh", fmt.Sprintf(`{"agent":"cli","created":"%s"}`, stamp(now)), 0, false},
		{"PowerShell old", fmt.Sprintf(`{"agent":"cli","created":"%s"}`, stamp(now.Add(-time.Minute))), 0, true},
		{"empty, just created", ``, 0, false},
		{"empty, 3s old", ``, 3 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "f.json")
			writeFile(t, data+".lock", tt.content)
			mt := now.Add(-tt.modAgo)
			if err := os.Chtimes(data+".lock", mt, mt); err != nil {
				t.Fatal(err)
			}
			l, err := Acquire(t.Context(), data, Options{Wait: 50 * time.Millisecond})
			if !tt.stale {
				var te *TimeoutError
				if !errors.As(err, &te) {
					t.Fatalf("err = %v, want TimeoutError", err)
				}
				if got, _ := os.ReadFile(data + ".lock"); string(got) != tt.content {
					t.Errorf("lock changed to %q", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("not taken over: %v", err)
			}
			if prev, _ := l.TakenOver(); prev == nil {
				t.Error("TakenOver = nil")
			}
			l.Release()
		})
	}
}

// TestNeverHalfWritten: while goroutines churn the lock, readers never see a
// lock file that exists but is not complete JSON; and the goroutines (each
// with its own token) exclude each other.
func TestNeverHalfWritten(t *testing.T) {
	data := filepath.Join(t.TempDir(), "h.json")
	var inside, violations, reads atomic.Int64
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				raw, err := os.ReadFile(data + ".lock")
				if err != nil {
					continue
				}
				reads.Add(1)
				var info Info
				if err := json.Unmarshal(raw, &info); err != nil || info.Token == "" || info.Created == "" || info.Created+"Z" != info.Timestamp {
					t.Errorf("reader saw %q (%v)", raw, err)
					violations.Add(1)
				}
			}
		})
	}
	var writers sync.WaitGroup
	for range 4 {
		writers.Go(func() {
			for range 50 {
				l, err := Acquire(t.Context(), data, Options{})
				if err != nil {
					t.Error(err)
					return
				}
				if inside.Add(1) != 1 {
					violations.Add(1)
				}
				time.Sleep(50 * time.Microsecond)
				inside.Add(-1)
				if err := l.Release(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	if violations.Load() != 0 {
		t.Errorf("%d violations", violations.Load())
	}
	if reads.Load() == 0 {
		t.Error("readers never saw the lock")
	}
	t.Logf("%d reads of the lock file, all complete", reads.Load())
}

// TestLiveHolderNeverTakenOver: a lock held by a live agentx process is
// never taken over, however old it looks: a waiter with a clock an hour
// ahead times out and the holder's lock file is untouched.
func TestLiveHolderNeverTakenOver(t *testing.T) {
	data := filepath.Join(t.TempDir(), "live.json")
	held, err := Acquire(t.Context(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(data + ".lock")
	later := func() time.Time { return time.Now().Add(time.Hour) }
	_, err = Acquire(t.Context(), data, Options{Wait: 100 * time.Millisecond, Now: later, StaleAge: time.Second})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Foreign {
		t.Fatalf("err = %v, want a TimeoutError on the kernel queue", err)
	}
	if after, _ := os.ReadFile(data + ".lock"); string(after) != string(before) {
		t.Errorf("lock file changed to %q", after)
	}
	if err := held.Check(); err != nil {
		t.Errorf("Check = %v", err)
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestQueueSerialises: while another process holds the kernel queue, a
// stale foreign lock is not removed and Acquire waits; a waiter that gave
// up releases the lock the kernel hands it later, so the next one gets in.
func TestQueueSerialises(t *testing.T) {
	data := filepath.Join(t.TempDir(), "g.json")
	old := stamp(time.Now().Add(-time.Hour))
	stale := `{"pid":1,"host":"elsewhere","agent":"a","token":"stale","timestamp":"` + old + `","created":"` + old + `"}`
	writeFile(t, data+".lock", stale)

	queue := flock.New(data + ".lock" + QueueSuffix)
	if err := queue.Lock(); err != nil {
		t.Fatal(err)
	}
	_, err := Acquire(t.Context(), data, Options{Wait: 100 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Errorf("err = %v, want TimeoutError", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, data, Options{Wait: 10 * time.Second}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want DeadlineExceeded", err)
	}
	if got, _ := os.ReadFile(data + ".lock"); string(got) != stale {
		t.Errorf("stale lock removed while the queue was held: %q", got)
	}
	if err := queue.Unlock(); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(t.Context(), data, Options{Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if prev, _ := l.TakenOver(); prev == nil || prev.Token != "stale" {
		t.Errorf("TakenOver = %+v", prev)
	}
	l.Release()
}

// TestOrphanedAgentxLock: an agentx lock file from this host whose writer
// no longer holds the kernel lock (it died, and its pid may even be reused
// by a live process) is taken over at once.
func TestOrphanedAgentxLock(t *testing.T) {
	data := filepath.Join(t.TempDir(), "o.json")
	now := stamp(time.Now())
	orphan := fmt.Sprintf(`{"pid":%d,"host":%q,"agent":"agentx","token":"dead","timestamp":"%s","created":"%s"}`, os.Getppid(), Hostname(), now, now)
	writeFile(t, data+".lock", orphan)
	l, err := Acquire(t.Context(), data, Options{Wait: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if prev, reason := l.TakenOver(); prev == nil || prev.Token != "dead" || !strings.Contains(reason, "no longer holds it") {
		t.Errorf("TakenOver = %+v, %q", prev, reason)
	}
	l.Release()
}

// TestCheckAndLost: Check is nil while the lock file carries our token and
// a *LostError once a foreign tool replaced it; Release then leaves the
// foreign lock alone but frees the kernel queue.
func TestCheckAndLost(t *testing.T) {
	data := filepath.Join(t.TempDir(), "c.json")
	l, err := Acquire(t.Context(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Fatalf("Check = %v", err)
	}
	foreign := `{"agent":"cli","created":"` + stamp(time.Now()) + `"}`
	os.Remove(data + ".lock")
	writeFile(t, data+".lock", foreign)
	var lost *LostError
	if err := l.Check(); !errors.As(err, &lost) || !errors.Is(err, ErrNotHeld) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("Check = %v, want LostError", err)
	}
	if err := l.Release(); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Release = %v", err)
	}
	if got, _ := os.ReadFile(data + ".lock"); string(got) != foreign {
		t.Errorf("foreign lock changed to %q", got)
	}
	if ok, _ := flock.New(data + ".lock" + QueueSuffix).TryLock(); !ok {
		t.Error("kernel queue still held after Release")
	}
}

// TestFutureDatedForeignLock: a foreign lock dated in the future does not
// hold the issue forever: judged by its mod time when that is sane, stale
// when its date is more than the stale age ahead.
func TestFutureDatedForeignLock(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name   string
		ahead  time.Duration // how far in the future the created date is
		modAgo time.Duration // the mod time, relative to now (negative: future)
		stale  bool
	}{
		{"a year ahead, fresh file", 365 * 24 * time.Hour, 0, false},
		{"a year ahead, old file", 365 * 24 * time.Hour, time.Minute, true},
		{"a year ahead, future file", 365 * 24 * time.Hour, -365 * 24 * time.Hour, true},
		{"10s ahead, future file", 10 * time.Second, -10 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := StaleInput{Info: &Info{Agent: "cli", Created: stamp(now.Add(tt.ahead))}, ModTime: now.Add(-tt.modAgo), Now: now}
			if stale, reason := IsStale(in); stale != tt.stale {
				t.Errorf("IsStale = %v (%s), want %v", stale, reason, tt.stale)
			}
		})
	}
}

// TestPreparedFileRemoved: a prepared lock file removed before it is
// linked (doctor --fix's cleanup of temp files, judging by a clock set
// ahead, removed a live holder's) is prepared again; one removed every
// time ends in an error, not a loop.
func TestPreparedFileRemoved(t *testing.T) {
	var removals atomic.Int32
	limit := int32(2)
	linkFile = func(oldname, newname string) error {
		if removals.Load() < limit {
			removals.Add(1)
			if err := os.Remove(oldname); err != nil {
				t.Error(err)
			}
		}
		return os.Link(oldname, newname)
	}
	defer func() { linkFile = os.Link }()
	dir := t.TempDir()
	data := filepath.Join(dir, "r.json")
	l, err := Acquire(t.Context(), data, Options{})
	if err != nil {
		t.Fatalf("Acquire after the prepared file was removed twice: %v", err)
	}
	if info, _, err := Inspect(data + ".lock"); err != nil || info.Token != l.Info().Token {
		t.Errorf("Inspect = %+v, %v", info, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	assertNoTemps(t, dir)

	removals.Store(0)
	limit = 1000
	if _, err := Acquire(t.Context(), data, Options{}); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Acquire with the prepared file removed every time: %v, want an error", err)
	}
}

// TestLinkFallback: where the file system has no hard links, the lock is
// created in place with O_CREAT|O_EXCL and still excludes.
func TestLinkFallback(t *testing.T) {
	linkFile = func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
	defer func() { linkFile = os.Link }()
	dir := t.TempDir()
	data := filepath.Join(dir, "n.json")
	l, err := Acquire(t.Context(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, _, err := Inspect(data + ".lock")
	if err != nil || info.Token != l.Info().Token {
		t.Errorf("Inspect = %+v, %v", info, err)
	}
	var te *TimeoutError
	if _, err := Acquire(t.Context(), data, Options{Wait: 30 * time.Millisecond}); !errors.As(err, &te) {
		t.Errorf("second Acquire: %v, want TimeoutError", err)
	}
	assertNoTemps(t, dir)
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestPreparedLockIsRefreshed: a waiter's prepared lock is rewritten while it
// waits, so the lock it finally links is not born old.
func TestPreparedLockIsRefreshed(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "p.json")
	base, realStart := time.Now(), time.Now()
	fast := func() time.Time { return base.Add(50 * time.Since(realStart)) } // 50x clock
	held, err := Acquire(t.Context(), data, Options{Now: fast})
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, func() { held.Release() }) // 10s on the fast clock
	l, err := Acquire(t.Context(), data, Options{Now: fast})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	mine := l.Info()
	created, _ := mine.CreatedAt()
	// Without refreshing, the lag would be over 10s; with it, at most
	// tempRefresh plus one backoff sleep (50ms real, 2.5s fast).
	if lag := fast().Sub(created); lag > 5*time.Second {
		t.Errorf("lock created %v before it was linked (fast clock)", lag)
	}
	info, _, _ := Inspect(data + ".lock")
	if info == nil || *info != l.Info() {
		t.Errorf("file %+v, Lock %+v", info, l.Info())
	}
	assertNoTemps(t, dir)
}

// TestRemoveIfStale: the doctor entry point removes stale locks only, and
// never one a live agentx process holds, however old it looks.
func TestRemoveIfStale(t *testing.T) {
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "x.json.lock")
	if removed, _, err := RemoveIfStale(lockPath, Options{}); removed || err != nil {
		t.Errorf("missing: %v, %v", removed, err)
	}
	l, err := Acquire(t.Context(), filepath.Join(dir, "x.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	if removed, reason, err := RemoveIfStale(lockPath, Options{Now: later}); removed || err != nil || !strings.Contains(reason, "live agentx") {
		t.Errorf("held: %v, %q, %v", removed, reason, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, lockPath, `{"agent":"cli","created":"`+stamp(time.Now())+`"}`)
	if removed, reason, err := RemoveIfStale(lockPath, Options{}); removed || err != nil {
		t.Errorf("fresh foreign: %v, %q, %v", removed, reason, err)
	}
	removed, reason, err := RemoveIfStale(lockPath, Options{Now: later})
	if !removed || err != nil || !strings.Contains(reason, "older") {
		t.Errorf("old foreign: %v, %q, %v", removed, reason, err)
	}
}

// BenchmarkAcquireRelease: one uncontended Acquire + Release; with the fair
// hand-off off, with it on but every holder after a quiet spell (a window
// of 1ns: the cost of reading and writing the run), and with it on at its
// defaults for a holder that follows the last at once (a burst: a window of
// 400 ms every 400 ms).
func BenchmarkAcquireRelease(b *testing.B) {
	for _, bc := range []struct {
		name string
		fair Fairness
	}{
		{"off", Fairness{}},
		{"quiet", Fairness{Bound: DefaultFairBound, Window: time.Nanosecond}},
		{"burst", Fairness{Bound: DefaultFairBound, Window: DefaultFairWindow}},
	} {
		b.Run(bc.name, func(b *testing.B) { benchAcquireRelease(b, Options{Fair: bc.fair}) })
	}
}

func benchAcquireRelease(b *testing.B, opts Options) {
	data := filepath.Join(b.TempDir(), "bench.json")
	ctx := context.Background()
	for b.Loop() {
		l, err := Acquire(ctx, data, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(); err != nil {
			b.Fatal(err)
		}
	}
}

// runHelper is the body of a helper process; its exit code is checked.
func runHelper(mode string) int {
	data := os.Getenv("AGENTX_LOCK_DATA")
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "helper %s pid %d: %s\n", mode, os.Getpid(), fmt.Sprintf(format, args...))
		return 1
	}
	ctx := context.Background()
	switch mode {
	case "exit":
		return 0

	case "counter":
		// Increment the counter file n times through the lock, non-atomically.
		n, _ := strconv.Atoi(os.Getenv("AGENTX_LOCK_N"))
		var maxWait time.Duration
		defer func() { fmt.Printf("maxwait=%s\n", maxWait) }()
		for i := range n {
			t0 := time.Now()
			l, err := Acquire(ctx, data, Options{})
			maxWait = max(maxWait, time.Since(t0))
			if err != nil {
				var te *TimeoutError
				if errors.As(err, &te) {
					fmt.Fprintf(os.Stderr, "TIMEOUT at %d: %v\n", i, err)
					return 3
				}
				return fail("acquire %d: %v", i, err)
			}
			raw, err := os.ReadFile(data)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fail("read: %v", err)
			}
			v := 0
			if s := strings.TrimSpace(string(raw)); s != "" {
				if v, err = strconv.Atoi(s); err != nil {
					return fail("counter %q: %v", raw, err)
				}
			}
			if err := os.WriteFile(data, []byte(strconv.Itoa(v+1)), 0o644); err != nil {
				return fail("write: %v", err)
			}
			if err := l.Release(); err != nil {
				return fail("release %d: %v", i, err)
			}
		}
		return 0

	case "hold":
		// Acquire, say so, then sleep until killed.
		l, err := Acquire(ctx, data, Options{})
		if err != nil {
			return fail("acquire: %v", err)
		}
		// whole or not at all: the parent reads the token as soon as the
		// file is there
		ready := os.Getenv("AGENTX_LOCK_READY")
		if err := os.WriteFile(ready+".part", []byte(l.Info().Token), 0o644); err != nil {
			return fail("ready: %v", err)
		}
		if err := os.Rename(ready+".part", ready); err != nil {
			return fail("ready: %v", err)
		}
		time.Sleep(time.Hour)
		return 0

	case "mark":
		// Hold a mark at data, say so, then sleep until killed.
		if _, err := NewMark(data); err != nil {
			return fail("mark: %v", err)
		}
		if err := os.WriteFile(os.Getenv("AGENTX_LOCK_READY"), nil, 0o644); err != nil {
			return fail("ready: %v", err)
		}
		time.Sleep(time.Hour)
		return 0

	case "mark-child":
		// Hold a mark at data, start a child that inherits it (sleep),
		// write the child's pid to the ready file, then sleep until killed.
		m, err := NewMark(data)
		if err != nil {
			return fail("mark: %v", err)
		}
		in := &Inheritance{}
		in.Add(m)
		child := exec.Command("sleep", "3600")
		child.ExtraFiles = InheritedFiles(WithInheritance(context.Background(), in))
		if err := child.Start(); err != nil {
			return fail("child: %v", err)
		}
		if err := os.WriteFile(os.Getenv("AGENTX_LOCK_READY"), []byte(strconv.Itoa(child.Process.Pid)), 0o644); err != nil {
			return fail("ready: %v", err)
		}
		time.Sleep(time.Hour)
		return 0

	case "takeover":
		return takeoverHelper(data, fail)
	}
	return fail("unknown helper mode")
}

// takeoverHelper waits at a barrier, then acquires the (stale) lock once and
// checks that it is alone while holding it. It appends to the shared log
// "enter <pid> <token of the lock it took over, or ->" and "exit <pid>".
func takeoverHelper(data string, fail func(string, ...any) int) int {
	dir := filepath.Dir(data)
	inside := filepath.Join(dir, "inside")
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("ready-%d", os.Getpid())), nil, 0o644); err != nil {
		return fail("ready: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}

	l, err := Acquire(context.Background(), data, Options{})
	if err != nil {
		return fail("acquire: %v", err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, "holders.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fail("log: %v", err)
	}
	defer logf.Close()
	code := 0
	if raw, _ := os.ReadFile(inside); strings.TrimSpace(string(raw)) != "" && strings.TrimSpace(string(raw)) != "0" {
		code = fail("entered while %q was inside", raw)
	}
	if err := os.WriteFile(inside, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fail("inside: %v", err)
	}
	took := "-"
	if prev, _ := l.TakenOver(); prev != nil {
		took = prev.Token
		if took == "" {
			took = prev.Agent
		}
	}
	fmt.Fprintf(logf, "enter %d %s\n", os.Getpid(), took)
	time.Sleep(5 * time.Millisecond)
	if raw, _ := os.ReadFile(inside); string(raw) != strconv.Itoa(os.Getpid()) {
		code = fail("someone else (%q) got in while I held the lock", raw)
	}
	if err := os.WriteFile(inside, []byte("0"), 0o644); err != nil {
		return fail("inside: %v", err)
	}
	fmt.Fprintf(logf, "exit %d\n", os.Getpid())
	if err := l.Release(); err != nil {
		return fail("release: %v", err)
	}
	return code
}

// TestLeftoverTempReplaced: the lock file is prepared under one name, by
// the holder of the queue's flock; what a process killed while preparing
// it left there (half written, or a link someone made) is replaced by the
// next Acquire, never linked as the lock or followed, and none stays.
func TestLeftoverTempReplaced(t *testing.T) {
	for _, link := range []bool{false, true} {
		dir := t.TempDir()
		data := filepath.Join(dir, "issue-7.json")
		tmp := data + ".lock" + TempInfix + "held"
		victim := filepath.Join(t.TempDir(), "victim")
		if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		if link {
			if err := os.Symlink(victim, tmp); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(tmp, []byte(`{"pid":`), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Acquire(t.Context(), data, Options{})
		if err != nil {
			t.Fatalf("link %v: %v", link, err)
		}
		if l.Info().PID != os.Getpid() {
			t.Errorf("link %v: lock holds %+v", link, l.Info())
		}
		assertNoTemps(t, dir)
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "keep" {
			t.Errorf("link %v: the file the leftover pointed at now holds %q", link, b)
		}
	}
}
