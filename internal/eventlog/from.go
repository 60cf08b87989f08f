package eventlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Line is one whole line of the event log, with where it lies in the file.
type Line struct {
	Raw   []byte // the line's bytes, newline included; valid only during the call
	Start int64  // byte offset of the line's first byte
	End   int64  // byte offset just past its newline
}

// Decode returns the line's event; ok is false for a torn or malformed
// line. A reader that wants few of the lines can look at Raw first and
// decode only those.
func (l Line) Decode() (e Event, ok bool) {
	e, ok, _ = parseEventLine(l.Raw)
	return e, ok
}

// Size is the log's length in bytes; a missing log is empty.
func (l EventLog) Size() (int64, error) {
	fi, err := os.Stat(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("event log %s: %w", l.Path, err)
	}
	return fi.Size(), nil
}

// ReadFrom calls fn for each whole line from byte offset on, in file order,
// and returns the offset just past the last whole line: the place to read
// from next time. A last line still missing its newline is left for then.
// Reading from a remembered offset costs only the lines appended since. A
// missing log, or one shorter than offset, has no lines: next is offset.
// An error from fn stops the read and is returned.
func (l EventLog) ReadFrom(offset int64, fn func(Line) error) (next int64, err error) {
	if offset < 0 {
		return offset, fmt.Errorf("event log %s: negative offset %d", l.Path, offset)
	}
	f, err := os.Open(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return offset, nil
	}
	if err != nil {
		return offset, fmt.Errorf("event log %s: %w", l.Path, err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset, fmt.Errorf("event log %s: %w", l.Path, err)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	next = offset
	for {
		raw, rerr := r.ReadBytes('\n')
		if len(raw) > 0 && raw[len(raw)-1] == '\n' {
			line := Line{Raw: raw, Start: next, End: next + int64(len(raw))}
			next = line.End
			if err := fn(line); err != nil {
				return next, err
			}
		}
		if rerr == io.EOF {
			return next, nil
		}
		if rerr != nil {
			return next, fmt.Errorf("event log %s: read: %w", l.Path, rerr)
		}
	}
}
