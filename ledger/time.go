package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
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

// ParseTime parses any timestamp form that AgentX writers use.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "/Date(") && strings.HasSuffix(s, ")/") {
		inner := s[len("/Date(") : len(s)-len(")/")]
		// an optional +hhmm offset follows the milliseconds; the instant is the ms.
		if i := strings.IndexAny(inner[1:], "+-"); i >= 0 {
			inner = inner[:i+1]
		}
		ms, err := strconv.ParseInt(inner, 10, 64)
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

// String formats t the way agentx writes it.
func (t Time) String() string { return t.UTC().Format(TimeFormat) }

// MarshalJSON writes RFC 3339 UTC with milliseconds.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.String() + `"`), nil
}

// UnmarshalJSON accepts any AgentX timestamp form.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*t = Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp %s: want a string", b)
	}
	v, err := ParseTime(s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}
