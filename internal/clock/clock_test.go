package clock

import (
	"testing"
	"time"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		value   string
		want    time.Time
		wantErr bool
	}{
		{"2026-02-26T10:00:00Z", time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC), false},
		{"2026-02-26T11:00:00+01:00", time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC), false},
		{"yesterday", time.Time{}, true},
	}
	for _, tt := range tests {
		c, err := FromEnv(tt.value)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%q: want an error", tt.value)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.value, err)
		}
		first := c()
		time.Sleep(2 * time.Millisecond)
		if !first.Equal(tt.want) || !c().Equal(tt.want) {
			t.Errorf("%q: got %v then %v, want %v both times (a fixed clock)", tt.value, first, c(), tt.want)
		}
	}
	real, err := FromEnv("")
	if err != nil || time.Since(real()) > time.Second {
		t.Errorf("empty value: want the real clock")
	}
}
