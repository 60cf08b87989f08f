package eventlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"time"
)

// Glance is what a reader of a long log that wants few fields of each
// event sees of a line: those fields, the strings as slices of the line
// (valid only during the call), so that reading a line in the form Append
// writes allocates nothing. A line in any other form is decoded whole by
// the generic engine, and its Glance says the same as its Event.
type Glance struct {
	Type            EventType // one of the known types is not a copy
	ClarificationID []byte
	IssueNumber     int
	FromAgent       []byte
	ToAgent         []byte
	Topic           []byte
	Round           int
	Timestamp       time.Time

	fast fastLine // the line read in place, when fast
	full *Event   // the event the generic engine decoded, otherwise
}

// Refusal is Event.Refusal.
func (g *Glance) Refusal() bool { return slices.Contains(refusals, g.Type) }

// Event is the line's whole event.
func (g *Glance) Event() Event {
	if g.full != nil {
		return *g.full
	}
	return g.fast.event()
}

// glanceLine is parseEventLine(line) as a Glance.
func glanceLine(line []byte, days *dayCache, g *Glance) (ok bool, skipped int) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false, 0
	}
	if v := &g.fast; scanFast(line, days, v) {
		g.Type, g.ClarificationID, g.IssueNumber, g.FromAgent, g.ToAgent = typeOf(v.typ), v.id, v.issue, v.from, v.to
		g.Topic, g.Round, g.Timestamp, g.full = v.topic, v.round, v.at, nil
		return true, 0
	}
	e, ok, skipped := slowLine(line)
	if !ok {
		return false, skipped
	}
	*g = Glance{Type: e.Type, ClarificationID: []byte(e.ClarificationID), IssueNumber: e.IssueNumber, FromAgent: []byte(e.FromAgent),
		ToAgent: []byte(e.ToAgent), Topic: []byte(e.Topic), Round: e.Round, Timestamp: e.Timestamp.Time, full: &e}
	return true, skipped
}

// EachGlance is Each of every event, as Glances: for a reader that wants
// few fields of each event of a long log, and keeps fewer. g is reused
// from line to line.
func (l EventLog) EachGlance(fn func(g *Glance) error) (skipped int, err error) {
	err = l.eachLine(glancing(&skipped, fn))
	return skipped, err
}

// glancing is a function of each line that passes its glance to fn and
// counts what it skips.
func glancing(skipped *int, fn func(g *Glance) error) func([]byte) error {
	var days dayCache
	var g Glance
	return func(line []byte) error {
		ok, n := glanceLine(line, &days, &g)
		*skipped += n
		if ok {
			return fn(&g)
		}
		return nil
	}
}

// Parts are the log cut into runs of whole lines, read from the file as
// it was opened (whatever is renamed over its path meanwhile), by any
// number of goroutines at once.
type Parts struct {
	file *os.File // nil: no log
	path string
	List []Part
}

// Part is a run of whole lines of the log, from byte Start to End (-1:
// the end of the file, whatever was appended meanwhile).
type Part struct {
	of         *Parts
	Start, End int64
}

// minPart is the least a part holds: a short log is not worth a second
// core. (A variable: tests cut short logs.)
var minPart int64 = 4 << 20

// Parts cuts the log into at most n parts of about the same size, each
// from a line's start to the next part's: a reader of a long log may read
// them at once, on as many cores, and put together what it found in the
// parts' order. The last part reads to the end of the file, as Each does.
// A missing or short log is one part. Close them when done.
func (l EventLog) Parts(n int) (*Parts, error) {
	ps := &Parts{path: l.Path}
	ps.List = []Part{{of: ps, End: -1}}
	file, err := os.Open(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return ps, nil
	}
	if err != nil {
		return nil, fmt.Errorf("event log %s: %w", l.Path, err)
	}
	ps.file = file
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("event log %s: %w", l.Path, err)
	}
	size := fi.Size()
	n = max(1, min(n, int(size/minPart)))
	for i := 1; i < n; i++ {
		at, err := lineAfter(file, size*int64(i)/int64(n))
		if err != nil {
			file.Close()
			return nil, fmt.Errorf("event log %s: %w", l.Path, err)
		}
		last := &ps.List[len(ps.List)-1]
		if at <= last.Start || at >= size {
			continue // a line longer than a part
		}
		last.End = at
		ps.List = append(ps.List, Part{of: ps, Start: at, End: -1})
	}
	return ps, nil
}

// Close closes the file the parts read.
func (ps *Parts) Close() error {
	if ps.file == nil {
		return nil
	}
	return ps.file.Close()
}

// lineAfter is the offset of the first line that starts at off or after
// it (the file's size if none does).
func lineAfter(file *os.File, off int64) (int64, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(file, off-1, math.MaxInt64-off), 4096)
	at := off - 1
	for {
		b, err := r.ReadSlice('\n')
		at += int64(len(b))
		switch {
		case err == nil:
			return at, nil
		case errors.Is(err, io.EOF):
			return at, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return 0, err
		}
	}
}

// EachGlance is EventLog.EachGlance of the lines of p.
func (p Part) EachGlance(fn func(g *Glance) error) (skipped int, err error) {
	if p.of.file == nil {
		return 0, nil
	}
	end := p.End
	if end < 0 {
		end = math.MaxInt64
	}
	in := io.NewSectionReader(p.of.file, p.Start, end-p.Start) // ReadAt: the parts share the file
	err = eachLineIn(in, p.of.path, glancing(&skipped, fn))
	return skipped, err
}
