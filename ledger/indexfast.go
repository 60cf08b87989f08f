package ledger

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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
// a second pass to cut the entries out) cost about 5.6 µs an entry; this
// costs well under 1 µs. FuzzFastIndex holds it to decoding exactly what
// the generic decoder would, or nothing.
func fastIndex(data []byte, ii *issueIndex) bool {
	s := scanner{b: data, ok: true}
	s.lit(`{"version":`)
	version := s.uint()
	s.lit(`,"issue":`)
	issue := s.uint()
	s.lit(`,"ledger":{`)
	var st stamp
	if s.peek(`"ino":`) {
		s.lit(`"ino":`)
		st.Ino = uint64(s.uint())
		s.lit(`,`)
	}
	s.lit(`"size":`)
	st.Size = s.uint()
	s.lit(`,"mtime":`)
	st.MTime = s.uint()
	s.lit(`},"entries":[`)
	es := []IndexEntry{}
	var last IndexEntry
	for s.ok && !s.peek(`]`) {
		if len(es) > 0 {
			s.lit(`,`)
		}
		start := s.i
		var e IndexEntry
		s.entry(&e, &last)
		e.raw = jsontext.Value(data[start:s.i])
		es = append(es, e)
	}
	s.lit(`]}`)
	if s.peek("\n") {
		s.lit("\n")
	}
	if !s.ok || s.i != len(data) || version > int64(maxInt) || issue > int64(maxInt) {
		return false
	}
	ii.Version, ii.Issue, ii.Ledger, ii.Entries = int(version), int(issue), st, es
	return true
}

const maxInt = int(^uint(0) >> 1)

// entry reads one entry object. Sender, recipient and status are most
// often those of the entry before (last), and share its strings.
func (s *scanner) entry(e, last *IndexEntry) {
	s.lit(`{"id":`)
	e.ID = s.str()
	s.lit(`,"from":`)
	e.From = s.same(&last.From)
	s.lit(`,"to":`)
	e.To = s.same(&last.To)
	s.lit(`,"blocking":`)
	switch {
	case s.peek("true"):
		s.lit("true")
		e.Blocking = true
	default:
		s.lit("false")
	}
	s.lit(`,"status":`)
	e.Status = Status(s.same((*string)(&last.Status)))
	s.lit(`,"round":`)
	if r := s.uint(); r <= int64(maxInt) {
		e.Round = int(r)
	} else {
		s.ok = false
	}
	s.lit(`,"asked":`)
	e.Asked = s.time()
	s.lit(`,"staleAfter":`)
	e.StaleAfter = s.time()
	if s.peek(`,"monitor":`) {
		s.lit(`,"monitor":`)
		s.value(&e.Monitor)
	}
	if s.peek(`,"q":`) {
		s.lit(`,"q":`)
		e.Q = s.base64()
	}
	if s.peek(`,"pq":`) {
		s.lit(`,"pq":`)
		e.PrevQ = s.base64()
	}
	s.lit(`}`)
}

// scanner reads a document in one expected form; ok turns false, for
// good, at the first byte that is not in that form.
type scanner struct {
	b  []byte
	i  int
	ok bool
}

func (s *scanner) peek(l string) bool {
	return s.ok && bytes.HasPrefix(s.b[s.i:], []byte(l))
}

func (s *scanner) lit(l string) {
	if s.peek(l) {
		s.i += len(l)
		return
	}
	s.ok = false
}

// uint reads a JSON number in plain digits (no sign, fraction or
// exponent, no leading zero) that fits an int64.
func (s *scanner) uint() int64 {
	if !s.ok {
		return 0
	}
	j := s.i
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		j++
	}
	digits := s.b[s.i:j]
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		s.ok = false
		return 0
	}
	n, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil {
		s.ok = false
		return 0
	}
	s.i = j
	return n
}

// raw reads a string of printable ASCII without escapes, quotes included,
// and returns what is between them.
func (s *scanner) raw() []byte {
	if !s.peek(`"`) {
		s.ok = false
		return nil
	}
	j := s.i + 1
	for j < len(s.b) && plainByte[s.b[j]] {
		j++
	}
	if j == len(s.b) || s.b[j] != '"' {
		s.ok = false
		return nil
	}
	v := s.b[s.i+1 : j]
	s.i = j + 1
	return v
}

// plainByte is the bytes raw reads: printable ASCII but '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (s *scanner) str() string { return string(s.raw()) }

// same reads a string that is often the one read last time at the same
// place (last): then that one is returned, without a copy.
func (s *scanner) same(last *string) string {
	v := s.raw()
	if string(v) != *last {
		*last = string(v)
	}
	return *last
}

// time reads a timestamp, or null, as Time.UnmarshalJSONFrom does.
func (s *scanner) time() Time {
	if s.peek("null") {
		s.lit("null")
		return Time{}
	}
	v := s.raw()
	if !s.ok {
		return Time{}
	}
	if t, ok := parseWritten(v); ok {
		return Time{t}
	}
	t, err := ParseTime(string(v))
	if err != nil {
		s.ok = false
		return Time{}
	}
	return Time{t}
}

// parseWritten parses a time in the one form agentx writes
// (2006-01-02T15:04:05.000Z) without the general parser, and reports
// whether it could; ParseTime gives the same instant for such a time.
func parseWritten(v []byte) (time.Time, bool) {
	if len(v) != len("2006-01-02T15:04:05.000Z") || v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' || v[19] != '.' || v[23] != 'Z' {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		x := 0
		for _, c := range v[i : i+n] {
			if c < '0' || c > '9' {
				return -1
			}
			x = x*10 + int(c-'0')
		}
		return x
	}
	y, mo, d, h, mi, sec, ms := num(0, 4), num(5, 2), num(8, 2), num(11, 2), num(14, 2), num(17, 2), num(20, 3)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ms*int(time.Millisecond), time.UTC)
	if t.Day() != d { // 31 April, 29 February of a common year: ParseTime refuses them
		return time.Time{}, false
	}
	return t, true
}

// base64 reads a non-empty base64 string (standard, padded), as the
// generic decoder reads a []byte.
func (s *scanner) base64() []byte {
	v := s.raw()
	if !s.ok || len(v) == 0 {
		s.ok = false
		return nil
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(v)))
	n, err := base64.StdEncoding.Decode(out, v)
	if err != nil || base64.StdEncoding.EncodedLen(n) != len(v) {
		s.ok = false
		return nil
	}
	return out[:n]
}

// value reads one JSON value with the generic decoder into v: for what is
// rare (an entry's monitor state).
func (s *scanner) value(v any) {
	if !s.ok {
		return
	}
	dec := jsontext.NewDecoder(bytes.NewReader(s.b[s.i:]))
	raw, err := dec.ReadValue()
	if err != nil || jsonv2.Unmarshal(raw, v) != nil {
		s.ok = false
		return
	}
	s.i += int(dec.InputOffset())
}
