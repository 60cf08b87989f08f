//go:build unix

package atomicfile

import (
	"io/fs"
	"syscall"
	"time"
)

// leaseTries bounds OpenRead's waits for a lease: about a second.
const leaseTries = 20

// ReadFile is os.ReadFile for the small files agentx reads many of in one
// command (an index file per open issue, state files, the workflows):
// open, read, close, and nothing else. os.Open also sets a file up for the
// runtime's poller (an fstat, four fcntls and an epoll_ctl that a regular
// file refuses), which on a virtual machine costs more than the read.
func ReadFile(path string) ([]byte, error) {
	fd, err := OpenRead(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = syscall.Close(fd) }()
	size := int64(16 << 10)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && st.Size > 0 && st.Size < 1<<30 {
		size = st.Size + 1 // one byte more: the end is seen at once
	}
	return ReadAll(fd, path, size)
}

// OpenRead opens path for reading as a bare file descriptor (see
// ReadFile), retrying when a signal interrupts it, and for about a second
// while a writer holds a lease on the file (a write with a shadow does
// while it patches it; an open that began before the last exchange can
// meet it: see Options.Shadow).
func OpenRead(path string) (int, error) {
	for try := 0; ; {
		// O_NONBLOCK: a FIFO planted where a file should be fails the
		// read instead of hanging the command (no effect on a file,
		// except that a lease is reported, not waited for)
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EWOULDBLOCK && try < leaseTries {
			time.Sleep(min(time.Millisecond<<try, 64*time.Millisecond))
			try++
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// ReadAll reads fd (the file at path) to its end, starting with a buffer
// of size bytes.
func ReadAll(fd int, path string, size int64) ([]byte, error) {
	buf := make([]byte, 0, max(size, 512))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
