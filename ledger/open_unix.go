//go:build unix

package ledger

import (
	"os"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// openLedger opens a ledger file for reading, as atomicfile.OpenRead does:
// a FIFO planted where the ledger should be fails the read (it is no
// regular file) instead of hanging the command, and a writer's lease is
// waited out.
func openLedger(path string) (*os.File, error) {
	fd, err := atomicfile.OpenRead(path)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}
