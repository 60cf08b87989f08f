package lock

import "errors"

// ErrHanded is what Acquire returns when its caller's change was handed to
// the lock's holder and made by it (Handoff.Done said so): the lock is not
// held, and there is nothing left to write.
var ErrHanded = errors.New("change handed to the lock's holder")

// Handoff lets a writer that finds the lock held hand its change to the
// holder instead of waiting to make it itself (group commit: the holder
// makes every handed change in its one write). Acquire calls Post once,
// when it finds the queue held by another process, right before it sleeps
// in the kernel's queue; Post leaves the change where holders look for it.
// When the queue is granted after a Post, Acquire calls Done before it
// makes the lock file: Done takes the change back if no holder took it
// (false: Acquire goes on and returns the lock), or reports that a holder
// made it (true: Acquire releases the queue and returns ErrHanded). Both
// run in the acquiring goroutine; Done runs while the queue's kernel lock
// is held, so no holder takes a change while Done looks at it. When
// Acquire fails after a Post, the caller finds out from its own records
// whether the change was taken.
type Handoff struct {
	Post func()
	Done func() bool
}
