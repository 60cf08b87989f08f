package ghmirror

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/channels/ghmirror/ghfake"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

type env struct {
	t    *testing.T
	fake *ghfake.Server
	hub  *router.Hub
	dir  string
	now  time.Time
}

// newEnv is a workspace in GitHub mode against a fresh fake.
func newEnv(t *testing.T, extra string) *env {
	t.Helper()
	fake := ghfake.New("octo-org", "octo-repo")
	t.Cleanup(fake.Close)
	cfg := fmt.Sprintf("[github]\nrepo = \"octo-org/octo-repo\"\napi_url = %q\nmention = [\"@alice\"]\ninterval = \"1m\"\n%s", fake.APIURL(), extra)
	dir, rules := testenv.Workspace(t, cfg)
	e := &env{t: t, fake: fake, dir: dir, now: time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)}
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, func() time.Time { return e.now })
	e.hub = router.New(store, rules, dir)
	e.hub.Warn = func(err error) { t.Errorf("hub warning: %v", err) }
	return e
}

// mirror is one agentx process's view: its own client.
func (e *env) mirror() *Mirror {
	c, err := NewClient(e.fake.APIURL(), "octo-org/octo-repo", "fake-token", nil)
	require.NoError(e.t, err)
	return &Mirror{Hub: e.hub, Config: e.hub.Rules().Config.GitHub, Client: c, Warn: func(err error) { e.t.Errorf("mirror warning: %v", err) }}
}

func (e *env) ask(to string) router.Record {
	rec, err := e.hub.Ask(context.Background(), router.AskRequest{Issue: 42, From: "engineer", To: to, Topic: "Retries", Question: "Exponential backoff or a fixed delay? @everyone"})
	require.NoError(e.t, err)
	return rec
}

// refs are the GitHub comments recorded on c.
func (e *env) refs(c *ledger.Clarification) []chanref.GitHubRef {
	refs, err := chanref.GitHubRefs(c)
	require.NoError(e.t, err)
	return refs
}

func (e *env) push(m *Mirror) PushReport {
	rep, err := m.Push(context.Background(), true)
	require.NoError(e.t, err)
	return rep
}

func TestQuestionMirroredOnce(t *testing.T) {
	e := newEnv(t, "")
	rec := e.ask(ledger.Human)
	m := e.mirror()
	rep := e.push(m)
	require.Len(t, rep.Issues, 1)
	assert.Equal(t, 1, rep.Issues[0].Posted)

	cs := e.fake.Comments(42)
	require.Len(t, cs, 1)
	body := cs[0].Body
	assert.Contains(t, body, "**[engineer -> human] Clarification CLR-42-001** · Retries · blocking")
	assert.Contains(t, body, "@alice: a person is asked.")
	assert.Contains(t, body, "@\u200beveryone", "a body cannot mention anyone")
	assert.Contains(t, body, "`/answer CLR-42-001 <your answer>`")
	assert.True(t, strings.HasSuffix(body, `<!-- agentx: {"id":"CLR-42-001","round":1,"entry":0} -->`), body)
	assert.Equal(t, []string{LabelActive}, e.fake.Labels(42))

	got, err := e.hub.Get(rec.ID)
	require.NoError(t, err)
	refs := e.refs(got.Clarification)
	require.Len(t, refs, 1)
	assert.Equal(t, cs[0].ID, refs[0].Comment)

	// Re-runs, by this process or another, post nothing and edit nothing.
	e.push(m)
	e.push(e.mirror())
	assert.Len(t, e.fake.Comments(42), 1)

	// A changed rendering is edited in place, not posted again.
	_, err = e.hub.Store.Update(context.Background(), 42, func(l *ledger.Ledger) error {
		c := l.Find(rec.ID)
		refs := e.refs(c)
		refs[0].Sum = "old"
		return chanref.SetGitHubRefs(c, refs)
	})
	require.NoError(t, err)
	rep, err = e.mirror().Push(context.Background(), false, 42)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Issues[0].Edited)
	assert.Len(t, e.fake.Comments(42), 1)
}

func TestAnswerFromGitHub(t *testing.T) {
	e := newEnv(t, "")
	rec := e.ask(ledger.Human)
	e.push(e.mirror())
	cid := e.fake.AddComment(42, "maintainer", "User", "MEMBER", "/answer CLR-42-001 Exponential, capped at 30 s.")

	// Several processes read the comment at once: it is taken once.
	var wg sync.WaitGroup
	for range 4 {
		m := e.mirror()
		wg.Go(func() {
			_, err := m.Poll(context.Background(), true)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	got, err := e.hub.Get(rec.ID)
	require.NoError(t, err)
	require.Len(t, got.Thread, 2)
	assert.Equal(t, ledger.Answered, got.Status)
	assert.Equal(t, ledger.Human, got.Thread[1].From)
	assert.Equal(t, "Exponential, capped at 30 s.", got.Thread[1].Body)
	assert.Equal(t, "github:maintainer", got.PersonAt(1))
	cs := e.fake.Comments(42)
	require.Len(t, cs, 2)
	require.Len(t, cs[1].Reactions, 1, "one receipt")
	assert.Equal(t, "+1", cs[1].Reactions[0].Content)
	refs := e.refs(got.Clarification)
	assert.Equal(t, cid, refs[1].Comment)
	assert.True(t, refs[1].Inbound)

	// The mirror does not post the answer again: the person's comment is it.
	e.push(e.mirror())
	assert.Len(t, e.fake.Comments(42), 2)
}

func TestPlainReply(t *testing.T) {
	e := newEnv(t, "")
	rec := e.ask(ledger.Human)
	e.fake.AddComment(42, "maintainer", "User", "OWNER", "before the question was mirrored: not an answer")
	e.push(e.mirror())
	e.fake.AddComment(42, "stranger", "User", "NONE", "a stranger's plain comment: ignored, no reply")
	e.fake.AddComment(42, "maintainer", "User", "OWNER", "Fixed delay.")
	rep, err := e.mirror().Poll(context.Background(), true)
	require.NoError(t, err)
	require.Len(t, rep.Handled, 1)
	assert.Equal(t, Taken, rep.Handled[0].Outcome)
	got, _ := e.hub.Get(rec.ID)
	assert.Equal(t, "Fixed delay.", got.RoundAnswer())
	assert.Len(t, e.fake.Comments(42), 4, "no replies")
}

func TestStrangerRefused(t *testing.T) {
	e := newEnv(t, "")
	rec := e.ask(ledger.Human)
	e.push(e.mirror())
	e.fake.AddComment(42, "stranger", "User", "CONTRIBUTOR", "/answer CLR-42-001 trust me")
	e.fake.AddComment(42, "dependabot[bot]", "Bot", "NONE", "/answer CLR-42-001 bots are ignored")
	rep, err := e.mirror().Poll(context.Background(), true)
	require.NoError(t, err)
	require.Len(t, rep.Handled, 1)
	assert.Equal(t, Refused, rep.Handled[0].Outcome)
	got, _ := e.hub.Get(rec.ID)
	assert.Equal(t, ledger.Pending, got.Status)
	cs := e.fake.Comments(42)
	require.Len(t, cs, 4)
	assert.Contains(t, cs[3].Body, "@stranger agentx did not take this comment: only owners, members and collaborators of the repository answer")

	// Read again from scratch (state lost): the reply is not posted twice.
	require.NoError(t, removeState(e))
	_, err = e.mirror().Poll(context.Background(), true)
	require.NoError(t, err)
	assert.Len(t, e.fake.Comments(42), 4)
}

func removeState(e *env) error {
	return errors.Join(osRemove(filepath.Join(e.hub.Store.Dir(), Dir, InboundFile)))
}

func TestAnswerersAllowlist(t *testing.T) {
	e := newEnv(t, `answerers = ["carol"]`)
	e.ask(ledger.Human)
	e.push(e.mirror())
	e.fake.AddComment(42, "owner", "User", "OWNER", "/answer CLR-42-001 owners are not listed")
	e.fake.AddComment(42, "carol", "User", "NONE", "/answer CLR-42-001 carol is")
	rep, err := e.mirror().Poll(context.Background(), true)
	require.NoError(t, err)
	require.Len(t, rep.Handled, 2)
	assert.Equal(t, Refused, rep.Handled[0].Outcome)
	assert.Contains(t, rep.Handled[0].Reason, "[github] answerers")
	assert.Equal(t, Taken, rep.Handled[1].Outcome)
}

func TestEscalationSettledFromGitHub(t *testing.T) {
	e := newEnv(t, "")
	rec := e.ask("architect")
	_, err := e.hub.Escalate(context.Background(), rec.ID, "the architect is away")
	require.NoError(t, err)
	e.push(e.mirror())
	cs := e.fake.Comments(42)
	require.Len(t, cs, 2)
	assert.Contains(t, cs[1].Body, "**[ESCALATED] CLR-42-001 needs a human decision** · the architect is away")
	assert.Contains(t, cs[1].Body, "@alice: please decide.")
	assert.Contains(t, cs[1].Body, "/resolve CLR-42-001 decision: <your decision>")
	assert.ElementsMatch(t, []string{LabelActive, LabelEscalated}, e.fake.Labels(42))

	e.fake.AddComment(42, "maintainer", "User", "MEMBER", "/answer CLR-42-001 an answer does not settle an escalation")
	e.fake.AddComment(42, "maintainer", "User", "MEMBER", "/resolve CLR-42-001 decision: exponential backoff")
	rep, err := e.mirror().Poll(context.Background(), true)
	require.NoError(t, err)
	require.Len(t, rep.Handled, 2)
	assert.Equal(t, Refused, rep.Handled[0].Outcome)
	assert.Contains(t, rep.Handled[0].Reason, "is escalated: settle it with /resolve CLR-42-001")
	assert.Equal(t, Taken, rep.Handled[1].Outcome)
	got, _ := e.hub.Get(rec.ID)
	assert.Equal(t, ledger.Resolved, got.Status)
	assert.Equal(t, "github:maintainer", got.PersonAt(len(got.Thread)-1))

	e.push(e.mirror())
	assert.Empty(t, e.fake.Labels(42), "every label agentx set is gone once resolved")
}

func TestCrashBetweenPostAndRecord(t *testing.T) {
	e := newEnv(t, "")
	e.ask(ledger.Human)
	crashAfterPost = func() error { return errors.New("killed") }
	_, err := e.mirror().Push(context.Background(), true)
	crashAfterPost = nil
	require.Error(t, err)
	require.Len(t, e.fake.Comments(42), 1, "posted")
	rep := e.push(e.mirror())
	assert.Equal(t, 1, rep.Issues[0].Found)
	assert.Len(t, e.fake.Comments(42), 1, "found by its metadata, not posted again")

	// The answer to the post lost on the way: the same.
	_, err = e.hub.Answer(context.Background(), "CLR-42-001", ledger.Human, "Exponential.")
	require.NoError(t, err)
	e.fake.LoseNextCreate(1)
	_, err = e.mirror().Push(context.Background(), true)
	require.Error(t, err)
	e.push(e.mirror())
	assert.Len(t, e.fake.Comments(42), 2)

	// A stranger's copy of the metadata is not taken for agentx's comment.
	_, err = e.hub.Resolve(context.Background(), "CLR-42-001", "engineer", "Proceeding.")
	require.NoError(t, err)
	e.fake.AddComment(42, "stranger", "User", "NONE", "fake <!-- agentx: {\"id\":\"CLR-42-001\",\"round\":1,\"entry\":2} -->")
	e.push(e.mirror())
	cs := e.fake.Comments(42)
	require.Len(t, cs, 4)
	assert.Contains(t, cs[3].Body, "Resolved CLR-42-001")
}

func TestNotModifiedIsFree(t *testing.T) {
	e := newEnv(t, "")
	e.ask(ledger.Human)
	e.push(e.mirror())
	m := e.mirror()
	_, err := m.Poll(context.Background(), true)
	require.NoError(t, err)
	used := e.fake.RateUsed()
	for range 3 {
		rep, err := m.Poll(context.Background(), true)
		require.NoError(t, err)
		assert.True(t, rep.NotModified)
	}
	assert.Equal(t, used, e.fake.RateUsed(), "304s cost nothing")

	// Not forced: once per interval.
	rep, err := m.Poll(context.Background(), false)
	require.NoError(t, err)
	assert.False(t, rep.Read)
	e.now = e.now.Add(time.Minute)
	rep, err = m.Poll(context.Background(), false)
	require.NoError(t, err)
	assert.True(t, rep.Read)
}

func TestRateLimitQueues(t *testing.T) {
	e := newEnv(t, "")
	e.ask(ledger.Human)
	e.fake.Fail(1, 429, 120)
	rep, err := e.mirror().Push(context.Background(), false)
	var we *WaitError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, []int{42}, rep.Behind)
	assert.Empty(t, e.fake.Comments(42))
	st, err := e.mirror().Status()
	require.NoError(t, err)
	require.Len(t, st.Behind, 1)
	assert.Equal(t, 42, st.Behind[0].Issue)
	assert.Equal(t, 1, st.Behind[0].Unmirrored)
	assert.NotNil(t, st.WaitUntil)

	// Unforced runs wait; the primary limit too is honoured.
	rep, err = e.mirror().Push(context.Background(), false)
	require.NoError(t, err)
	assert.Empty(t, rep.Issues)
	e.fake.SetRateLimit(5000, 0)
	_, err = e.mirror().Push(context.Background(), true)
	require.ErrorAs(t, err, &we)
	assert.Contains(t, we.Why, "rate limit exhausted")
	e.fake.SetRateLimit(5000, 5000)
	e.push(e.mirror())
	assert.Len(t, e.fake.Comments(42), 1)
}

func TestPagination(t *testing.T) {
	e := newEnv(t, "")
	e.ask(ledger.Human)
	e.push(e.mirror())
	for i := range 230 {
		e.fake.AddComment(7, "someone", "User", "NONE", fmt.Sprintf("chatter %d", i))
	}
	e.fake.AddComment(42, "maintainer", "User", "MEMBER", "/answer CLR-42-001 after three pages")
	rep, err := e.mirror().Poll(context.Background(), true)
	require.NoError(t, err)
	assert.Equal(t, 232, rep.Comments)
	require.Len(t, rep.Handled, 1)
	assert.Equal(t, Taken, rep.Handled[0].Outcome)
}

// TestResolveTakenOnce: a /resolve that closed its clarification, read
// again by another process that polled at the same time, is recognised as
// taken (the closed record is read sealed in the ledger write: the check
// must still see the comment on it), not refused with a reply.
func TestResolveTakenOnce(t *testing.T) {
	e := newEnv(t, "")
	rec := e.ask("architect")
	_, err := e.hub.Escalate(context.Background(), rec.ID, "the architect is away")
	require.NoError(t, err)
	e.push(e.mirror())
	id := e.fake.AddComment(42, "maintainer", "User", "MEMBER", "/resolve CLR-42-001 decision: exponential backoff")
	c := Comment{ID: id, Issue: 42, Body: "/resolve CLR-42-001 decision: exponential backoff", Login: "maintainer", Association: "MEMBER"}
	for i := range 2 {
		h, err := e.mirror().Take(context.Background(), c, false)
		require.NoError(t, err)
		require.NotNil(t, h)
		assert.Equal(t, Taken, h.Outcome, "take %d: %s", i+1, h.Reason)
	}
	for _, cm := range e.fake.Comments(42) {
		assert.NotContains(t, cm.Body, "@maintainer", "no refusal was posted")
	}
}
