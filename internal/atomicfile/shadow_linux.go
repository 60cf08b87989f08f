package atomicfile

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openShadow opens the shadow of path for a write (see Options.Shadow),
// under a write lease: the kernel grants one only while no one else has
// the file open (a reader still reading the version it holds, even one
// that only has it mapped), and makes anyone who opens it meanwhile wait
// until the lease ends, which write does once the content is final and
// fsynced, before the exchange. Who waits on it is a reader of the shadow
// itself, or one whose open of path began before the last write's
// exchange; if the writer dies mid-patch, that reader reads a partial
// file, as a reader of a temp file being written does. It returns the
// file, and whether it holds an earlier version to patch (false: a new,
// empty file). A shadow that is not a regular file of its own (a link, a
// file with another name, path itself, another user's file), or that
// someone has open, is replaced by a new one. It returns nil when no
// shadow can be used here: path is missing or no regular file, or the file
// system grants no leases.
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
			st.Uid == uint32(os.Geteuid()) && (st.Dev != cur.Dev || st.Ino != cur.Ino) && lease(f) == nil {
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

// publish makes f, the shadow at name, the file at path: it ends the
// lease, checks that name is still f, and swaps the two names atomically
// (renameat2 RENAME_EXCHANGE: path becomes f, and name what path was), or,
// where the system cannot, renames name over path.
func publish(f *os.File, name, path string) error {
	// (the kernel may have broken the lease already: an opener waited
	// out /proc/sys/fs/lease-break-time)
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
	var have, at unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &have); err != nil {
		return fmt.Errorf("fstat %s: %w", name, err)
	}
	if err := unix.Lstat(name, &at); err != nil || at.Dev != have.Dev || at.Ino != have.Ino {
		return fmt.Errorf("write %s: %s was removed or replaced during the write (nothing changed there)", path, name)
	}
	if unix.Renameat2(unix.AT_FDCWD, name, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE) == nil {
		return nil
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return nil
}
