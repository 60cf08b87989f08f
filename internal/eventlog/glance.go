package eventlog

import (
	"bytes"
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
	if v, ok := scanFast(line, days); ok {
		*g = Glance{Type: typeOf(v.typ), ClarificationID: v.id, IssueNumber: v.issue, FromAgent: v.from, ToAgent: v.to,
			Topic: v.topic, Round: v.round, Timestamp: v.at, fast: v}
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
	var days dayCache
	var g Glance
	err = l.eachLine(func(line []byte) error {
		ok, n := glanceLine(line, &days, &g)
		skipped += n
		if ok {
			return fn(&g)
		}
		return nil
	})
	return skipped, err
}
