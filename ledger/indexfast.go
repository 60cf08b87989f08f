package ledger

import (
	"bytes"
	"encoding/base64"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentx-cli/agentx/internal/jsonscan"
)

// fastIndex decodes an index file written as writeIndexFile writes it
// (compact, members in the order of the Go types, names and strings
// without escapes or non-ASCII bytes) into ii, keeping each entry's bytes,
// and reports whether it could. A file in any other form, valid or not,
// gives false, and the caller decodes it with the generic decoder.
//
// Every write to a ledger with open questions reads its issue's index
// file, and every monitor run reads them all; an issue may have hundreds
// of open questions. The generic decoder (field lookup by reflection, then
// a second pass to cut the entries out) costs about three times as much.
// FuzzFastIndex holds it to decoding exactly what the generic decoder
// would, or nothing.
func fastIndex(data []byte, ii *issueIndex) bool {
	s := jsonscan.New(data)
	s.Lit(`{"version":`)
	version := s.Int()
	s.Lit(`,"issue":`)
	issue := s.Int()
	s.Lit(`,"ledger":{`)
	var st stamp
	if s.Opt(`"ino":`) {
		st.Ino = uint64(s.Uint())
		s.Lit(`,`)
	}
	s.Lit(`"size":`)
	st.Size = s.Uint()
	s.Lit(`,"mtime":`)
	st.MTime = s.Uint()
	s.Lit(`},"entries":[`)
	// with room for the entries an ask adds (Store.entriesOf)
	es := make([]IndexEntry, 0, bytes.Count(data, []byte(`{"id":`))+4)
	var last IndexEntry
	var sigs []byte // the sketches' bytes, a block at a time
	for s.OK && !s.Peek(`]`) {
		if len(es) > 0 {
			s.Lit(`,`)
		}
		start := s.I
		// read in its place: an entry of its own would be one more
		// allocation each (readEntry's generic fallback keeps a pointer)
		es = append(es, IndexEntry{})
		e := &es[len(es)-1]
		readEntry(s, e, &last, &sigs)
		e.raw = jsontext.Value(data[start:s.I])
	}
	s.Lit(`]}`)
	s.Opt("\n")
	if !s.Done() {
		return false
	}
	ii.Version, ii.Issue, ii.Ledger, ii.Entries = version, issue, st, es
	return true
}

// readEntry reads one entry object. Sender, recipient and status are most
// often those of the entry before (last), and share its strings; the
// sketches are decoded into sigs (readBase64).
func readEntry(s *jsonscan.Scanner, e, last *IndexEntry, sigs *[]byte) {
	s.Lit(`{"id":`)
	e.ID = s.Str()
	s.Lit(`,"from":`)
	e.From = s.Same(&last.From)
	s.Lit(`,"to":`)
	e.To = s.Same(&last.To)
	s.Lit(`,"blocking":`)
	if e.Blocking = s.Opt("true"); !e.Blocking {
		s.Lit("false")
	}
	s.Lit(`,"status":`)
	e.Status = Status(s.Same((*string)(&last.Status)))
	s.Lit(`,"round":`)
	e.Round = s.Int()
	s.Lit(`,"asked":`)
	e.Asked = readTime(s)
	s.Lit(`,"staleAfter":`)
	e.StaleAfter = readTime(s)
	if s.Opt(`,"monitor":`) {
		sub := jsonscan.Scanner{B: s.B, I: s.I, OK: true}
		if m := readMonitor(&sub); sub.OK {
			e.Monitor, s.I = m, sub.I
		} else {
			readValue(s, &e.Monitor) // another form: the generic decoder decides
		}
	}
	if s.Opt(`,"q":`) {
		e.Q = readBase64(s, sigs)
	}
	if s.Opt(`,"pq":`) {
		e.PrevQ = readBase64(s, sigs)
	}
	if s.Opt(`,"reused":`) {
		if e.Reused = s.Opt("true"); !e.Reused {
			s.Lit("false")
		}
	}
	s.Lit(`}`)
}

// readMonitor reads an entry's monitor state as agentx writes it: members
// in the order of MonitorState, the empty ones left out. The stale
// questions of a busy issue all carry one.
func readMonitor(s *jsonscan.Scanner) *MonitorState {
	m := &MonitorState{}
	s.Lit("{")
	first := true
	// member consumes the member named in l (written with its leading
	// comma, which the first member has not) if it comes next
	member := func(l string) bool {
		if first && s.Opt(l[1:]) || !first && s.Opt(l) {
			first = false
			return true
		}
		return false
	}
	at := func() *Time {
		if s.Peek("null") { // left out when empty: a null is another form
			s.OK = false
			return nil
		}
		t := readTime(s)
		return &t
	}
	if member(`,"staleAt":`) {
		m.StaleAt = at()
	}
	if member(`,"retries":`) {
		m.Retries = s.Int()
	}
	if member(`,"retriedAt":`) {
		m.RetriedAt = at()
	}
	if member(`,"reason":`) {
		m.Reason = s.Str()
	}
	if member(`,"failures":`) {
		m.Failures = s.Int()
	}
	if member(`,"failedRound":`) {
		m.FailedRound = s.Int()
	}
	if member(`,"failedAt":`) {
		m.FailedAt = at()
	}
	if member(`,"failure":`) {
		m.Failure = s.Str()
	}
	if member(`,"retryAt":`) {
		m.RetryAt = at()
	}
	if member(`,"retryUntil":`) {
		m.RetryUntil = at()
	}
	s.Lit("}")
	return m
}

// readTime reads a timestamp, or null, as Time.UnmarshalJSONFrom does.
func readTime(s *jsonscan.Scanner) Time {
	if s.Opt("null") {
		return Time{}
	}
	v := rawChecked(s)
	if !s.OK {
		return Time{}
	}
	if t, ok := ParseWritten(v); ok { // every byte a digit or its separator
		return Time{t}
	}
	if !plain(v) {
		s.OK = false
		return Time{}
	}
	t, err := ParseTime(string(v))
	if err != nil {
		s.OK = false
		return Time{}
	}
	return Time{t}
}

// readBase64 reads a non-empty base64 string (standard, padded), as the
// generic decoder reads a []byte. The bytes are decoded into the block
// *block, a new one taken when it is full: the sketches of 2,000 entries
// are a few allocations, not 3,000. Each is cut to its length, so that an
// append to one copies it rather than run into the next.
func readBase64(s *jsonscan.Scanner, block *[]byte) []byte {
	v := rawChecked(s) // the decoder refuses any byte but base64's, and the length says a line break was skipped
	if !s.OK || len(v) == 0 {
		s.OK = false
		return nil
	}
	need := base64.StdEncoding.DecodedLen(len(v))
	if cap(*block)-len(*block) < need {
		*block = make([]byte, 0, max(need, sigBlock))
	}
	b := *block
	out := b[len(b) : len(b)+need]
	n, err := base64.StdEncoding.Decode(out, v)
	if err != nil || base64.StdEncoding.EncodedLen(n) != len(v) {
		s.OK = false
		return nil
	}
	*block = b[:len(b)+n]
	return out[:n:n]
}

// sigBlock is the size of the blocks readBase64 decodes into.
const sigBlock = 16 << 10

// rawChecked is s.Raw for a string whose bytes the caller checks itself
// (a time, base64): the closing quote is looked for at once rather than
// byte by byte, the string's bytes are not checked. An escaped quote ends
// it early: the backslash before it fails the caller's check.
func rawChecked(s *jsonscan.Scanner) []byte {
	if !s.Opt(`"`) {
		s.OK = false
		return nil
	}
	j := bytes.IndexByte(s.B[s.I:], '"')
	if j < 0 {
		s.OK = false
		return nil
	}
	v := s.B[s.I : s.I+j]
	s.I += j + 1
	return v
}

// plain reports whether every byte of v is one s.Raw reads in a string.
func plain(v []byte) bool {
	for _, c := range v {
		if !jsonscan.Plain[c] {
			return false
		}
	}
	return true
}

// readValue reads one JSON value with the generic decoder into v: for a
// monitor state in another form than agentx writes.
func readValue(s *jsonscan.Scanner, v any) {
	if !s.OK {
		return
	}
	dec := jsontext.NewDecoder(bytes.NewReader(s.B[s.I:]))
	raw, err := dec.ReadValue()
	if err != nil || jsonv2.Unmarshal(raw, v) != nil {
		s.OK = false
		return
	}
	s.I += int(dec.InputOffset())
}
