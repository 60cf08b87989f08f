//go:build unix

package router

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// The tests of killing a responder's whole process tree; they use process
// groups and kill(2), so they run on Unix.

// TestExecRunnerTimeoutKillsProcessGroup: a responder that sleeps past its
// timeout, with a grandchild holding stdout open, is a TimedOut
// *ResponderError within about two seconds, and the grandchild is dead too.
func TestExecRunnerTimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	start := time.Now()
	_, err := ExecRunner{}.Run(context.Background(), Responder{Agent: "architect", Command: []string{script(t, "slow.sh"), pidFile}, Timeout: 300 * time.Millisecond}, testInv)
	elapsed := time.Since(start)
	var re *ResponderError
	require.ErrorAs(t, err, &re)
	assert.True(t, re.TimedOut)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "a responder timeout is not the caller's deadline")
	assert.Contains(t, err.Error(), "timed out after 300ms")
	assert.Less(t, elapsed, 2*time.Second)
	assertDead(t, readPid(t, pidFile))
}

// TestExecRunnerCancel: cancelling ctx stops the responder and its whole
// process group promptly; the error wraps context.Canceled and is not a
// *ResponderError (the responder did nothing wrong).
func TestExecRunnerCancel(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := ExecRunner{}.Run(ctx, Responder{Agent: "architect", Command: []string{script(t, "slow.sh"), pidFile}, Timeout: time.Minute}, testInv)
	require.ErrorIs(t, err, context.Canceled)
	var re *ResponderError
	assert.False(t, errors.As(err, &re))
	assert.Less(t, time.Since(start), 2*time.Second)
	assertDead(t, readPid(t, pidFile))

	// already cancelled: nothing runs
	_, err = ExecRunner{}.Run(ctx, Responder{Agent: "architect", Command: []string{script(t, "echo.sh")}}, testInv)
	require.ErrorIs(t, err, context.Canceled)
}

// TestExecRunnerStragglerDoesNotHang: a responder that answers and exits 0
// but leaves a grandchild holding stdout open still returns its answer
// (after the short WaitDelay), and the grandchild is killed.
func TestExecRunnerStragglerDoesNotHang(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	start := time.Now()
	got, err := ExecRunner{}.Run(context.Background(), Responder{Agent: "architect", Command: []string{script(t, "straggler.sh"), pidFile}, Timeout: time.Minute}, testInv)
	require.NoError(t, err)
	assert.Equal(t, "answer despite a straggler", got)
	assert.Less(t, time.Since(start), waitDelay+2*time.Second)
	assertDead(t, readPid(t, pidFile))
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	require.Positive(t, pid)
	return pid
}

// assertDead waits up to two seconds for pid to be gone: kill(pid, 0) fails
// with ESRCH. A zombie (killed, waiting for an init that may not reap
// promptly in a container) also counts as dead.
func assertDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) || zombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // don't leak it past the test
			t.Fatalf("process %d is still alive (kill 0: %v)", pid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombie reports whether /proc says pid has exited but is not yet reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// TestNotifyFailures: a failing, slow, missing or cancelled notify command
// is a clear one-line error; the stderr tail is included.
func TestNotifyFailures(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	tests := []struct {
		name    string
		ctx     context.Context
		command []string
		timeout time.Duration
		want    []string
		is      error
	}{
		{name: "exit 3", ctx: context.Background(), command: []string{script(t, "fail.sh")},
			want: []string{"notify", "fail.sh", "exited with status 3", "stderr: architect is confused: no design doc"}},
		{name: "timeout", ctx: context.Background(), command: []string{script(t, "slow.sh"), pidFile}, timeout: 200 * time.Millisecond,
			want: []string{"notify", "slow.sh", "timed out after 200ms"}},
		{name: "missing", ctx: context.Background(), command: []string{"/nonexistent/agentx-notify"},
			want: []string{"notify", "/nonexistent/agentx-notify"}},
		{name: "empty command", ctx: context.Background(), want: []string{"notify: no command configured"}},
		{name: "cancelled", ctx: cancelled, command: []string{script(t, "capture.sh"), "/dev/null"},
			want: []string{"notify"}, is: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			err := Notify(tt.ctx, tt.command, "", map[string]string{"k": "v"}, tt.timeout)
			require.Error(t, err)
			assert.Less(t, time.Since(start), 3*time.Second)
			assert.NotContains(t, err.Error(), "\n")
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
		})
	}
	assertDead(t, readPid(t, pidFile))
}

// TestHangingNotifyIsBounded: a notify command that hangs holds up the
// command that triggered it (here an ask to a human) only for [notify]
// timeout, then is killed with a warning; the question stands.
func TestHangingNotifyIsBounded(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	h, _ := newTestHub(t, fmt.Sprintf("[notify]\ncommand = [%q, %q]\ntimeout = \"300ms\"\n", script(t, "slow.sh"), pidFile))
	var warned []error
	h.Warn = func(err error) { warned = append(warned, err) }
	start := time.Now()
	rec, err := h.Ask(context.Background(), askReq("engineer", "human"))
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Equal(t, ledger.Pending, rec.Status)
	require.Len(t, warned, 1)
	assert.Contains(t, warned[0].Error(), "timed out after 300ms")
}
