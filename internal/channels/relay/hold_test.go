package relay

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHold: a hold is read by any process from its file; a later one
// replaces it, an earlier one does not; no file (or a nil hold) holds
// nothing.
func TestHold(t *testing.T) {
	t0 := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	h := &Hold{File: FileIn(t.TempDir(), "test", "hold.json")}
	assert.True(t, h.Until().IsZero(), "no file")
	assert.Empty(t, h.Held("Test", t0))
	var none *Hold
	assert.True(t, none.Until().IsZero())
	require.NoError(t, none.Set(context.Background(), t0, "x"))

	steps := []struct {
		set  time.Time
		want time.Time
	}{
		{t0.Add(30 * time.Second), t0.Add(30 * time.Second)},
		{t0.Add(10 * time.Second), t0.Add(30 * time.Second)}, // earlier: the later stands
		{t0.Add(2 * time.Minute), t0.Add(2 * time.Minute)},
	}
	for _, s := range steps {
		require.NoError(t, h.Set(context.Background(), s.set, "chat.postMessage"))
		other := &Hold{File: h.File} // another process
		assert.Equal(t, s.want, other.Until())
	}
	assert.Equal(t, "Test rate limit: not before 2026-02-26T10:02:00Z", h.Held("Test", t0))
	assert.Empty(t, h.Held("Test", t0.Add(2*time.Minute)), "lifted at its time")
}
