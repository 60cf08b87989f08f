package eventlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// hostileLines are lines a glance must read as the generic decoder does:
// in Append's form, and every way out of it that could fool a reader that
// matches bytes.
func hostileLines(t testing.TB) []string {
	var out []string
	for _, e := range fastEvents() {
		b, err := json.Marshal(e)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	base := out[0] // a clarification-requested line as Append writes it
	swap := func(old, new string) string { return strings.Replace(base, old, new, 1) }
	long := fastEvents()[0]
	long.Topic = strings.Repeat("long ", 30_000) // past the reader's 64 KiB buffer
	longLine, err := json.Marshal(long)
	require.NoError(t, err)
	return append(out,
		swap(`Retry budget`, `Retry \"budget\"`),                                         // escaped quotes
		swap(`Retry budget`, `Retry budget\\`),                                           // an escaped backslash at the end
		swap(`"CLR-42-001"`, `"CLR-\u0034\u0032-001"`),                                   // unicode escapes in the id
		swap(`"CLR-42-001"`, `"CLR-42-\u0030\u0030\u0031"`),                              // the same, another way
		swap(`"CLR-42-001"`, "\"CLR-42-\xff01\""),                                        // invalid UTF-8 in the id
		swap(`Retry budget`, "Retry \xc3\x28 budget"),                                    // invalid UTF-8 in the topic
		swap(`Retry budget`, "Retry büdget"),                                             // valid UTF-8
		swap(`Retry budget`, "Retry\tbudget"),                                            // a raw control character
		swap(`"round":1,`, `"round":1,"clarificationId":"CLR-42-002",`),                  // a duplicate key: the last wins
		swap(`"round":1,`, `"round":1,"type":"clarification-answered",`),                 // a duplicate type
		swap(`"round":1,`, `"round":1,"x":{"clarificationId":"CLR-9-009"},`),             // a nested object named like the field
		swap(`"topic":"Retry budget"`, `"topic":{"type":"lock-timeout"}`),                // an object where a string goes
		swap(`"issueNumber":42`, `"issueNumber":42.0`),                                   // a number in another form
		swap(`"issueNumber":42`, `"issueNumber":042`),                                    // a leading zero
		swap(`"issueNumber":42`, `"issueNumber":99999999999999999999`),                   // past int
		swap(`"round":1`, `"round":-1`),                                                  // a negative round
		swap(`"clarificationId"`, `"ClarificationID"`),                                   // a name in another case
		swap(`"type":"clarification-requested",`, `"type":"clarification-requested", `),  // a space
		swap(`2026-11-23T10:00:00.123Z`, `2026-11-23T24:00:00.123Z`),                     // no such hour
		swap(`2026-11-23T10:00:00.123Z`, `2026-11-23T10:00:00Z`),                         // another time form
		swap(`2026-11-23T10:00:00.123Z`, `2026-02-29T10:00:00.123Z`),                     // no such day
		swap(`2026-11-23T10:00:00.123Z`, `2026-11-23T10:00:00.123+01:00`),                // an offset
		swap(`"type":"clarification-requested"`, `"type":"clarification-requested-too"`), // an unknown type
		swap(`"type":"clarification-requested"`, `"type":""`),                            // no type
		base[:len(base)/2],      // torn
		base[:len(base)/3]+base, // a torn fragment glued in front of a whole event
		base+" ",                // trailing space
		"  ",                    // blank
		"[]",
		"{}",
		string(longLine),
	)
}

// sameAs checks that g says what e says.
func sameAs(t *testing.T, e Event, g *Glance, line string) {
	t.Helper()
	assert.Equal(t, e.Type, g.Type, "%.200q", line)
	assert.Equal(t, e.ClarificationID, string(g.ClarificationID), "%.200q", line)
	assert.Equal(t, e.IssueNumber, g.IssueNumber, "%.200q", line)
	assert.Equal(t, e.FromAgent, string(g.FromAgent), "%.200q", line)
	assert.Equal(t, e.ToAgent, string(g.ToAgent), "%.200q", line)
	assert.Equal(t, e.Topic, string(g.Topic), "%.200q", line)
	assert.Equal(t, e.Round, g.Round, "%.200q", line)
	assert.Equal(t, e.Timestamp.Time, g.Timestamp, "%.200q", line)
	assert.Equal(t, e.Refusal(), g.Refusal(), "%.200q", line)
	assert.Equal(t, e, g.Event(), "%.200q", line)
}

// TestGlanceIsTheEvent: a glance at a line says what the whole decode of
// it says, whatever the line: read in place when in Append's form, by the
// generic decoder otherwise; and EachGlance skips what Each skips, a line
// longer than the read buffer and a last line without its newline
// included.
func TestGlanceIsTheEvent(t *testing.T) {
	lines := hostileLines(t)
	var days dayCache
	for _, line := range lines {
		e, ok, skipped := parseEventLine([]byte(line))
		var g Glance
		gok, gskipped := glanceLine([]byte(line), &days, &g)
		require.Equal(t, ok, gok, "%.200q", line)
		require.Equal(t, skipped, gskipped, "%.200q", line)
		if ok {
			sameAs(t, e, &g, line)
		}
	}

	path := filepath.Join(t.TempDir(), File)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)) // the last line torn: no newline
	log := EventLog{Path: path}
	var events []Event
	skipped, err := log.Each(EventFilter{}, func(e Event) error { events = append(events, e); return nil })
	require.NoError(t, err)
	var glanced []Event
	gskipped, err := log.EachGlance(func(g *Glance) error { glanced = append(glanced, g.Event()); return nil })
	require.NoError(t, err)
	assert.Equal(t, skipped, gskipped)
	assert.Equal(t, events, glanced)
	assert.Greater(t, skipped, 5)
	assert.Equal(t, strings.Repeat("long ", 30_000), glanced[len(glanced)-1].Topic, "the long last line is read whole")
}

// TestDayCache: a timestamp read with the date of the one before is what
// ledger.ParseWritten reads, valid or not.
func TestDayCache(t *testing.T) {
	var days dayCache
	for _, s := range []string{
		"2026-11-23T10:00:00.123Z", "2026-11-23T23:59:59.999Z", "2026-11-23T00:00:00.000Z", "2026-11-23T24:00:00.000Z",
		"2026-11-23T10:60:00.000Z", "2026-11-23T10:00:60.000Z", "2026-11-23T1a:00:00.000Z", "2026-11-23T10:00:00.12aZ",
		"2026-11-23X10:00:00.123Z", "2026-11-23T10:00:00.123", "2026-02-29T10:00:00.000Z", "2026-11-23T10-00:00.000Z",
		"2028-02-29T10:00:00.000Z", "2028-02-29T11:00:00.000Z", "0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z",
	} {
		want, wok := ledger.ParseWritten([]byte(s))
		got, ok := days.parse([]byte(s))
		require.Equal(t, wok, ok, s)
		require.Equal(t, want, got, s)
	}
	var none *dayCache
	got, ok := none.parse([]byte("2026-11-23T10:00:00.123Z"))
	require.True(t, ok)
	assert.Equal(t, time.Date(2026, 11, 23, 10, 0, 0, 123e6, time.UTC), got)
}

// FuzzGlance: whatever the line, and the line before it (whose date the
// glance may remember), a glance reads what the whole decode reads: the
// same event or none, the same count skipped.
func FuzzGlance(f *testing.F) {
	lines := hostileLines(f)
	for i, line := range lines {
		if len(line) < 4096 {
			f.Add([]byte(lines[(i+1)%len(lines)]), []byte(line))
		}
	}
	f.Fuzz(func(t *testing.T, before, line []byte) {
		var days dayCache
		var g Glance
		glanceLine(before, &days, &g)
		e, ok, skipped := parseEventLine(line)
		gok, gskipped := glanceLine(line, &days, &g)
		require.Equal(t, ok, gok, "%q", line)
		require.Equal(t, skipped, gskipped, "%q", line)
		if ok {
			sameAs(t, e, &g, string(line))
		}
	})
}

// BenchmarkEachGlance reads a log of 100,000 lines as agentx writes them,
// a glance at each, against Each's whole events.
func BenchmarkEachGlance(b *testing.B) {
	path := filepath.Join(b.TempDir(), File)
	var buf []byte
	at := time.Date(2026, 11, 18, 0, 29, 11, 203e6, time.UTC)
	for i := range 100_000 {
		e := EventFor([]EventType{EventRequested, EventAnswered, EventResolved}[i%3], i/30+1,
			&ledger.Clarification{ID: ledger.FormatID(i/30+1, i/3%10+1), From: "engineer", To: "architect", Topic: "Topic adapter", Round: 1},
			at.Add(time.Duration(i)*time.Second))
		e.By = "engineer"
		line, err := json.Marshal(e)
		require.NoError(b, err)
		buf = append(append(buf, line...), '\n')
	}
	require.NoError(b, os.WriteFile(path, buf, 0o644))
	log := EventLog{Path: path}
	b.Run("glance", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			if _, err := log.EachGlance(func(g *Glance) error { n += len(g.ClarificationID); return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("each", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := log.Each(EventFilter{}, func(Event) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestTypeSlots: every type agentx writes is found by its name, in one
// comparison.
func TestTypeSlots(t *testing.T) {
	inSlots := 0
	for name, typ := range typeTables().types {
		assert.Equal(t, typ, typeOf([]byte(name)))
		if typeTables().slots[typeSlot([]byte(name))] == typ {
			inSlots++
		}
	}
	assert.Equal(t, len(typeTables().types), inSlots, "two names share a slot: one is found by the map, slower (change typeSlot)")
	assert.Equal(t, EventType("clarification-unknown"), typeOf([]byte("clarification-unknown")))
	assert.Equal(t, EventType(""), typeOf(nil))
}

// TestParts: the parts of a log are runs of whole lines, one after the
// other from the first byte to the end, and their glances, one part after
// the other, are the glances of the whole log: a line longer than a part
// and a torn last line included.
func TestParts(t *testing.T) {
	defer func(was int64) { minPart = was }(minPart)
	minPart = 1 << 10
	lines := hostileLines(t)
	var text []string
	for range 20 {
		text = append(text, lines...)
	}
	path := filepath.Join(t.TempDir(), File)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(text, "\n")), 0o644))
	log := EventLog{Path: path}
	var whole []Event
	skipped, err := log.EachGlance(func(g *Glance) error { whole = append(whole, g.Event()); return nil })
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, n := range []int{1, 2, 3, 7, 1000} {
		ps, err := log.Parts(n)
		require.NoError(t, err)
		parts := ps.List
		require.NotEmpty(t, parts)
		assert.LessOrEqual(t, len(parts), n)
		var got []Event
		gotSkipped := 0
		for i, p := range parts {
			if i == 0 {
				assert.Zero(t, p.Start)
			} else {
				assert.Equal(t, byte('\n'), data[p.Start-1], "part %d of %d starts a line", i, n)
				assert.Equal(t, parts[i-1].End, p.Start)
			}
			if i == len(parts)-1 {
				assert.Equal(t, int64(-1), p.End)
			}
			s, err := p.EachGlance(func(g *Glance) error { got = append(got, g.Event()); return nil })
			require.NoError(t, err)
			gotSkipped += s
		}
		assert.Equal(t, skipped, gotSkipped, "%d parts", n)
		assert.Equal(t, whole, got, "%d parts", n)
		if n > 1 {
			assert.Greater(t, len(parts), 1, "%d parts", n)
		}
		require.NoError(t, ps.Close())
	}

	// the parts read the file they were cut from, whatever is renamed over it
	ps, err := log.Parts(3)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".new", []byte(lines[0]+"\n"), 0o644))
	require.NoError(t, os.Rename(path+".new", path))
	var got []Event
	for _, p := range ps.List {
		_, err := p.EachGlance(func(g *Glance) error { got = append(got, g.Event()); return nil })
		require.NoError(t, err)
	}
	require.NoError(t, ps.Close())
	assert.Equal(t, whole, got)

	ps, err = EventLog{Path: filepath.Join(t.TempDir(), "none")}.Parts(4)
	require.NoError(t, err)
	require.Len(t, ps.List, 1, "a missing log is one part")
	n, err := ps.List[0].EachGlance(func(*Glance) error { t.Fatal("a line of no log"); return nil })
	require.NoError(t, err)
	assert.Zero(t, n)
	require.NoError(t, ps.Close())
}
