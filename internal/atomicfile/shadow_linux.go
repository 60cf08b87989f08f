package atomicfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// openShadow opens the shadow of path for a write (see Options.Shadow),
// under a write lease: the kernel grants one only while no one else has
// the file open (a reader still reading the version it holds), and makes
// anyone who opens it meanwhile wait until the lease is released, after the
// exchange, when it is path's new content, whole. It returns the file,
// and whether it holds an earlier version to patch (false: a new, empty
// file). A shadow that is not a regular file of its own (a link, a file
// with another name, path itself), or that someone has open, is replaced
// by a new one. It returns nil when no shadow can be used here: path is
// missing or no regular file, or the file system grants no leases.
func openShadow(shadow, path string, perm os.FileMode) (*os.File, bool) {
	var cur unix.Stat_t
	if shadow == "" || unix.Lstat(path, &cur) != nil || cur.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false
	}
	const flags = os.O_RDWR | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	f, err := os.OpenFile(shadow, flags, 0)
	if err == nil {
		var st unix.Stat_t
		if unix.Fstat(int(f.Fd()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink == 1 &&
			(st.Dev != cur.Dev || st.Ino != cur.Ino) && lease(f) == nil {
			return f, true
		}
		_ = f.Close()
	}
	if err == nil || !os.IsNotExist(err) {
		// Unlink, never rmdir: a directory there is left, and no shadow used.
		if unix.Unlink(shadow) != nil {
			return nil, false
		}
	}
	f, err = os.OpenFile(shadow, flags|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, false
	}
	if lease(f) != nil {
		_ = f.Close()
		_ = os.Remove(shadow)
		return nil, false
	}
	return f, false
}

// lease takes a write lease on f.
func lease(f *os.File) error {
	_, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_WRLCK)
	return err
}

// exchange swaps the names a and b atomically: b becomes what a was, and a
// what b was.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
