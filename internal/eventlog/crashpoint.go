//go:build agentx_crashpoints

package eventlog

import (
	"os"
	"syscall"
	"time"
)

// In a binary built with the agentx_crashpoints tag (tests only),
// AGENTX_CRASH_BEFORE_EVENT=TYPE kills the process (SIGKILL) right before
// it appends an event of that type: after the change is in its ledger, as a
// writer killed at that point would leave it. AGENTX_PAUSE_BEFORE_EVENT=TYPE
// makes it wait a second and a half there instead, as a writer the machine
// is slow to schedule would.
func init() {
	crash, pause := os.Getenv("AGENTX_CRASH_BEFORE_EVENT"), os.Getenv("AGENTX_PAUSE_BEFORE_EVENT")
	if crash == "" && pause == "" {
		return
	}
	beforeAppend = func(e Event) {
		switch string(e.Type) {
		case crash:
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		case pause:
			time.Sleep(1500 * time.Millisecond)
		}
	}
}
