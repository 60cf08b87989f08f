package router

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// TestOnce proves an action carrying a Once takes effect once however many
// goroutines make it: the first records its mark in the same write, the
// others are skipped with OnceDone and write nothing.
func TestOnce(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	rec, err := h.Ask(ctx, AskRequest{Issue: 42, From: "engineer", To: ledger.Human, Topic: "Retries", Question: "Backoff?"})
	require.NoError(t, err)

	const comment = 991
	done := func(l *ledger.Ledger) bool {
		for _, c := range l.Clarifications {
			if c.X != nil {
				for _, g := range c.X.GitHub {
					if g.Comment == comment {
						return true
					}
				}
			}
		}
		return false
	}
	mark := func(c *ledger.Clarification) {
		x := c.Ext()
		x.GitHub = append(x.GitHub, ledger.GitHubRef{Entry: len(c.Thread) - 1, Comment: comment, Inbound: true})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied, skipped := 0, 0
	for range 6 {
		wg.Go(func() {
			_, err := h.Answer(WithOnce(ctx, &Once{Done: done, Mark: mark}), rec.ID, ledger.Human, "Exponential.")
			mu.Lock()
			defer mu.Unlock()
			var se *SkippedError
			switch {
			case err == nil:
				applied++
			case errors.As(err, &se) && se.Reason == OnceDone:
				skipped++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, applied)
	assert.Equal(t, 5, skipped)
	got, err := h.Get(rec.ID)
	require.NoError(t, err)
	require.Len(t, got.Thread, 2, "one answer")
	assert.Equal(t, []ledger.GitHubRef{{Entry: 1, Comment: comment, Inbound: true}}, got.X.GitHub)
}
