package lock

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// FuzzParseInfo: lock file content (written by agentx, by another AgentX
// tool, or by anyone) either parses into an Info or fails with an error
// wrapping ErrUnparseable; never a panic. What parses writes back (as
// agentx writes lock content) to content that parses to the same Info.
// IsStale on it always gives a reason, and once a lock is stale it stays
// stale as the clock moves on.
func FuzzParseInfo(f *testing.F) {
	for _, s := range []string{
		`{"pid":123,"host":"vm","agent":"agentx","token":"abc","created":"2026-02-26T10:00:00.000Z"}`,
		`{"pid":"123","timestamp":"2026-02-26T10:00:00+01:00"}`,
		`{"pid":1e99,"created":"9999-12-31T23:59:59Z"}`,
		`{"pid":-1,"host":"vm","created":"0000-01-01T00:00:00+14:00"}`,
		`{"created":"/Date(1772100000000)/"}`,
		`{"created":null,"timestamp":7}`,
		`null`, `[]`, ``, `{`, "{\"host\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := parseInfo(data)
		if err != nil {
			if info != nil || !errors.Is(err, ErrUnparseable) {
				t.Fatalf("parseInfo: %v, %v: want nil and an error wrapping ErrUnparseable", info, err)
			}
		} else {
			b, merr := json.Marshal(info)
			if merr != nil {
				t.Fatalf("Marshal(%+v): %v", info, merr)
			}
			again, perr := parseInfo(b)
			if perr != nil {
				t.Fatalf("content written from %+v does not parse: %v", info, perr)
			}
			b2, _ := json.Marshal(again)
			if string(b) != string(b2) {
				t.Fatalf("lock content is not stable: %s then %s", b, b2)
			}
			if c, ok := info.CreatedAt(); ok {
				if c2, from := info.createdAt(now); !c.Equal(c2) || from == "modified" {
					t.Fatalf("CreatedAt = %v but createdAt = %v (%s)", c, c2, from)
				}
			}
		}
		in := StaleInput{Info: info, ParseErr: err, ModTime: now.Add(-time.Minute), Now: now, Hostname: "here",
			PIDAlive: func(int) bool { return true }}
		stale, reason := IsStale(in)
		if reason == "" {
			t.Fatalf("IsStale(%+v) gave no reason", in)
		}
		for _, later := range []time.Duration{time.Second, time.Hour, 1 << 62} {
			in.Now = now.Add(later)
			if s, r := IsStale(in); stale && !s {
				t.Fatalf("stale at %v (%s) but not %v later (%s)", now, reason, later, r)
			}
		}
	})
}
