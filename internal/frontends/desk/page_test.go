package desk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/frontends/todo"
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
