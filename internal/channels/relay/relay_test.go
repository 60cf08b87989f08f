package relay

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/ledger"
)

type waitErr struct{ until time.Time }

func (e *waitErr) Error() string        { return "wait" }
func (e *waitErr) WaitUntil() time.Time { return e.until }

// TestBackoffAndWaits proves the retry times: 30 s doubling to 30 min, a
// Waiter found through wrapping, the later of two holds.
func TestBackoffAndWaits(t *testing.T) {
	assert.Equal(t, 30*time.Second, Backoff(1))
	assert.Equal(t, time.Minute, Backoff(2))
	assert.Equal(t, 16*time.Minute, Backoff(6))
	assert.Equal(t, 30*time.Minute, Backoff(7))
	assert.Equal(t, 30*time.Minute, Backoff(100))

	at := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	until, ok := WaitOf(fmt.Errorf("slack: %w", &waitErr{at}))
	assert.True(t, ok)
	assert.Equal(t, at, until)
	_, ok = WaitOf(errors.New("down"))
	assert.False(t, ok)

	a, b := ledger.T(at), ledger.T(at.Add(time.Minute))
	assert.Equal(t, &b, Later(&a, &b))
	assert.Equal(t, &b, Later(&b, &a))
	assert.Equal(t, &a, Later(&a, nil))
	assert.Equal(t, &a, Later(nil, &a))
	assert.Nil(t, Later(nil, nil))
	assert.Equal(t, []int{2, 10}, Sorted(map[string]*Behind{"10": {}, "2": {}, "x": {}}))
}
