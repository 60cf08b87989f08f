package eventlog

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEventCodecMatchesEncodingJSON: events are read and written with the
// JSON v2 engine; what is read and written is what encoding/json reads and
// writes, odd lines included.
func TestEventCodecMatchesEncodingJSON(t *testing.T) {
	lines := []string{
		`{"type":"requested","clarificationId":"CLR-1-001","issueNumber":1,"fromAgent":"a","toAgent":"b","topic":"<x> & y` + "\u2028" + `","blocking":true,"round":1,"timestamp":"2026-02-26T10:00:00Z"}`,
		`{"type":"answered","TOPIC":"case-insensitive name","timestamp":"2026-02-26T10:00:00.123Z","by":"b"}`,
		`{"type":"answered","topic":"first","topic":"second"}`,
		"{\"type\":\"stale\",\"topic\":\"bad \xff byte\",\"reason\":\"r\",\"timestamp\":null}",
		`{"type":"resolved","unknown":{"x":[1,2]},"round":3}`,
	}
	for _, line := range lines {
		var want Event
		require.NoError(t, json.Unmarshal([]byte(line), &want), line)
		got, ok, _ := parseEventLine([]byte(line))
		require.True(t, ok, line)
		assert.Equal(t, want, got, line)
		wantOut, err := json.MarshalIndent(want, "    ", "  ")
		require.NoError(t, err)
		gotOut, err := got.MarshalIndent("    ")
		require.NoError(t, err, line)
		assert.Equal(t, string(wantOut), string(gotOut), line)
	}
}
