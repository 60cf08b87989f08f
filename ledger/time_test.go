package ledger

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseTimeOddForms: timestamps other tools may write that are not
// times fail with an error, never a panic ("/Date()/" used to panic every
// command that read the ledger).
func TestParseTimeOddForms(t *testing.T) {
	for _, s := range []string{"/Date()/", "/Date(+)/", "/Date(-)/", "/Date(+0100)/", "/Date(x)/", "/Date(1e3)/"} {
		t.Run(s, func(t *testing.T) {
			require.NotPanics(t, func() {
				_, err := ParseTime(s)
				assert.Error(t, err)
			})
			_, err := Decode("issue-42.json", []byte(`{"issueNumber":42,"clarifications":[{"id":"CLR-42-001","created":"`+s+`"}]}`))
			var ce *CorruptError
			require.True(t, errors.As(err, &ce), "want a *CorruptError, got %T %v", err, err)
			assert.Equal(t, "issue-42.json", ce.Path)
		})
	}
}

// TestTimeWrittenReadsBack: every time agentx writes, it reads back. RFC
// 3339 has four-digit years, so times past 9999 (a clock at
// 9999-12-31T23:59 plus an SLA used to be written as year 10000, bricking
// the issue) or before year 0 are clamped to the range on write.
func TestTimeWrittenReadsBack(t *testing.T) {
	last := time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)
	first := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   time.Time
		want time.Time
	}{
		{"in range", time.Date(2026, 2, 26, 10, 0, 0, 123456789, time.UTC), time.Date(2026, 2, 26, 10, 0, 0, 123e6, time.UTC)},
		{"last instant", last, last},
		{"SLA past year 9999", time.Date(9999, 12, 31, 23, 59, 0, 0, time.UTC).Add(30 * time.Minute), last},
		{"far future (/Date(max)/)", time.UnixMilli(1<<63 - 1), last},
		{"first instant", first, first},
		{"before year 0", first.Add(-time.Hour), first},
		{"far past", time.UnixMilli(-1 << 63), first},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := T(tt.in).MarshalJSON()
			require.NoError(t, err)
			var got Time
			require.NoError(t, got.UnmarshalJSON(b), "written as %s", b)
			assert.True(t, tt.want.Equal(got.Time), "written as %s, read back as %s, want %s", b, got.Time, tt.want)
			assert.Equal(t, string(b), `"`+T(tt.in).String()+`"`)
		})
	}
}
