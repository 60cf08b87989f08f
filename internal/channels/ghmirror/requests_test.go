package ghmirror

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror/ghfake"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// TestRefusedPostForgotten proves a comment GitHub refused (a 422) leaves
// no note of a post in flight: the next sync posts it without listing the
// issue first. A server error, which may have posted it, keeps the note.
func TestRefusedPostForgotten(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	e.ask(ledger.Human)
	notes := relay.PostingIn(e.hub.Store.Dir(), Dir)
	e.fake.Fail(1, 422, 0)
	_, err := e.mirror().Push(ctx, true)
	require.ErrorContains(t, err, "422")
	lost, err := notes.Lost(42)
	require.NoError(t, err)
	assert.Empty(t, lost)
	assert.Equal(t, 1, e.push(e.mirror()).Issues[0].Posted)
	assert.Zero(t, e.fake.Calls(ghfake.OpListIssue), "posted without listing the issue")

	e.ask(ledger.Human)
	e.fake.Fail(1, 502, 0)
	_, err = e.mirror().Push(ctx, true)
	require.Error(t, err)
	lost, err = notes.Lost(42)
	require.NoError(t, err)
	assert.Len(t, lost, 1)
	e.push(e.mirror())
	assert.Equal(t, 1, e.fake.Calls(ghfake.OpListIssue), "listed the issue to recover it")
	assert.Len(t, e.fake.Comments(42), 2)
}

// TestRateLimitedPostForgotten: a post GitHub rate-limited (429, with
// Retry-After or without) posted nothing either: its note goes, and the
// next sync posts it without listing the issue.
func TestRateLimitedPostForgotten(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	notes := relay.PostingIn(e.hub.Store.Dir(), Dir)
	for _, retryAfter := range []int{1, 0} {
		e.ask(ledger.Human)
		e.fake.Fail(1, 429, retryAfter)
		_, err := e.mirror().Push(ctx, true)
		require.Error(t, err)
		lost, err := notes.Lost(42)
		require.NoError(t, err)
		assert.Empty(t, lost, "Retry-After %d: no note left", retryAfter)
		assert.Equal(t, 1, e.push(e.mirror()).Issues[0].Posted) // forced: past the wait
		assert.Zero(t, e.fake.Calls(ghfake.OpListIssue), "posted without listing the issue")
	}
	assert.Len(t, e.fake.Comments(42), 2)
}

// TestPostsWithoutListing proves a post is not preceded by a listing of
// the issue's comments: the ledger says what was posted; the issue is
// listed only to recover a post whose result was lost (an answer that
// never came, a process killed before recording), across pages.
func TestPostsWithoutListing(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	var ids []string
	for _, topic := range []string{"Retries", "Tenancy", "Caching"} {
		rec, err := e.hub.Ask(ctx, router.AskRequest{Issue: 42, From: "engineer", To: ledger.Human, Topic: topic, Question: topic + "?"})
		require.NoError(t, err)
		ids = append(ids, rec.ID)
	}
	e.push(e.mirror())
	for _, id := range ids {
		_, err := e.hub.Answer(ctx, id, ledger.Human, "Yes.")
		require.NoError(t, err)
		e.push(e.mirror())
	}
	t.Logf("6 comments posted in 4 runs: %d listings of the issue, %d requests in all", e.fake.Calls(ghfake.OpListIssue), e.fake.Requests)
	assert.Equal(t, 6, e.fake.Calls(ghfake.OpCreate))
	assert.Zero(t, e.fake.Calls(ghfake.OpListIssue), "nothing was lost: nothing to list")

	// More than a page of comments, then a post whose answer is lost: the
	// next run lists every page once and finds it.
	for i := range 230 {
		e.fake.AddComment(42, "someone", "User", "NONE", fmt.Sprintf("chatter %d", i))
	}
	_, err := e.hub.Resolve(ctx, ids[0], "engineer", "Thanks.")
	require.NoError(t, err)
	e.fake.LoseNextCreate(1)
	_, err = e.mirror().Push(ctx, true)
	require.Error(t, err)
	e.push(e.mirror())
	assert.Equal(t, 3, e.fake.Calls(ghfake.OpListIssue), "one listing of three pages, to recover the lost post")
	assert.Len(t, e.fake.Comments(42), 6+230+1, "the lost post found, not posted again")

	// Killed between posting and recording: the same.
	_, err = e.hub.Resolve(ctx, ids[1], "engineer", "Thanks.")
	require.NoError(t, err)
	crashAfterPost = func() error { return errors.New("killed") }
	_, err = e.mirror().Push(ctx, true)
	crashAfterPost = nil
	require.Error(t, err)
	rep := e.push(e.mirror())
	assert.Equal(t, 1, rep.Issues[0].Found)
	assert.Equal(t, 6, e.fake.Calls(ghfake.OpListIssue))
	assert.Len(t, e.fake.Comments(42), 6+230+2)

	// Once recovered, posts go back to no listing.
	_, err = e.hub.Resolve(ctx, ids[2], "engineer", "Thanks.")
	require.NoError(t, err)
	e.push(e.mirror())
	assert.Equal(t, 6, e.fake.Calls(ghfake.OpListIssue))
	assert.Len(t, e.fake.Comments(42), 6+230+3)
}

// TestOwnAccountIsNoPerson proves a command written with agentx's own
// token (which every agent holds) is never a person's, even when the
// account has write access and [github] answerers names it: it is refused
// with one reply, and GitHub is asked who the token is once per client,
// only when a comment needs judging.
func TestOwnAccountIsNoPerson(t *testing.T) {
	for _, extra := range []string{"", "answerers = [\"agentx-bot\", \"maintainer\"]\n"} {
		t.Run(fmt.Sprintf("answerers=%v", extra != ""), func(t *testing.T) {
			e := newEnv(t, extra)
			ctx := context.Background()
			rec, err := e.hub.Ask(ctx, router.AskRequest{Issue: 7, From: "engineer", To: ledger.Human, Topic: "Deploy", Question: "Deploy now?"})
			require.NoError(t, err)
			require.Equal(t, "CLR-7-001", rec.ID)
			e.push(e.mirror())
			e.fake.AddComment(7, "agentx-bot", "User", "MEMBER", "/answer CLR-7-001 yes, deploy")
			e.fake.AddComment(7, "agentx-bot", "User", "MEMBER", "yes, deploy")
			m := e.mirror()
			rep, err := m.Poll(ctx, true)
			require.NoError(t, err)
			require.Len(t, rep.Handled, 1, "the plain comment is nobody's answer, and gets no reply")
			assert.Equal(t, Refused, rep.Handled[0].Outcome)
			assert.Contains(t, rep.Handled[0].Reason, "agentx-bot is agentx's own account")
			assert.Equal(t, ledger.Pending, e.get(rec.ID).Status)

			// Read again (another process, a later command): no second reply.
			for range 2 {
				e.now = e.now.Add(time.Minute)
				_, err = e.mirror().Poll(ctx, true)
				require.NoError(t, err)
			}
			replies := 0
			for _, c := range e.fake.Comments(7) {
				if strings.Contains(c.Body, "agentx did not take this comment") {
					replies++
				}
			}
			assert.Equal(t, 1, replies)
			assert.Equal(t, ledger.Pending, e.get(rec.ID).Status)
			assert.Equal(t, 1, e.fake.Calls(ghfake.OpUser), "asked once, when a comment needed judging (later reads had none new)")

			// A person's own account still answers.
			e.fake.AddComment(7, "maintainer", "User", "MEMBER", "/answer CLR-7-001 yes, deploy")
			e.now = e.now.Add(time.Minute)
			_, err = m.Poll(ctx, true)
			require.NoError(t, err)
			assert.Equal(t, ledger.Answered, e.get(rec.ID).Status)
			assert.Equal(t, 1, e.fake.Calls(ghfake.OpUser), "asked once by this client")
		})
	}
}

func (e *env) get(id string) *ledger.Clarification {
	c, err := e.hub.Store.Get(id)
	require.NoError(e.t, err)
	return c
}

// TestOptionByNumber proves a command picks a question's or an
// escalation's option by number through the hub, which stores the
// option's text and its number; a number not offered is refused with a
// reply naming the options.
func TestOptionByNumber(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	rec, err := e.hub.Ask(ctx, router.AskRequest{Issue: 42, From: "engineer", To: ledger.Human, Topic: "Retries", Question: "Which?", Options: []string{"Exponential backoff", "A fixed delay"}})
	require.NoError(t, err)
	e.push(e.mirror())
	body := e.fake.Comments(42)[0].Body
	assert.Contains(t, body, "**Options:**\n1. Exponential backoff\n2. A fixed delay\n")
	assert.Contains(t, body, "`/answer CLR-42-001 #N`")

	e.fake.AddComment(42, "maintainer", "User", "MEMBER", "/answer CLR-42-001 #3")
	e.fake.AddComment(42, "maintainer", "User", "MEMBER", "/answer CLR-42-001 #2 but only on weekends")
	rep, err := e.mirror().Poll(ctx, true)
	require.NoError(t, err)
	require.Len(t, rep.Handled, 2)
	assert.Equal(t, Refused, rep.Handled[0].Outcome)
	assert.Equal(t, "CLR-42-001 has no option 3: its options are 1. Exponential backoff; 2. A fixed delay", rep.Handled[0].Reason)
	assert.Equal(t, Taken, rep.Handled[1].Outcome)
	assert.Equal(t, 2, rep.Handled[1].Option)
	c := e.get(rec.ID)
	assert.Equal(t, "A fixed delay\n\nbut only on weekends", c.RoundAnswer())
	assert.Equal(t, &ledger.Choice{Entry: len(c.Thread) - 1, Option: 2, Text: "A fixed delay"}, c.ChoiceAt(len(c.Thread)-1))

	// An escalation: #1 accepts the answer.
	rec2, err := e.hub.Ask(ctx, router.AskRequest{Issue: 42, From: "engineer", To: "architect", Topic: "Tenancy", Question: "Schema per tenant?"})
	require.NoError(t, err)
	_, err = e.hub.Answer(ctx, rec2.ID, "architect", "One schema.")
	require.NoError(t, err)
	_, err = e.hub.Escalate(ctx, rec2.ID, "they disagree")
	require.NoError(t, err)
	e.push(e.mirror())
	cs := e.fake.Comments(42)
	assert.Contains(t, cs[len(cs)-1].Body, "Or pick one of its 2 options: `/resolve CLR-42-002 #N`")
	e.fake.AddComment(42, "maintainer", "User", "MEMBER", "/resolve CLR-42-002 #1")
	e.now = e.now.Add(time.Minute)
	rep, err = e.mirror().Poll(ctx, true)
	require.NoError(t, err)
	require.Len(t, rep.Handled, 1, "%+v", rep.Handled)
	assert.Equal(t, Taken, rep.Handled[0].Outcome, rep.Handled[0].Reason)
	c = e.get(rec2.ID)
	assert.Equal(t, ledger.Resolved, c.Status)
	assert.Contains(t, c.Thread[len(c.Thread)-1].Body, "Decision: accept architect's answer:\nOne schema.")
	assert.Equal(t, 1, c.ChoiceAt(len(c.Thread)-1).Option)
}
