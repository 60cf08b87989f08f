//go:build linux || darwin

package ledger

import (
	"os"

	"golang.org/x/sys/unix"
)

// stampAt is the stamp of the file name in dir (stampOf of its os.Stat),
// looked up from the open directory: no walk of the whole path.
func stampAt(dir *os.File, name string) (Stamp, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, 0); err != nil {
		return Stamp{}, &os.PathError{Op: "stat", Path: dir.Name() + "/" + name, Err: err}
	}
	return statStamp(&st), nil
}

// statStamp is the stamp of the file st describes (stampOf, from a
// system call's result).
func statStamp(st *unix.Stat_t) Stamp {
	return Stamp{Ino: uint64(st.Ino), Size: st.Size, MTime: st.Mtim.Nano()}
}
