package ledger

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/textsim"
	"github.com/agentx-cli/agentx/lock"
)

// indexFileOf is the index file agentx writes for es.
func indexFileOf(t testing.TB, st stamp, es []IndexEntry) []byte {
	t.Helper()
	s := NewStore(t.TempDir(), lock.Options{}, nil)
	require.NoError(t, s.writeIndexFile(7, st, es, false))
	data, err := os.ReadFile(s.IssueIndexPath(7))
	require.NoError(t, err)
	return data
}

// indexEntries are entries of every shape agentx writes: with and
// without sketches, a monitor state, a zero time.
func indexEntries() []IndexEntry {
	at := T(time.Date(2026, 11, 23, 10, 0, 0, 123e6, time.UTC))
	later := T(at.Add(time.Hour))
	return []IndexEntry{
		{Issue: 7, ID: "CLR-7-001", From: "engineer", To: "architect", Blocking: true, Status: Pending, Round: 1, Asked: at, StaleAfter: later,
			Q: textsim.Of("Which retry budget applies to the upload call?")},
		{Issue: 7, ID: "CLR-7-002", From: "architect", To: Human, Status: Escalated, Round: 3, Asked: at, StaleAfter: later,
			Monitor: &MonitorState{StaleAt: &later, Retries: 2, Reason: `no answer "yet"`},
			Q:       textsim.Of("And the download call?"), PrevQ: textsim.Of("Is there a budget at all?")},
		{Issue: 7, ID: "CLR-7-003", From: "engineer", To: "architect", Status: Stale, Round: 1},
		{Issue: 7, ID: "CLR-7-004", From: "engineer", To: "architect", Status: Stale, Round: 2, Asked: at, StaleAfter: later,
			Monitor: &MonitorState{StaleAt: &at, Retries: 1, RetriedAt: &later, Reason: "stale: no answer within its SLA of 30m0s",
				Failures: 2, FailedRound: 2, FailedAt: &at, Failure: "responder exited 1", RetryAt: &later, RetryUntil: &later}},
		{Issue: 7, ID: "CLR-7-005", From: "engineer", To: "architect", Status: Stale, Round: 1, Monitor: &MonitorState{}},
		{Issue: 7, ID: "CLR-7-006", From: "engineer", To: "architect", Status: Stale, Round: 1, Monitor: &MonitorState{Failures: 1, Failure: "exit 2"}},
		{Issue: 7, ID: "CLR-7-007", From: "engineer", To: "architect", Status: Pending, Round: 1, Asked: at, StaleAfter: later,
			Q: textsim.Of("Which database?"), Reused: true},
	}
}

// TestFastIndex: an index file as agentx writes it takes the fast path and
// decodes exactly as the generic decoder does; a file in any other form
// does not take it, and is still read.
func TestFastIndex(t *testing.T) {
	st := stamp{Ino: 42, Size: 6_400_000, MTime: 1795453644561214668}
	data := indexFileOf(t, st, indexEntries())
	var fast, slow issueIndex
	require.True(t, fastIndex(data, &fast), "%s", data)
	require.NoError(t, decodeRawIndex(data, &slow))
	assert.Equal(t, slow, fast)
	require.Len(t, fast.Entries, 7)
	assert.True(t, fast.Entries[6].Reused)
	assert.Equal(t, indexEntries()[3].Monitor, fast.Entries[3].Monitor)
	assert.Equal(t, st, fast.Ledger)
	assert.Equal(t, 2, fast.Entries[1].Monitor.Retries)

	// a monitor state in another form is read by the generic decoder, the
	// rest of the file still in one pass
	e4 := strings.Index(string(data), `"id":"CLR-7-004"`)
	i := e4 + strings.Index(string(data[e4:]), `{"staleAt":`)
	require.Greater(t, i, e4)
	j := i + strings.Index(string(data[i:]), `,"retries":1`)
	moved := string(data[:i+1]) + `"retries":1,` + string(data[i+1:j]) + string(data[j+len(`,"retries":1`):])
	var fastMoved, slowMoved issueIndex
	require.True(t, fastIndex([]byte(moved), &fastMoved), "%s", moved)
	require.NoError(t, decodeRawIndex([]byte(moved), &slowMoved))
	assert.Equal(t, slowMoved, fastMoved)
	assert.Equal(t, 1, fastMoved.Entries[3].Monitor.Retries)

	noIno := indexFileOf(t, stamp{Size: 10, MTime: 1}, indexEntries()[:1])
	require.True(t, fastIndex(noIno, &fast), "%s", noIno)

	for _, tt := range []struct{ name, old, new string }{
		{"spaces", `"from":"engineer"`, `"from": "engineer"`},
		{"members in another order", `"id":"CLR-7-001","from":"engineer"`, `"from":"engineer","id":"CLR-7-001"`},
		{"an escaped name", `"from":"engineer"`, `"fr\u006fm":"engineer"`},
		{"an escaped value", `"from":"engineer"`, `"from":"engin\u0065er"`},
		{"non-ASCII", `"from":"engineer"`, `"from":"ingénieur"`},
		{"an unknown member", `"round":1,`, `"round":1,"extra":true,`},
		{"a leading zero", `"round":1,`, `"round":01,`},
		{"a fraction", `"round":1,`, `"round":1.0,`},
		{"a bad time", `2026-11-23T10:00:00.123Z`, `yesterday`},
		{"bad base64", `"q":"`, `"q":"!`},
		{"a trailing comma", `]}`, `,]}`},
		{"data after", "]}\n", "]}\n{}"},
		{"cut short", "]}\n", "]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Contains(t, string(data), tt.old)
			changed := []byte(strings.Replace(string(data), tt.old, tt.new, 1))
			var ii issueIndex
			assert.False(t, fastIndex(changed, &ii))
			var want issueIndex
			if decodeRawIndex(changed, &want) == nil {
				// what the fast path leaves is read as before
				s := NewStore(t.TempDir(), lock.Options{}, nil)
				require.NoError(t, os.MkdirAll(s.dir+"/"+IndexDir, 0o755))
				require.NoError(t, os.WriteFile(s.IssueIndexPath(7), changed, 0o644))
				got, err := s.readIndexFile(7, true)
				require.NoError(t, err)
				assert.Equal(t, want.Entries[0].From, got.Entries[0].From)
			}
		})
	}
}

// FuzzFastIndex: whatever the bytes, the fast path decodes nothing, or
// exactly what the generic decoder does.
func FuzzFastIndex(f *testing.F) {
	data := indexFileOf(f, stamp{Ino: 42, Size: 640, MTime: 17}, indexEntries())
	f.Add(data)
	f.Add(indexFileOf(f, stamp{Size: 1}, indexEntries()[2:]))
	f.Add([]byte(`{"version":2,"issue":1,"ledger":{"size":0,"mtime":0},"entries":[]}`))
	// a sketch with a line break, an escape, an escaped quote; a time escaped
	for _, odd := range [][2]string{{`"q":"`, `"q":"` + "\n"}, {`"q":"`, `"q":"\/`}, {`"q":"`, `"q":"\"`}, {`0Z"`, `0\u005a"`}} {
		f.Add(bytes.Replace(data, []byte(odd[0]), []byte(odd[1]), 1))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast issueIndex
		if !fastIndex(data, &fast) {
			return
		}
		var slow issueIndex
		require.NoError(t, decodeRawIndex(data, &slow), "the fast path read what the generic decoder refuses: %q", data)
		require.Equal(t, slow, fast, "%q", data)
	})
}

// BenchmarkReadIndex500 reads the index file of an issue with 500 open
// questions, as every write to it and every monitor run does: fast path
// (the form agentx writes) against the generic decoder.
func BenchmarkReadIndex500(b *testing.B) {
	es := make([]IndexEntry, 0, 500)
	for i := range 500 {
		e := indexEntries()[i%2*2] // one in 50 with a monitor state
		if i%50 == 49 {
			e = indexEntries()[1]
		}
		e.ID = FormatID(7, i+1)
		es = append(es, e)
	}
	data := indexFileOf(b, stamp{Ino: 1, Size: 1 << 20, MTime: 1}, es)
	for _, c := range []struct {
		name string
		fn   func([]byte, *issueIndex) error
	}{
		{"fast", func(d []byte, ii *issueIndex) error {
			if !fastIndex(d, ii) {
				b.Fatal("not in the written form")
			}
			return nil
		}},
		{"generic", decodeRawIndex},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var ii issueIndex
				if err := c.fn(data, &ii); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestParseWritten: the fast parse of a time as agentx writes it gives
// ParseTime's instant, and leaves every other form to ParseTime.
func TestParseWritten(t *testing.T) {
	for _, s := range []string{
		"2026-11-23T10:00:00.123Z", "0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2024-02-29T12:00:00.000Z",
		"2026-02-29T12:00:00.000Z", "2026-04-31T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-11-23T24:00:00.000Z",
		"2026-11-23T10:60:00.000Z", "2026-11-23T10:00:60.000Z", "2026-11-23T10:00:00.123+01:00", "2026-11-23T10:00:00Z",
		"2026-11-23 10:00:00.123Z", "2026-1a-23T10:00:00.123Z", "+026-11-23T10:00:00.123Z",
	} {
		got, ok := ParseWritten([]byte(s))
		want, err := ParseTime(s)
		if ok {
			require.NoError(t, err, s)
			assert.Equal(t, want, got, s)
		}
		assert.Equal(t, ok, err == nil && len(s) == 24 && s[23] == 'Z' && s[10] == 'T', s)
	}
}

// TestParseWrittenEveryDay: the day ParseWritten counts is the calendar's,
// every day of the years around the ones where the count could slip (the
// first, the turn of each century, the epoch, leap years, the last), and
// the invalid days just past each month's end are refused.
func TestParseWrittenEveryDay(t *testing.T) {
	for _, years := range [][2]int{{0, 5}, {96, 104}, {396, 404}, {1696, 1704}, {1896, 1904}, {1966, 1974}, {1996, 2104}, {2396, 2404}, {9995, 9999}} {
		for d := time.Date(years[0], 1, 1, 0, 0, 0, 0, time.UTC); d.Year() <= years[1]; d = d.AddDate(0, 0, 1) {
			at := d.Add(time.Duration(d.YearDay()) * 4001 * time.Millisecond) // a time of day of its own
			s := at.Format("2006-01-02T15:04:05.000Z")
			got, ok := ParseWritten([]byte(s))
			require.True(t, ok, s)
			require.Equal(t, at, got, s)
			if next := d.AddDate(0, 0, 1); next.Day() == 1 && d.Day() < 31 { // the day after the month's last
				bad := fmt.Sprintf("%04d-%02d-%02dT00:00:00.000Z", d.Year(), d.Month(), d.Day()+1)
				_, ok := ParseWritten([]byte(bad))
				require.False(t, ok, bad)
			}
		}
	}
}

func FuzzParseWritten(f *testing.F) {
	f.Add("2026-11-23T10:00:00.123Z")
	f.Add("2026-02-29T12:00:00.000Z")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseWritten([]byte(s))
		if !ok {
			return
		}
		want, err := ParseTime(s)
		require.NoError(t, err, "%q", s)
		require.Equal(t, want, got, "%q", s)
	})
}

// FuzzTimeString: the hand-written format is time.Format's, for any
// instant (clamped to the years 0000-9999).
func FuzzTimeString(f *testing.F) {
	f.Add(int64(1795453644561214668))
	f.Add(int64(-62167219200000000))
	f.Add(int64(0))
	f.Fuzz(func(t *testing.T, ns int64) {
		for _, tm := range []time.Time{time.Unix(0, ns), time.Unix(ns, ns%1e9), time.Unix(0, ns).In(time.FixedZone("x", 5*3600+1800))} {
			require.Equal(t, writable(tm).Format(TimeFormat), Time{Time: tm}.String(), "%v", tm)
		}
	})
}

// TestIssueStamps: the stamps taken from the open directory are those of
// os.Stat (what readIssueIndex compares), and an issue without a ledger is
// left out.
func TestIssueStamps(t *testing.T) {
	s := NewStore(t.TempDir(), lock.Options{}, nil)
	for _, n := range []int{1, 2} {
		_, err := s.Update(context.Background(), n, ask(s, "engineer", "architect", "q?"))
		require.NoError(t, err)
	}
	got := s.IssueStamps([]int{1, 2, 4})
	require.Len(t, got, 2)
	for _, n := range []int{1, 2} {
		lg, err := os.Stat(s.Path(n))
		require.NoError(t, err)
		assert.Equal(t, stampOf(lg), got[n])
	}
}
