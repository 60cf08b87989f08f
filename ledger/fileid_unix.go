//go:build unix

package ledger

import (
	"io/fs"
	"syscall"
)

// fileID is the file's inode number.
func fileID(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
