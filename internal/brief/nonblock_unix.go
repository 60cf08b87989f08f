//go:build unix

package brief

import "syscall"

// nonBlock opens a file without waiting: a FIFO put where a file was
// fails the read instead of hanging the question.
const nonBlock = syscall.O_NONBLOCK
