//go:build agentx_crashpoints

package eventlog

import (
	"os"
	"syscall"
)

// In a binary built with the agentx_crashpoints tag (tests only),
// AGENTX_CRASH_BEFORE_EVENT=TYPE kills the process (SIGKILL) right before
// it appends an event of that type: after the change is in its ledger, as a
// writer killed at that point would leave it.
func init() {
	t := os.Getenv("AGENTX_CRASH_BEFORE_EVENT")
	if t == "" {
		return
	}
	beforeAppend = func(e Event) {
		if string(e.Type) == t {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
}
