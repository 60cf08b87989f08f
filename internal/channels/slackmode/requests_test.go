package slackmode

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// calls are the fake's counts of the two rate-limited reads.
func (e *env) calls() (history, replies int) {
	return e.fake.Calls("conversations.history"), e.fake.Calls("conversations.replies")
}

// TestPostsWithoutHistory proves posting reads no history and no thread
// first: the ledger says what was posted; the channel or the thread is
// read only to recover a post whose result was lost, 15 messages a page.
func TestPostsWithoutHistory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var ids []string
	for _, topic := range []string{"Retries", "Tenancy", "Caching"} {
		rec, err := e.hub.Ask(ctx, router.AskRequest{Issue: 42, From: "engineer", To: ledger.Human, Topic: topic, Question: topic + "?"})
		require.NoError(t, err)
		ids = append(ids, rec.ID)
	}
	e.push(e.mode())
	for _, id := range ids {
		_, err := e.hub.Assume(ctx, id, "engineer", "the README's way")
		require.NoError(t, err)
		_, err = e.hub.Answer(ctx, id, ledger.Human, "Yes.")
		require.NoError(t, err)
	}
	e.push(e.mode())
	e.poll(e.mode())
	h, r := e.calls()
	t.Logf("3 threads, 9 messages posted, one read of the threads: %d conversations.history, %d conversations.replies, %d requests in all", h, r, e.fake.Requests)
	assert.Len(t, e.fake.Messages(channel), 9)
	assert.Zero(t, h, "nothing was lost: no history read")
	assert.Equal(t, 3, r, "one read of each open thread")

	// A lost post: the next run reads the channel once (pages of 15) and
	// finds it.
	for i := range 40 {
		e.fake.Reply(channel, "", "U0SOMEONE", "chatter "+string(rune('a'+i%26)), false)
	}
	rec, err := e.hub.Ask(ctx, router.AskRequest{Issue: 43, From: "engineer", To: ledger.Human, Topic: "Logs", Question: "Where?"})
	require.NoError(t, err)
	e.fake.LosePost()
	_, err = e.mode().Push(ctx, true)
	require.Error(t, err)
	e.push(e.mode())
	h, _ = e.calls()
	assert.Equal(t, 3, h, "one history read of 41 messages, 15 a page")
	assert.Equal(t, 9+40+1, len(e.fake.Messages(channel)), "found, not posted again")
	require.NotNil(t, e.thread(rec.ID))

	// Killed after posting in the thread: the thread is read once.
	_, err = e.hub.Answer(ctx, rec.ID, ledger.Human, "In /var/log.")
	require.NoError(t, err)
	crashAfterPost = func() error { return errors.New("killed") }
	_, err = e.mode().Push(ctx, true)
	crashAfterPost = nil
	require.Error(t, err)
	_, before := e.calls()
	rep := e.push(e.mode())
	_, after := e.calls()
	assert.Equal(t, 1, rep.Issues[0].Found)
	assert.Equal(t, 1, after-before)
	assert.Equal(t, 9+40+2, len(e.fake.Messages(channel)))
}
