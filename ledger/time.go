package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// TimeFormat is how agentx writes every timestamp: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Time is a timestamp that reads every form the AgentX writers produce
// (RFC 3339 with or without fractions or offset, a date-time with no zone,
// taken as UTC, and the PowerShell "\/Date(ms)\/" form) and always writes
// RFC 3339 UTC with milliseconds.
type Time struct{ time.Time }

// T wraps t as a ledger Time in UTC.
func T(t time.Time) Time { return Time{t.UTC()} }

var layouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

// dotNetDate is the PowerShell/.NET JSON date: milliseconds since the
// epoch, optionally followed by a ±hhmm offset that does not change the
// instant.
// Compiled when first needed: most commands never meet one.
var dotNetDate = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/Date\((-?[0-9]+)(?:[+-][0-9]{4})?\)/$`)
})

// ParseTime parses any timestamp form that AgentX writers use.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "/Date(") {
		m := dotNetDate().FindStringSubmatch(s)
		if m == nil {
			return time.Time{}, fmt.Errorf("timestamp %q: want /Date(milliseconds)/ with an optional +hhmm offset", s)
		}
		ms, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("timestamp %q: %w", s, err)
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q is not RFC 3339 (example: 2026-02-26T10:00:00Z)", s)
}

// The instants TimeFormat can write: RFC 3339 has four-digit years.
var (
	minTime = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)
)

// writable is t in UTC, or the nearest instant TimeFormat can write.
func writable(t time.Time) time.Time {
	u := t.UTC()
	switch {
	case u.Before(minTime):
		return minTime
	case u.After(maxTime):
		return maxTime
	}
	return u
}

// String formats t the way agentx writes it. A time outside the years
// 0000-9999 (a clock set near the end of 9999 plus an SLA, a /Date()/ of
// another tool far in the future) is written as the nearest instant inside
// them, so that every time agentx writes it can read back.
func (t Time) String() string {
	var b [24]byte
	return string(t.AppendTo(b[:0]))
}

// AppendTo appends t as String writes it (2006-01-02T15:04:05.000Z, UTC),
// formatted by hand: the event log and index files write one or two for
// every line.
func (t Time) AppendTo(b []byte) []byte {
	u := writable(t.Time)
	y, mo, d := u.Date()
	h, mi, s := u.Clock()
	digits := func(b []byte, n, width int) []byte {
		var d [4]byte
		for i := width - 1; i >= 0; i-- {
			d[i] = byte('0' + n%10)
			n /= 10
		}
		return append(b, d[:width]...)
	}
	b = digits(b, y, 4)
	b = append(b, '-')
	b = digits(b, int(mo), 2)
	b = append(b, '-')
	b = digits(b, d, 2)
	b = append(b, 'T')
	b = digits(b, h, 2)
	b = append(b, ':')
	b = digits(b, mi, 2)
	b = append(b, ':')
	b = digits(b, s, 2)
	b = append(b, '.')
	b = digits(b, u.Nanosecond()/1e6, 3)
	return append(b, 'Z')
}

// MarshalJSON writes RFC 3339 UTC with milliseconds (see String).
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.String() + `"`), nil
}

// MarshalJSONTo is MarshalJSON for the JSON v2 engine (the ledger codec,
// the event log), without the round trip through a byte slice.
func (t Time) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteToken(jsontext.String(t.String()))
}

// UnmarshalJSONFrom is UnmarshalJSON for the JSON v2 engine.
func (t *Time) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		*t = Time{}
		return nil
	case '"':
		v, err := ParseTime(tok.String())
		if err != nil {
			return err
		}
		t.Time = v
		return nil
	}
	return fmt.Errorf("timestamp %s: want a string", tok)
}

// UnmarshalJSON accepts any AgentX timestamp form.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*t = Time{}
		return nil
	}
	var s string
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' && bytes.IndexByte(b[1:n-1], '\\') < 0 && bytes.IndexByte(b[1:n-1], '"') < 0 {
		s = string(b[1 : n-1]) // the usual case: a string with no escapes
	} else if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp %s: want a string", b)
	}
	v, err := ParseTime(s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// ParseWritten parses a time in the one form agentx writes
// (2006-01-02T15:04:05.000Z) without the general parser, and reports
// whether it could; ParseTime gives the same instant for such a time. The
// readers of long files (index files, the event log) use it first.
func ParseWritten(v []byte) (time.Time, bool) {
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
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > monthDays(y, mo) || // 31 April, 29 February of a common year: ParseTime refuses them
		h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	// the day counted here rather than by time.Date, which took a sixth of
	// the read of an index file (two times an entry)
	unix := civilDays(y, mo, d)*86400 + int64(h*3600+mi*60+sec)
	return time.Unix(unix, int64(ms)*int64(time.Millisecond)).UTC(), true
}

// monthDays is the number of days of month mo of year y (proleptic
// Gregorian, as package time counts).
func monthDays(y, mo int) int {
	switch mo {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// civilDays is the number of days from 1970-01-01 to year y, month mo,
// day d (y from 0 to 9999), by the era arithmetic of the proleptic
// Gregorian calendar: 400 years are 146,097 days, the year counted from
// March so that the leap day is its last.
func civilDays(y, mo, d int) int64 {
	if mo <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400                     // [0, 399]
	doy := (153*((mo+9)%12)+2)/5 + d - 1   // [0, 365]
	doe := yoe*365 + yoe/4 - yoe/100 + doy // [0, 146096]
	return int64(era)*146097 + int64(doe) - 719468
}
