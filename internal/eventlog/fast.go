package eventlog

import (
	"strconv"

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

// fastEvent decodes line (without its newline) if it is in the form Append
// writes, and reports whether it could; ok false says nothing about the line.
func fastEvent(line []byte) (e Event, ok bool) {
	s := jsonscan.New(line)
	s.Lit(`{"type":`)
	e.Type = EventType(s.Str())
	if s.Opt(`,"clarificationId":`) {
		e.ClarificationID = s.Str()
	}
	s.Lit(`,"issueNumber":`)
	e.IssueNumber = s.Int()
	if s.Opt(`,"fromAgent":`) {
		e.FromAgent = s.Str()
	}
	if s.Opt(`,"toAgent":`) {
		e.ToAgent = s.Str()
	}
	s.Lit(`,"topic":`)
	e.Topic = s.Str()
	s.Lit(`,"blocking":`)
	if s.Opt("true") {
		e.Blocking = true
	} else {
		s.Lit("false")
	}
	s.Lit(`,"round":`)
	e.Round = s.Int()
	s.Lit(`,"timestamp":`)
	if t, ok := ledger.ParseWritten(s.Raw()); ok {
		e.Timestamp = ledger.Time{Time: t}
	} else {
		s.OK = false
	}
	if s.Opt(`,"by":`) {
		e.By = s.Str()
	}
	if s.Opt(`,"reason":`) {
		e.Reason = s.Str()
	}
	if s.Opt(`,"proposalId":`) {
		e.ProposalID = s.Str()
	}
	if s.Opt(`,"issues":[`) {
		for {
			e.Issues = append(e.Issues, s.Int())
			if !s.Opt(",") {
				break
			}
		}
		s.Lit("]")
	}
	if s.Opt(`,"via":`) {
		e.Via = s.Str()
	}
	if s.Opt(`,"host":`) {
		e.Host = s.Str()
	}
	s.Lit("}")
	if !s.Done() || e.Type == "" {
		return Event{}, false
	}
	return e, true
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
