//go:build !(linux || darwin)

package ledger

import (
	"os"
	"path/filepath"
)

// stampAt is the stamp of the file name in dir (stampOf of its os.Stat).
func stampAt(dir *os.File, name string) (Stamp, error) {
	fi, err := os.Stat(filepath.Join(dir.Name(), name))
	if err != nil {
		return Stamp{}, err
	}
	return stampOf(fi), nil
}
