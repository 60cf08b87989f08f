//go:build !linux

package ledger

import "io/fs"

// fileStampOf is the stamp of the file fi describes; the change time is
// read on Linux only.
func fileStampOf(fi fs.FileInfo) fileStamp { return fileStamp{Stamp: stampOf(fi)} }
