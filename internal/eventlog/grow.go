package eventlog

import (
	"context"
	"time"
)

// growPoll is how often, at most, WaitGrowth looks at the log's size
// between the file system's notices (and where it has none, at all).
const growPoll = time.Second

// WaitGrowth returns once the log's size is no longer from, or d has
// passed, or ctx ends (its error). On Linux the kernel tells it of each
// write to the log's directory (inotify), so an append by any process is
// seen at once; elsewhere, and as a fallback, it looks from every 50 ms up
// to every second.
func (l EventLog) WaitGrowth(ctx context.Context, from int64, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	changed := notify(ctx, l.Path)
	poll := 50 * time.Millisecond
	if changed != nil {
		poll = growPoll
	}
	for {
		if size, err := l.Size(); err != nil || size != from {
			return err
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			if context.Cause(ctx) == context.DeadlineExceeded && ctx.Err() != nil {
				return nil // d passed
			}
			return ctx.Err()
		case <-changed:
			t.Stop()
		case <-t.C:
			poll = min(poll*2, growPoll)
		}
	}
}
