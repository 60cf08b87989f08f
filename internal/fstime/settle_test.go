package fstime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestSettled: a change is trusted to be told from the next one after the
// file system's step has surely passed: a tenth of a second where it keeps
// times finer than a millisecond, two seconds where it keeps whole
// milliseconds or seconds; never when dated after now.
func TestSettled(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 10, 0, time.UTC)
	fine := func(ago time.Duration) time.Time { return now.Add(-ago).Add(-1234 * time.Nanosecond) }
	coarse := func(ago time.Duration) time.Time { return now.Add(-ago).Truncate(time.Millisecond) }
	for _, c := range []struct {
		name  string
		mtime time.Time
		want  bool
	}{
		{"fine, just now", fine(0), false},
		{"fine, 50 ms ago", fine(50 * time.Millisecond), false},
		{"fine, 100 ms ago", fine(100 * time.Millisecond), true},
		{"fine, an hour ago", fine(time.Hour), true},
		{"whole milliseconds, 150 ms ago", coarse(150 * time.Millisecond), false},
		{"whole milliseconds, 1.9 s ago", coarse(1900 * time.Millisecond), false},
		{"whole milliseconds, 2 s ago", coarse(2 * time.Second), true},
		{"whole seconds, 1 s ago", now.Add(-time.Second), false},
		{"whole seconds, 3 s ago", now.Add(-3 * time.Second), true},
		{"fine, in the future", fine(-time.Second), false},
		{"whole seconds, in the future", now.Add(time.Minute), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Default.Settled(c.mtime, now))
		})
	}
}
