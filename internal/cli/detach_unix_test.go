//go:build unix

package cli

import "syscall"

// detachTerminal starts a new session: the process has no controlling
// terminal from then on (/dev/tty cannot be opened).
func detachTerminal() { _, _ = syscall.Setsid() }
