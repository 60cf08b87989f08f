package cli

import (
	"testing"
	"time"
)

// TestParseSince: --since takes an RFC 3339 time, a Go duration, or days
// and weeks (7d, 2w, 1d12h), counted back from now; anything else is a
// usage error.
func TestParseSince(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	tests := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "90m", want: now.Add(-90 * time.Minute)},
		{in: "168h", want: now.Add(-7 * day)},
		{in: "7d", want: now.Add(-7 * day)},
		{in: "1d", want: now.Add(-day)},
		{in: "2w", want: now.Add(-14 * day)},
		{in: "1w2d", want: now.Add(-9 * day)},
		{in: "1d12h", want: now.Add(-36 * time.Hour)},
		{in: "0d", want: now},
		{in: "2026-03-01T00:00:00Z", want: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
		{in: "yesterday", bad: true},
		{in: "-7d", bad: true},
		{in: "-1h", bad: true},
		{in: "d", bad: true},
		{in: "7x", bad: true},
		{in: "1.5d", bad: true},
		{in: "7d2w", bad: true},
		{in: "", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSince(tt.in, now)
			if tt.bad {
				if err == nil {
					t.Fatalf("parseSince(%q) = %v, want a usage error", tt.in, got)
				}
				if errorExit(err) != ExitUsage {
					t.Fatalf("parseSince(%q): %v is not a usage error", tt.in, err)
				}
				return
			}
			if err != nil || !got.Equal(tt.want) {
				t.Fatalf("parseSince(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}
