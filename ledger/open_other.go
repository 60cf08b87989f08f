//go:build !unix

package ledger

import "os"

// openLedger opens a ledger file for reading.
func openLedger(path string) (*os.File, error) { return os.Open(path) }
