//go:build linux

package ledger

import (
	"io/fs"
	"syscall"
)

// ReadStamped reads the file at path whole, with the stamp of the bytes
// read (from the open file, so that a rename over path while it is read
// cannot mix two versions): open, fstat, read, close, and nothing else
// (os.Open would also set the file up for the runtime's poller, which a
// command reading thousands of ledgers pays for thousands of times).
func ReadStamped(path string) ([]byte, Stamp, error) {
	var fd int
	var err error
	for {
		if fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, Stamp{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer func() { _ = syscall.Close(fd) }()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, Stamp{}, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return nil, Stamp{}, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	}
	// one read more than the size, to see the end (or that it grew)
	buf := make([]byte, 0, st.Size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, Stamp{}, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, Stamp{Ino: uint64(st.Ino), Size: st.Size, MTime: st.Mtim.Nano()}, nil
		}
		buf = buf[:len(buf)+n]
	}
}
