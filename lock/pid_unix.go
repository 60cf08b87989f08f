//go:build unix

package lock

import (
	"errors"
	"syscall"
)

// PIDAlive reports whether a process with this PID exists on this host:
// kill(pid, 0) failing with ESRCH means it is gone; success or EPERM (it
// exists but belongs to someone else) means it is alive. Any other answer,
// and a PID <= 0, counts as alive, so a lock is never taken over on a guess.
// A zombie (exited, not yet reaped by its parent) counts as alive.
func PIDAlive(pid int) bool {
	if pid <= 0 {
		return true
	}
	err := syscall.Kill(pid, 0)
	return !errors.Is(err, syscall.ESRCH)
}
