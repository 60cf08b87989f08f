//go:build !unix

package lock

import (
	"os"

	"github.com/gofrs/flock"
)

// MarksInherited: here no child process holds a mark (see Inheritance):
// a mark is free once its holder ends, though a git push it started may
// still be running.
const MarksInherited = false

// hold takes the mark's lock through flock, f closed: here a lock is not
// handed to child processes (see Inheritance).
func (m *Mark) hold(f *os.File) error {
	_ = f.Close()
	fl := flock.New(m.path, flock.SetFlag(os.O_RDONLY|noFollow))
	ok, err := fl.TryLock()
	if err == nil && !ok {
		err = errHeld
	}
	if err != nil {
		return err
	}
	m.fl = fl
	return nil
}

// letGo is never called here (m.f is never set).
func (m *Mark) letGo() error { return nil }
