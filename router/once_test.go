package router

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
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
	done := func(l *ledger.Ledger) (bool, error) {
		for _, c := range l.Clarifications {
			refs, err := chanref.GitHubRefs(c)
			assert.NoError(t, err)
			for _, g := range refs {
				if g.Comment == comment {
					return true, nil
				}
			}
		}
		return false, nil
	}
	mark := func(c *ledger.Clarification) error {
		refs, err := chanref.GitHubRefs(c)
		if err != nil {
			return err
		}
		return chanref.SetGitHubRefs(c, append(refs, chanref.GitHubRef{Entry: len(c.Thread) - 1, Comment: comment, Inbound: true}))
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
	refs, err := chanref.GitHubRefs(got.Clarification)
	require.NoError(t, err)
	assert.Equal(t, []chanref.GitHubRef{{Entry: 1, Comment: comment, Inbound: true}}, refs)
}
