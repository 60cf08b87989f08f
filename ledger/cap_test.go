package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCapAllows(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	l := &Ledger{IssueNumber: 1}
	for i, from := range []string{"engineer", "architect", "engineer"} {
		l.Ask(NewQuestion{From: from, To: "pm", Topic: "t", Body: "q"}, t0.Add(time.Duration(i)*time.Minute))
	}
	later := t0.Add(90 * time.Second)
	for _, tc := range []struct {
		name string
		cap  Cap
		from string
		more int // of from's, landing with it
		want bool
	}{
		{"no cap", Cap{}, "engineer", 0, true},
		{"two asked, cap two", Cap{Max: 2}, "engineer", 0, false},
		{"two asked, cap three", Cap{Max: 3}, "engineer", 0, true},
		{"two asked, cap three, one more landing with it", Cap{Max: 3}, "engineer", 1, false},
		{"another asker", Cap{Max: 2}, "architect", 0, true},
		{"since the run began, one asked", Cap{Max: 2, Since: &later}, "engineer", 0, true},
		{"since the run began, cap one", Cap{Max: 1, Since: &later}, "engineer", 0, false},
	} {
		assert.Equal(t, tc.want, tc.cap.Allows(l, tc.from, tc.more), tc.name)
	}
	_, ok := CapOf(context.Background())
	assert.False(t, ok)
	c, ok := CapOf(WithCap(context.Background(), Cap{Max: 2}))
	assert.True(t, ok)
	assert.Equal(t, 2, c.Max)
}

func TestCapSame(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	t1 := t0.In(time.FixedZone("x", 3600)) // the same moment
	t2 := t0.Add(time.Second)
	for _, tc := range []struct {
		name string
		a, b Cap
		want bool
	}{
		{"none", Cap{}, Cap{}, true},
		{"one max", Cap{Max: 2}, Cap{Max: 2}, true},
		{"two maxes", Cap{Max: 2}, Cap{Max: 3}, false},
		{"a run and none", Cap{Max: 2, Since: &t0}, Cap{Max: 2}, false},
		{"one run, two zones", Cap{Max: 2, Since: &t0}, Cap{Max: 2, Since: &t1}, true},
		{"two runs", Cap{Max: 2, Since: &t0}, Cap{Max: 2, Since: &t2}, false},
	} {
		assert.Equal(t, tc.want, tc.a.Same(tc.b), tc.name)
		assert.Equal(t, tc.want, tc.b.Same(tc.a), tc.name)
	}
}
