package fstime

import "time"

// Settle is how long a change takes to settle: Fine where the file system
// keeps times finer than a millisecond, whose clock then moves in
// scheduler ticks (at most 10 ms on Linux, about 16 ms on Windows); Coarse
// where it keeps whole milliseconds or seconds (FAT: two), or where such a
// time is all it gave.
type Settle struct{ Fine, Coarse time.Duration }

// Default is the settle every derived file uses (tests may use others).
var Default = Settle{Fine: 100 * time.Millisecond, Coarse: 2 * time.Second}

// Settled reports whether a change the file system dated mtime had
// settled at now. The sub-millisecond digits show the file system's
// resolution: a time that has none (one in a million on a fine one) is
// given the coarse wait. A time after now never has.
func (s Settle) Settled(mtime, now time.Time) bool {
	wait := s.Coarse
	if mtime.Nanosecond()%int(time.Millisecond) != 0 {
		wait = min(wait, s.Fine)
	}
	return !mtime.After(now.Add(-wait))
}
