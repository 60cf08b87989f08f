//go:build !(linux || darwin)

package ledger

import (
	"io"
	"os"
)

// ReadStamped reads the file at path whole, with the stamp of the bytes
// read (from the open file).
func ReadStamped(path string) ([]byte, Stamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, Stamp{}, err
	}
	data, err := io.ReadAll(f)
	return data, stampOf(fi), err
}
