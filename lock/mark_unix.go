//go:build unix

package lock

import (
	"os"
	"syscall"
)

// MarksInherited: the child processes started under an Inheritance hold
// its marks (see Inheritance).
const MarksInherited = true

// hold takes the mark's lock on f, its file opened, and keeps f: a child
// process given f inherits the lock (flock's lock belongs to the open
// file, which the child shares), so the mark is held until the holder and
// every such child have ended, or the holder lets it go (letGo).
func (m *Mark) hold(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if err == syscall.EWOULDBLOCK {
			return errHeld
		}
		return err
	}
	m.f = f
	return nil
}

// letGo unlocks the mark (for every process that shares its file) and
// closes it.
func (m *Mark) letGo() error {
	err := syscall.Flock(int(m.f.Fd()), syscall.LOCK_UN)
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	m.f = nil
	return err
}
