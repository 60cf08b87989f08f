//go:build unix

package ledger

import (
	"os"
	"syscall"
)

// openLedger opens a ledger file for reading. O_NONBLOCK: a FIFO planted
// where the ledger should be fails the read (it is no regular file)
// instead of hanging the command; it changes nothing for a file.
func openLedger(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
