//go:build unix

package atomicfile

import "syscall"

// noFollow makes an open fail on a symbolic link in the last component.
const noFollow = syscall.O_NOFOLLOW
