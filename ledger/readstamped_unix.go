//go:build linux || darwin

package ledger

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// ReadStamped reads the file at path whole, with the stamp of the bytes
// read (from the open file, so that a rename over path while it is read
// cannot mix two versions): open, fstat, read, close, and nothing else
// (see atomicfile.ReadFile: a command reading thousands of ledgers would
// pay the poller's set-up thousands of times).
func ReadStamped(path string) ([]byte, Stamp, error) {
	fd, err := atomicfile.OpenRead(path)
	if err != nil {
		return nil, Stamp{}, err
	}
	defer func() { _ = syscall.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, Stamp{}, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	data, err := atomicfile.ReadAll(fd, path, st.Size+1) // one byte more: the end is seen at once
	if err != nil {
		return nil, Stamp{}, err
	}
	return data, statStamp(&st), nil
}
