//go:build linux

package ledger

import (
	"io/fs"
	"syscall"
)

// fileStampOf is the stamp of the file fi describes, with its change time.
func fileStampOf(fi fs.FileInfo) fileStamp {
	fs := fileStamp{Stamp: stampOf(fi)}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		fs.CTime = st.Ctim.Nano()
	}
	return fs
}
