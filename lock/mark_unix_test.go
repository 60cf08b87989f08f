//go:build unix

package lock

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMarkHolderKilled: a holder process SIGKILLed while it holds its
// mark wakes its waiters (the kernel frees the lock); the mark's file is
// left, and a waiter after that does not wait.
func TestMarkHolderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	path, ready := filepath.Join(dir, "h.mark"), filepath.Join(dir, "ready")
	cmd, out := helper(t, "mark", "AGENTX_LOCK_DATA="+path, "AGENTX_LOCK_READY="+ready)
	require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 30*time.Second, 5*time.Millisecond, "helper: %s", out)
	r := awaitAsync(context.Background(), path)
	asleep(t, r, 100*time.Millisecond, "woke while the holder lives")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	woken(t, r, "not woken by the holder's death")
	_, err := os.Stat(path)
	require.NoError(t, err, "a dead holder's mark is left")
	require.NoError(t, AwaitMark(context.Background(), path))
}

// TestMarkHeldByAChild: a holder's child process started with the mark
// inherited (Inheritance: how a holder's git push holds it) keeps the
// mark held after the holder is SIGKILLed, until the child ends too.
func TestMarkHeldByAChild(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	path, ready := filepath.Join(dir, "h.mark"), filepath.Join(dir, "ready")
	cmd, out := helper(t, "mark-child", "AGENTX_LOCK_DATA="+path, "AGENTX_LOCK_READY="+ready)
	var child int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(ready)
		child, _ = strconv.Atoi(string(data))
		return err == nil && child > 0
	}, 30*time.Second, 5*time.Millisecond, "helper: %s", out)
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	r := awaitAsync(context.Background(), path)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	asleep(t, r, 300*time.Millisecond, "woke while the holder's child lives")
	require.NoError(t, syscall.Kill(child, syscall.SIGKILL))
	woken(t, r, "not woken by the child's end")
}

// TestMarkReleasedWhileAChildHoldsIt: a holder that lets its mark go
// wakes its waiters at once, though a child it started still holds the
// mark's file.
func TestMarkReleasedWhileAChildHoldsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.mark")
	m, err := NewMark(path)
	require.NoError(t, err)
	in := &Inheritance{}
	in.Add(m)
	child := exec.Command("sleep", "3600")
	child.ExtraFiles = InheritedFiles(WithInheritance(context.Background(), in))
	require.Len(t, child.ExtraFiles, 1)
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	r := awaitAsync(context.Background(), path)
	asleep(t, r, 100*time.Millisecond, "woke while the mark is held")
	require.NoError(t, m.Release())
	woken(t, r, "not woken by the release")
}

// TestInheritedFilesLeaveReleasedMarks: a mark released is no longer
// handed to the child processes started after (its file is closed: a
// child given it would not start).
func TestInheritedFilesLeaveReleasedMarks(t *testing.T) {
	dir := t.TempDir()
	in := &Inheritance{}
	ctx := WithInheritance(context.Background(), in)
	a, err := NewMark(filepath.Join(dir, "a.mark"))
	require.NoError(t, err)
	b, err := NewMark(filepath.Join(dir, "b.mark"))
	require.NoError(t, err)
	in.Add(a)
	in.Add(b)
	require.Len(t, InheritedFiles(ctx), 2)
	require.NoError(t, a.Release())
	files := InheritedFiles(ctx)
	require.Len(t, files, 1)
	child := exec.Command("true")
	child.ExtraFiles = files
	require.NoError(t, child.Run(), "a child started after the release")
	require.NoError(t, b.Release())
	require.Empty(t, InheritedFiles(ctx))
	require.Nil(t, InheritedFiles(context.Background()), "no Inheritance: nothing")
}
