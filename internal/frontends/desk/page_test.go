package desk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
