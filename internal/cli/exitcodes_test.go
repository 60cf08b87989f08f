package cli

import (
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/lock"
)

// TestLockErrorExits: the lock's refusals keep their place in the machine
// contract however deeply they are wrapped: a lost lock is exit 5
// lock_lost, a lock path that is a link or a FIFO exit 7 unsafe_path, a
// timeout exit 5 lock_timeout.
func TestLockErrorExits(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("ledger issue 5: %w", err) }
	tests := []struct {
		err  error
		want ExitCode
	}{
		{wrap(&lock.LostError{Path: "issue-5.json.lock"}), ExitLockLost},
		{wrap(&lock.NotRegularError{Path: "issue-5.json.lock", Mode: fs.ModeSymlink}), ExitUnsafePath},
		{wrap(&lock.NotRegularError{Path: "issue-5.json.lock", Mode: fs.ModeNamedPipe}), ExitUnsafePath},
		{wrap(&lock.TimeoutError{Path: "issue-5.json.lock"}), ExitLockTimeout},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, errorExit(tt.err), "%v", tt.err)
	}
}
