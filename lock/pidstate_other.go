//go:build !linux

package lock

// pidStopped: this system does not say whether a process is stopped.
func pidStopped(pid int) (stopped, known bool) { return false, false }
