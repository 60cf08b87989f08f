package eventlog

import (
	"strconv"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/internal/jsonscan"
	"github.com/agentx-cli/agentx/ledger"
)

// The event log is read whole by `agentx events`, and a long-lived
// workspace's log has millions of lines. The generic JSON engine costs a few
// µs an event each way; a line as Append writes it (encoding/json's compact
// form, members in the order of Event, plain strings) is read here in one
// byte pass, and an event whose strings need no escaping is written by
// hand. Anything else goes to the generic engine, which decides.
// FuzzFastEvent and FuzzEventIndent hold both to the generic result.

// fastLine is a line in the form Append writes, read in place: its
// strings are slices of the line, so reading one allocates nothing.
type fastLine struct {
	typ, id, from, to, topic, by, reason, proposal, via, host []byte
	issues                                                    []byte // the numbers of "issues", commas included; nil: none
	issue, round                                              int
	blocking                                                  bool
	at                                                        time.Time
}

// scanFast reads line (without its newline) into v if it is in the form
// Append writes, and reports whether it could; false says nothing about
// the line, and leaves v undefined. days, when not nil, spares the
// timestamps' calendar arithmetic.
func scanFast(line []byte, days *dayCache, v *fastLine) bool {
	*v = fastLine{}
	s := jsonscan.Scanner{B: line, OK: true}
	s.Lit(`{"type":`)
	v.typ = s.Raw()
	if s.Opt(`,"clarificationId":`) {
		v.id = s.Raw()
	}
	s.Lit(`,"issueNumber":`)
	v.issue = s.Int()
	if s.Opt(`,"fromAgent":`) {
		v.from = s.Raw()
	}
	if s.Opt(`,"toAgent":`) {
		v.to = s.Raw()
	}
	s.Lit(`,"topic":`)
	v.topic = s.Raw()
	s.Lit(`,"blocking":`)
	if s.Opt("true") {
		v.blocking = true
	} else {
		s.Lit("false")
	}
	s.Lit(`,"round":`)
	v.round = s.Int()
	s.Lit(`,"timestamp":`)
	if t, ok := days.parse(s.Raw()); ok {
		v.at = t
	} else {
		s.OK = false
	}
	if s.Opt(`,"by":`) {
		v.by = s.Raw()
	}
	if s.Opt(`,"reason":`) {
		v.reason = s.Raw()
	}
	if s.Opt(`,"proposalId":`) {
		v.proposal = s.Raw()
	}
	if s.Opt(`,"issues":[`) {
		from := s.I
		for {
			s.Int()
			if !s.Opt(",") {
				break
			}
		}
		v.issues = line[from:s.I]
		s.Lit("]")
	}
	if s.Opt(`,"via":`) {
		v.via = s.Raw()
	}
	if s.Opt(`,"host":`) {
		v.host = s.Raw()
	}
	s.Lit("}")
	return s.Done() && len(v.typ) > 0
}

// event is the event v holds, its strings copied out of the line.
func (v *fastLine) event() Event {
	e := Event{Type: typeOf(v.typ), ClarificationID: string(v.id), IssueNumber: v.issue, FromAgent: string(v.from), ToAgent: string(v.to),
		Topic: string(v.topic), Blocking: v.blocking, Round: v.round, Timestamp: ledger.Time{Time: v.at},
		By: string(v.by), Reason: string(v.reason), ProposalID: string(v.proposal), Via: string(v.via), Host: string(v.host)}
	if v.issues != nil {
		s := jsonscan.New(v.issues) // read once already: plain numbers and commas
		for {
			e.Issues = append(e.Issues, s.Int())
			if !s.Opt(",") {
				break
			}
		}
	}
	return e
}

// fastEvent decodes line (without its newline) if it is in the form Append
// writes, and reports whether it could; ok false says nothing about the line.
func fastEvent(line []byte) (Event, bool) {
	var v fastLine
	if !scanFast(line, nil, &v) {
		return Event{}, false
	}
	return v.event(), true
}

// typeTable holds the event types agentx writes, by name: a line's type
// is looked up here rather than copied, as a log holds a handful of them
// a million times. slots holds most of them where typeSlot says, to be
// found with one comparison. Built at first use (typeTables), not when
// the package loads: most commands read no event log.
type typeTable struct {
	types map[string]EventType
	slots [64]EventType
}

var typeTables = sync.OnceValue(func() *typeTable {
	tt := &typeTable{types: map[string]EventType{}}
	for _, t := range []EventType{EventRequested, EventAnswered, EventFollowedUp, EventStale, EventResolved, EventEscalated,
		EventAbandoned, EventResponderFailed, EventSuperseded, EventRemoteRefused, EventClockSkew, EventRenumbered,
		EventChangeSuperseded, EventScopeRefused, EventLockTimeout, EventProposalCreated, EventProposalEvidence,
		EventProposalApproved, EventProposalRejected, EventProposalImplemented} {
		tt.types[string(t)] = t
		if i := typeSlot([]byte(t)); tt.slots[i] == "" {
			tt.slots[i] = t
		}
	}
	return tt
})

// typeSlot is where typeTable.slots holds the type named b, if anywhere.
func typeSlot(b []byte) int {
	if len(b) < 4 {
		return 0
	}
	return (len(b) + int(b[len(b)-4])*6 + int(b[len(b)-2])) & 63
}

// typeOf is the event type named b: a known one without a copy.
func typeOf(b []byte) EventType {
	tt := typeTables()
	if t := tt.slots[typeSlot(b)]; string(t) == string(b) {
		return t
	}
	if t, ok := tt.types[string(b)]; ok {
		return t
	}
	return EventType(b)
}

// dayCache remembers the last date a timestamp named: a log's lines come
// in time order, so most share their date with the line before, and a
// timestamp is then that midnight plus its time of day, without the
// calendar arithmetic of time.Date. A nil *dayCache does that arithmetic
// every time.
type dayCache struct {
	date     [10]byte // "2006-01-02" of midnight
	midnight time.Time
}

// parse is ledger.ParseWritten(v).
func (c *dayCache) parse(v []byte) (time.Time, bool) {
	if c == nil || len(v) != len("2006-01-02T15:04:05.000Z") || string(v[:10]) != string(c.date[:]) {
		t, ok := ledger.ParseWritten(v)
		if ok && c != nil {
			copy(c.date[:], v[:10])
			c.midnight = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		}
		return t, ok
	}
	// the date is one ParseWritten accepted: the rest is checked as it does
	ms, ok := timeOfDay(v[10:])
	if !ok {
		return time.Time{}, false
	}
	return c.midnight.Add(time.Duration(ms) * time.Millisecond), true
}

// timeOfDay is the milliseconds since midnight "T15:04:05.000Z" says,
// checked as ledger.ParseWritten checks them.
func timeOfDay(v []byte) (ms int, ok bool) {
	if v[0] != 'T' || v[3] != ':' || v[6] != ':' || v[9] != '.' || v[13] != 'Z' {
		return 0, false
	}
	h, mi, sec, milli := digits(v[1:3]), digits(v[4:6]), digits(v[7:9]), digits(v[10:13])
	if !within(h, 23) || !within(mi, 59) || !within(sec, 59) || milli < 0 {
		return 0, false
	}
	return ((h*60+mi)*60+sec)*1000 + milli, true
}

// within reports whether 0 <= n <= most.
func within(n, most int) bool { return n >= 0 && n <= most }

// digits is the number b writes in decimal digits, or -1.
func digits(b []byte) int {
	x := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		x = x*10 + int(c-'0')
	}
	return x
}

// plainOut is the bytes a string written by hand may hold: those
// jsonscan reads as they are, but the ones the generic engine escapes
// ('<', '>', '&').
var plainOut = func() (out [256]bool) {
	out = jsonscan.Plain
	out['<'], out['>'], out['&'] = false, false, false
	return out
}()

// plain reports whether every string of e is written as it is.
func (e *Event) plain() bool {
	for _, s := range [...]string{string(e.Type), e.ClarificationID, e.FromAgent, e.ToAgent, e.Topic, e.By, e.Reason, e.ProposalID, e.Via, e.Host} {
		for i := 0; i < len(s); i++ {
			if !plainOut[s[i]] {
				return false
			}
		}
	}
	return true
}

// appendIndent appends what MarshalIndent(prefix) writes, for an event
// whose strings are plain; ok false (and b as given) otherwise.
func (e *Event) appendIndent(b []byte, prefix string) (_ []byte, ok bool) {
	if !e.plain() {
		return b, false
	}
	first := true
	member := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '\n')
		b = append(b, prefix...)
		b = append(b, `  "`...)
		b = append(b, name...)
		b = append(b, `": `...)
	}
	str := func(name, v string, omitEmpty bool) {
		if omitEmpty && v == "" {
			return
		}
		member(name)
		b = append(b, '"')
		b = append(b, v...)
		b = append(b, '"')
	}
	b = append(b, '{')
	str("type", string(e.Type), false)
	str("clarificationId", e.ClarificationID, true)
	member("issueNumber")
	b = strconv.AppendInt(b, int64(e.IssueNumber), 10)
	str("fromAgent", e.FromAgent, true)
	str("toAgent", e.ToAgent, true)
	str("topic", e.Topic, false)
	member("blocking")
	b = strconv.AppendBool(b, e.Blocking)
	member("round")
	b = strconv.AppendInt(b, int64(e.Round), 10)
	member("timestamp")
	b = append(b, '"')
	b = e.Timestamp.AppendTo(b)
	b = append(b, '"')
	str("by", e.By, true)
	str("reason", e.Reason, true)
	str("proposalId", e.ProposalID, true)
	if len(e.Issues) > 0 {
		member("issues")
		b = append(b, '[')
		for i, n := range e.Issues {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '\n')
			b = append(b, prefix...)
			b = append(b, "    "...)
			b = strconv.AppendInt(b, int64(n), 10)
		}
		b = append(b, '\n')
		b = append(b, prefix...)
		b = append(b, "  ]"...)
	}
	str("via", e.Via, true)
	str("host", e.Host, true)
	b = append(b, '\n')
	b = append(b, prefix...)
	b = append(b, '}')
	return b, true
}
