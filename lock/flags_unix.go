//go:build unix

package lock

import "syscall"

// Open flags: never follow a symlink at the final path component, never
// block opening a FIFO planted where a lock file belongs.
const (
	noFollow = syscall.O_NOFOLLOW
	nonBlock = syscall.O_NONBLOCK
)
