package desk

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/frontends/todo"
	"github.com/agentx-cli/agentx/ledger"
)

// TestThreadCount: the thread's toggle counts its entries in words that
// read right for one and for many.
func TestThreadCount(t *testing.T) {
	for _, tc := range []struct {
		entries int
		want    string
	}{
		{1, "Whole thread (1 entry)"},
		{2, "Whole thread (2 entries)"},
	} {
		v := itemView{Thread: make([]entryView, tc.entries)}
		html, err := (&Server{}).fragment(v)
		require.NoError(t, err)
		assert.Contains(t, html, tc.want)
	}
}

// TestWhere: an item says the issue it is on, and a question asked on no
// issue says so, never "#0".
func TestWhere(t *testing.T) {
	for _, tc := range []struct {
		it   todo.Item
		want string
	}{
		{todo.Item{Kind: todo.KindQuestion, Issue: 7}, "#7"},
		{todo.Item{Kind: todo.KindQuestion}, "no issue"},
		{todo.Item{Kind: todo.KindEscalation}, "no issue"},
		{todo.Item{Kind: todo.KindProposal, Issues: []int{5, 9}}, "#5 #9"},
		{todo.Item{Kind: todo.KindProposal}, "no issue"},
	} {
		assert.Equal(t, tc.want, where(tc.it), "%+v", tc.it)
	}
}

// TestDue: the page warns of an item overdue or due soon (its last hour,
// or the last tenth of a shorter SLA), not of one due in a day.
func TestDue(t *testing.T) {
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	item := func(sla, left time.Duration, overdue bool) todo.Item {
		d := ledger.T(now.Add(left))
		return todo.Item{Since: ledger.T(now.Add(left - sla)), Due: &d, Overdue: overdue}
	}
	for _, tc := range []struct {
		name string
		it   todo.Item
		text string
		warn bool
	}{
		{"no due time", todo.Item{Since: ledger.T(now)}, "", false},
		{"just asked, SLA a day", item(24*time.Hour, 24*time.Hour, false), "due in 1d0h", false},
		{"a minute in, SLA a day", item(24*time.Hour, 23*time.Hour+59*time.Minute, false), "due in 23h59m", false},
		{"two hours left of a day", item(24*time.Hour, 2*time.Hour, false), "due in 2h0m", false},
		{"an hour left of a day", item(24*time.Hour, time.Hour, false), "due in 1h0m", true},
		{"ten minutes left of a day", item(24*time.Hour, 10*time.Minute, false), "due in 10m", true},
		{"ten minutes left of 30", item(30*time.Minute, 10*time.Minute, false), "due in 10m", false},
		{"three minutes left of 30", item(30*time.Minute, 3*time.Minute, false), "due in 3m", true},
		{"overdue", item(24*time.Hour, -5*time.Minute, true), "overdue 5m", true},
		{"an answer nobody picked up", item(10*time.Minute, -19*time.Minute, true), "overdue 19m", true},
	} {
		text, warn := due(tc.it, now)
		assert.Equal(t, tc.text, text, tc.name)
		assert.Equal(t, tc.warn, warn, tc.name)
	}
}

// TestDuePainted: only a warning is painted in the warning style.
func TestDuePainted(t *testing.T) {
	html, err := (&Server{}).fragment(itemView{DueText: "due in 23h59m"})
	require.NoError(t, err)
	assert.Contains(t, html, `<span class="due">due in 23h59m</span>`)
	html, err = (&Server{}).fragment(itemView{DueText: "due in 10m", DueWarn: true})
	require.NoError(t, err)
	assert.Contains(t, html, `<span class="late">due in 10m</span>`)
}
