package eventlog

import (
	"context"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// notify sends on the channel it returns whenever the kernel reports a
// write to, or a new file at, path (inotify on its directory, so a log
// created or replaced is seen too), until ctx ends. nil when it cannot
// watch: the caller looks for itself.
func notify(ctx context.Context, path string) <-chan struct{} {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		unix.Close(fd)
		return nil
	}
	// a pipe ends the blocked poll when ctx ends
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(fd)
		return nil
	}
	ch := make(chan struct{}, 1)
	go func() {
		<-ctx.Done()
		unix.Write(p[1], []byte{0})
	}()
	go func() {
		defer unix.Close(fd)
		defer unix.Close(p[0])
		defer unix.Close(p[1])
		buf := make([]byte, 4096)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(p[0]), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
				return
			}
			if fds[1].Revents != 0 || ctx.Err() != nil {
				return
			}
			if fds[0].Revents == 0 {
				continue
			}
			for { // drain what the kernel queued
				if n, err := unix.Read(fd, buf); n <= 0 || err != nil {
					break
				}
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch
}
