package eventlog

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseEventLine: any line of the event log (which anyone may append
// to, and a writer killed mid-line may tear) either yields an event with a
// type or is counted as skipped; never a panic. An event writes back to a
// line that reads as the same event, and a torn fragment glued in front of
// a whole event does not lose it.
func FuzzParseEventLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"clarification-requested","clarificationId":"CLR-42-001","issueNumber":42,"fromAgent":"engineer","toAgent":"architect","topic":"Cache","blocking":true,"round":1,"timestamp":"2026-02-26T10:00:00.000Z"}`,
		`{"type":"clarification-escalated","clarificationId":"CLR-42-001","issueNumber":42,"timestamp":"/Date()/","reason":"\u001b[2J"}`,
		`{"type":"clarification-ans{"type":"clarification-answered","clarificationId":"CLR-1-001","issueNumber":1,"round":1,"timestamp":"2026-02-26T10:00:00Z"}`,
		`{"type":""}`, `{"type":"x","timestamp":"99999-01-01T00:00:00Z"}`, `{"type":"x","issueNumber":1e999}`, "   ", "\x00\xff", `[]`,
	} {
		f.Add([]byte(s), []byte(`{"type":"clarif`))
	}
	f.Fuzz(func(t *testing.T, line, frag []byte) {
		e, ok, skipped := parseEventLine(line)
		blank := len(bytes.TrimSpace(line)) == 0
		switch {
		case skipped != 0 && skipped != 1:
			t.Fatalf("skipped = %d", skipped)
		case blank && (ok || skipped != 0):
			t.Fatalf("blank line: ok %v, skipped %d", ok, skipped)
		case !blank && !ok && skipped != 1:
			t.Fatalf("a line that held no event was not counted as skipped")
		case ok && e.Type == "":
			t.Fatalf("event with no type from %q", line)
		}
		if !ok {
			return
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", e, err)
		}
		e2, ok2, skipped2 := parseEventLine(b)
		b2, _ := json.Marshal(e2)
		if !ok2 || skipped2 != 0 || !bytes.Equal(b, b2) {
			t.Fatalf("event %s reads back as %s (ok %v, skipped %d)", b, b2, ok2, skipped2)
		}
		frag = bytes.ReplaceAll(frag, []byte("\n"), nil)
		e3, ok3, skipped3 := parseEventLine(append(frag, b...))
		b3, _ := json.Marshal(e3)
		want := 1
		if len(bytes.TrimSpace(frag)) == 0 {
			want = 0
		}
		if !ok3 || skipped3 != want || !bytes.Equal(b, b3) {
			t.Fatalf("torn %q glued to %s reads as %s (ok %v, skipped %d, want %d)", frag, b, b3, ok3, skipped3, want)
		}
	})
}
