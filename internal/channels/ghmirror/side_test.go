package ghmirror

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/router"
)

// TestSideWarnsOnce: a Side says a failure once, whatever else fails in
// the same piece of work, and never returns it.
func TestSideWarnsOnce(t *testing.T) {
	ctx := context.Background()
	var warned []error
	warn := func(err error) { warned = append(warned, err) }

	s := &Side{Err: errors.New("no token"), Warn: warn}
	s.Read(ctx)
	s.Push(ctx)
	require.Len(t, warned, 1)
	assert.EqualError(t, warned[0], "no token")

	e := newEnv(t, "")
	e.ask("architect")
	warned = nil
	e.fake.Fail(5, 502, 0)
	s = &Side{Mirror: e.mirror(), Warn: warn}
	s.Read(ctx)
	s.Push(ctx)
	require.Len(t, warned, 1)
	assert.Contains(t, warned[0].Error(), "502")
	assert.Contains(t, warned[0].Error(), "(queued: agentx github status shows what is behind)")

	var nilSide *Side
	nilSide.Read(ctx)
	nilSide.Push(ctx)
	_, err := nilSide.Wait(ctx, e.hub, "CLR-42-001", 10*time.Millisecond)
	var te *router.WaitTimeoutError
	assert.ErrorAs(t, err, &te, "no Side: the hub's wait")
}

// TestSidesTakeTurns: of the Sides over one Mirror (an MCP server's calls
// at once), one reads or mirrors at a time; the others leave it to it.
func TestSidesTakeTurns(t *testing.T) {
	e := newEnv(t, "")
	e.ask("architect")
	m := e.mirror()
	m.busy.Lock()
	before := e.fake.RateUsed()
	(&Side{Mirror: m, Warn: func(err error) { t.Errorf("warning: %v", err) }}).Push(context.Background())
	assert.Equal(t, before, e.fake.RateUsed(), "left to the Side at it")
	m.busy.Unlock()
	(&Side{Mirror: m, Warn: func(err error) { t.Errorf("warning: %v", err) }}).Push(context.Background())
	assert.Len(t, e.fake.Comments(42), 1)
}
