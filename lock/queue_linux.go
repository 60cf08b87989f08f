package lock

import (
	"os"
	"syscall"
)

// queueOf reads, from /proc/locks, the processes blocked in the kernel on
// the queue file at qpath: how many besides this one, and how many of
// those are listed ahead of it. Both are -1 when that cannot be read.
func queueOf(qpath string) (waiting, ahead int) {
	fi, err := os.Stat(qpath)
	if err != nil {
		return -1, -1
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, -1
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return -1, -1
	}
	return parseQueue(data, st.Ino, os.Getpid())
}
