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
		want bool
	}{
		{"no cap", Cap{}, "engineer", true},
		{"two asked, cap two", Cap{Max: 2}, "engineer", false},
		{"two asked, cap three", Cap{Max: 3}, "engineer", true},
		{"another asker", Cap{Max: 2}, "architect", true},
		{"since the run began, one asked", Cap{Max: 2, Since: &later}, "engineer", true},
		{"since the run began, cap one", Cap{Max: 1, Since: &later}, "engineer", false},
	} {
		assert.Equal(t, tc.want, tc.cap.Allows(l, tc.from), tc.name)
	}
	_, ok := CapOf(context.Background())
	assert.False(t, ok)
	c, ok := CapOf(WithCap(context.Background(), Cap{Max: 2}))
	assert.True(t, ok)
	assert.Equal(t, 2, c.Max)
}
