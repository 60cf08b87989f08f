//go:build unix

package lock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/internal/testenv"
)

// helper starts this test binary as a helper process (see TestMain).
func helper(t *testing.T, mode string, env ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode}, env...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // if the test stopped early, do not leave it running
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, &out
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	cmd, _ := helper(t, "exit")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if PIDAlive(cmd.Process.Pid) {
		t.Fatalf("pid %d still alive", cmd.Process.Pid)
	}
	return cmd.Process.Pid
}

// TestMultiProcessCounter: 16 processes each increment a counter file 200
// times, read-modify-write, through the lock at default Options: the count is
// exactly 3200 and no process timed out.
func TestMultiProcessCounter(t *testing.T) {
	procs, each := 16, 200
	if testenv.Race {
		each = 40 // see testenv.Race
	}
	data := filepath.Join(t.TempDir(), "counter")
	start := time.Now()
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*bytes.Buffer, procs)
	for i := range procs {
		cmds[i], outs[i] = helper(t, "counter", "AGENTX_LOCK_DATA="+data, "AGENTX_LOCK_N="+strconv.Itoa(each))
	}
	var maxWait time.Duration
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v\n%s", i, err, outs[i])
		}
		if _, s, ok := strings.Cut(outs[i].String(), "maxwait="); ok {
			d, _ := time.ParseDuration(strings.TrimSpace(s))
			maxWait = max(maxWait, d)
		}
	}
	raw, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(raw)); got != strconv.Itoa(procs*each) {
		t.Errorf("counter = %s, want %d", got, procs*each)
	}
	if _, err := os.Stat(data + ".lock"); !os.IsNotExist(err) {
		t.Errorf("lock left behind: %v", err)
	}
	assertNoTemps(t, filepath.Dir(data))
	t.Logf("%d processes x %d increments in %v; longest wait for the lock %v (budget %v)",
		procs, each, time.Since(start).Round(time.Millisecond), maxWait.Round(time.Millisecond), DefaultWait)
}

// TestTakeoverRace: 12 processes released at once all find the same stale
// lock (dead pid on this host, an old lock from another host, or an old
// lock of a foreign AgentX tool). Each acquires once and checks it is alone
// while holding; exactly one of them took the stale lock over (the first
// out of the kernel queue), the others found a live holder or none, and
// the holder log never shows two holders at once.
func TestTakeoverRace(t *testing.T) {
	cases := []struct {
		name  string
		stale func(t *testing.T) string
	}{
		{"dead pid same host", func(t *testing.T) string {
			now := stamp(time.Now())
			return fmt.Sprintf(`{"pid":%d,"host":%q,"agent":"ghost","token":"stale-token","timestamp":%q,"created":%q}`,
				deadPID(t), Hostname(), now, now)
		}},
		{"old lock other host", func(t *testing.T) string {
			old := stamp(time.Now().Add(-time.Hour))
			return fmt.Sprintf(`{"pid":1,"host":"elsewhere","agent":"ghost","token":"stale-token","timestamp":%q,"created":%q}`, old, old)
		}},
		{"old foreign tool lock", func(t *testing.T) string {
			old := stamp(time.Now().Add(-time.Hour))
			return fmt.Sprintf(`{"pid":1,"agent":"stale-token","timestamp":%q}`, old)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const procs = 12
			dir := t.TempDir()
			data := filepath.Join(dir, "data.json")
			writeFile(t, data+".lock", tc.stale(t))

			cmds := make([]*exec.Cmd, procs)
			outs := make([]*bytes.Buffer, procs)
			for i := range procs {
				cmds[i], outs[i] = helper(t, "takeover", "AGENTX_LOCK_DATA="+data)
			}
			waitFor(t, 20*time.Second, func() bool {
				ready, _ := filepath.Glob(filepath.Join(dir, "ready-*"))
				return len(ready) == procs
			})
			writeFile(t, filepath.Join(dir, "go"), "")
			for i, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					t.Errorf("helper %d: %v\n%s", i, err, outs[i])
				}
			}

			raw, err := os.ReadFile(filepath.Join(dir, "holders.log"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			if len(lines) != 2*procs {
				t.Fatalf("log has %d lines, want %d:\n%s", len(lines), 2*procs, raw)
			}
			takeovers := 0
			for i := 0; i < len(lines); i += 2 {
				enter, exit := strings.Fields(lines[i]), strings.Fields(lines[i+1])
				if len(enter) != 3 || enter[0] != "enter" || len(exit) != 2 || exit[0] != "exit" || exit[1] != enter[1] {
					t.Fatalf("holders overlapped at lines %d-%d:\n%s", i+1, i+2, raw)
				}
				switch enter[2] {
				case "stale-token":
					takeovers++
				case "-":
				default:
					t.Errorf("pid %s took over a live lock (%s)", enter[1], enter[2])
				}
			}
			if takeovers != 1 {
				t.Errorf("stale lock taken over %d times, want exactly 1:\n%s", takeovers, raw)
			}
		})
	}
}

// TestSIGKILLRecovery: a process that holds the lock is SIGKILLed; the lock
// file stays, but Acquire takes it over at once (same host, dead pid).
func TestSIGKILLRecovery(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "k.json")
	ready := filepath.Join(dir, "ready")
	cmd, out := helper(t, "hold", "AGENTX_LOCK_DATA="+data, "AGENTX_LOCK_READY="+ready)
	waitFor(t, 20*time.Second, func() bool { _, err := os.Stat(ready); return err == nil })

	info, _, err := Inspect(data + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	if info.PID != cmd.Process.Pid {
		t.Fatalf("lock pid %d, helper pid %d\n%s", info.PID, cmd.Process.Pid, out)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait() // reap it: a zombie still counts as alive
	if _, err := os.Stat(data + ".lock"); err != nil {
		t.Fatalf("lock file gone after SIGKILL: %v", err)
	}

	start := time.Now()
	l, err := Acquire(t.Context(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("took %v to recover, want at once", elapsed)
	}
	prev, reason := l.TakenOver()
	if prev == nil || prev.PID != cmd.Process.Pid || !strings.Contains(reason, "no longer holds it") {
		t.Errorf("TakenOver = %+v, %q", prev, reason)
	}
}

// TestSIGSTOPHolderNotTakenOver: a holder paused with SIGSTOP far past the
// stale age keeps its lock: a waiter times out with an error that names
// the paused pid and how to resume it, and never takes the lock over; once
// resumed, the holder still holds it; once killed, the lock is free at once.
func TestSIGSTOPHolderNotTakenOver(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "p.json")
	ready := filepath.Join(dir, "ready")
	cmd, out := helper(t, "hold", "AGENTX_LOCK_DATA="+data, "AGENTX_LOCK_READY="+ready)
	waitFor(t, 20*time.Second, func() bool { _, err := os.Stat(ready); return err == nil })
	token, _ := os.ReadFile(ready)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	time.Sleep(1200 * time.Millisecond) // past the stale age below

	_, err := Acquire(t.Context(), data, Options{StaleAge: time.Second, Wait: time.Second})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Foreign || te.Holder == nil || te.Holder.PID != cmd.Process.Pid {
		t.Fatalf("err = %v, want a TimeoutError naming the paused holder\n%s", err, out)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("kill -CONT %d", cmd.Process.Pid)) {
		t.Errorf("message %q does not say how to resume the holder", err)
	}
	if runtime.GOOS == "linux" && !strings.Contains(err.Error(), "is paused") {
		t.Errorf("message %q does not say the holder is paused", err)
	}
	if info, _, err := Inspect(data + ".lock"); err != nil || info.Token != string(token) {
		t.Errorf("lock now %+v, %v; want the paused holder's", info, err)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	start := time.Now()
	l, err := Acquire(t.Context(), data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v after the holder died", d)
	}
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
