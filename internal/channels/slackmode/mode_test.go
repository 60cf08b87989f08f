package slackmode

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
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/channels/slackmode/slackfake"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

const (
	channel = "C0123ABCD"
	alice   = "U0ALICE01"
	mallory = "U0MALLORY"
)

type env struct {
	t    *testing.T
	fake *slackfake.Server
	hub  *router.Hub
	// the clock: read by the fake, the store and the client's transport
	// (a listener's reconnect too, on its own goroutine)
	mu  sync.Mutex
	now time.Time
}

// newEnv is a workspace in Slack mode against a fresh fake.
func newEnv(t *testing.T) *env {
	t.Helper()
	fake := slackfake.New(channel)
	t.Cleanup(fake.Close)
	cfg := fmt.Sprintf("[slack]\nchannel = %q\nanswerers = [%q]\napi_url = %q\ninterval = \"1m\"\n", channel, alice, fake.APIURL())
	dir, rules := testenv.Workspace(t, cfg)
	e := &env{t: t, fake: fake, now: time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)}
	fake.SetClock(e.clock)
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, e.clock)
	e.hub = router.New(store, rules, dir)
	e.hub.Warn = func(err error) { t.Errorf("hub warning: %v", err) }
	return e
}

// mode is one agentx process's view: its own client, sharing the
// workspace's rate limit as Open makes it.
func (e *env) mode() *Mode {
	c := NewClient(e.fake.APIURL(), slackfake.BotToken, nil)
	m := &Mode{Hub: e.hub, Config: e.hub.Rules().Config.Slack, Client: c,
		Warn: func(err error) { e.t.Errorf("slack warning: %v", err) }}
	c.Now, c.Warn, c.Hold = e.hub.Store.Now, m.Warn, m.hold()
	return m
}

func (e *env) ask(to string, options ...string) router.Record {
	rec, err := e.hub.Ask(context.Background(), router.AskRequest{Issue: 42, From: "engineer", To: to, Topic: "Retries",
		Question: "Exponential backoff or a fixed delay? <!channel> @here <https://evil.example|click>", Options: options})
	require.NoError(e.t, err)
	return rec
}

func (e *env) push(m *Mode) PushReport {
	rep, err := m.Push(context.Background(), true)
	require.NoError(e.t, err)
	return rep
}

func (e *env) poll(m *Mode) PollReport {
	rep, err := m.Poll(context.Background(), true)
	require.NoError(e.t, err)
	return rep
}

func (e *env) get(id string) *ledger.Clarification {
	c, err := e.hub.Store.Get(id)
	require.NoError(e.t, err)
	return c
}

// thread is the Slack thread recorded on clarification id, or nil.
func (e *env) thread(id string) *chanref.SlackThread {
	th, err := chanref.SlackThreadOf(e.get(id))
	require.NoError(e.t, err)
	return th
}

// TestQuestionPostedOnce proves the question to a person becomes one
// message, with the PRD's content escaped for mrkdwn, its channel and ts
// in the ledger, and the clarification id in its metadata.
func TestQuestionPostedOnce(t *testing.T) {
	e := newEnv(t)
	rec := e.ask(ledger.Human, "Exponential backoff", "A fixed delay")
	m := e.mode()
	rep := e.push(m)
	require.Len(t, rep.Issues, 1)
	assert.Equal(t, 1, rep.Issues[0].Posted)
	e.push(m)

	ms := e.fake.Messages(channel)
	require.Len(t, ms, 1, "posted once")
	text := ms[0].Text
	assert.Contains(t, text, "*Clarification CLR-42-001* for a person")
	assert.Contains(t, text, "issue #42 · engineer asks human · topic: Retries · blocking")
	assert.Contains(t, text, "1. Exponential backoff\n2. A fixed delay\n")
	assert.Contains(t, text, "If nobody answers by <!date^")
	assert.Contains(t, text, "&lt;!channel&gt; @\u200bhere &lt;https://evil.example|click&gt;", "no mention, no forged link")
	assert.NotContains(t, text, "<!channel>")
	assert.JSONEq(t, `{"event_type":"agentx_clarification","event_payload":{"id":"CLR-42-001","entry":0}}`, string(ms[0].Meta))

	th := e.thread(rec.ID)
	require.NotNil(t, th)
	assert.Equal(t, channel, th.Channel)
	assert.Equal(t, ms[0].TS, th.TS)
	assert.Equal(t, []chanref.SlackPost{{Entry: 0, TS: ms[0].TS}}, th.Posts)
}

// TestNoDoublePostAfterCrash proves a process that dies between posting
// and recording does not post twice: the next run finds the message by
// its metadata.
func TestNoDoublePostAfterCrash(t *testing.T) {
	e := newEnv(t)
	e.ask(ledger.Human)
	crashAfterPost = func() error { return errors.New("killed") }
	_, err := e.mode().Push(context.Background(), true)
	crashAfterPost = nil
	require.Error(t, err)
	require.Len(t, e.fake.Messages(channel), 1)

	rep := e.push(e.mode())
	require.Len(t, rep.Issues, 1)
	assert.Equal(t, 0, rep.Issues[0].Posted)
	assert.Equal(t, 1, rep.Issues[0].Found)
	assert.Len(t, e.fake.Messages(channel), 1, "not posted again")
	assert.Equal(t, e.fake.Messages(channel)[0].TS, e.thread("CLR-42-001").TS)

	// The same in a thread: the answer to a post is lost.
	_, err = e.hub.Escalate(context.Background(), "CLR-42-001", "nobody answers")
	require.NoError(t, err)
	e.fake.LosePost()
	_, err = e.mode().Push(context.Background(), true)
	require.Error(t, err)
	rep = e.push(e.mode())
	assert.Equal(t, 1, rep.Issues[0].Found)
	assert.Len(t, e.fake.Messages(channel), 2)
}

// TestRepliesAnswerAndFollowUp proves the first allowed reply answers, a
// later one is a further answer of the round, each taken once however
// many processes read it; bots, agentx's own messages and strangers are
// ignored, a stranger told so once (ephemeral).
func TestRepliesAnswerAndFollowUp(t *testing.T) {
	e := newEnv(t)
	rec := e.ask(ledger.Human)
	e.push(e.mode())
	root := e.thread(rec.ID).TS

	e.fake.Reply(channel, root, "", "a bot without a user", true)
	e.fake.Reply(channel, root, "U0OTHERBOT", "bots do not answer", true)
	e.fake.Reply(channel, root, mallory, "A fixed delay of 0 s.", false)
	first := e.fake.Reply(channel, root, alice, "Exponential, capped at 30 s.", false)
	second := e.fake.Reply(channel, root, alice, "And jitter, please.", false)

	a, b := e.mode(), e.mode()
	rep := e.poll(a)
	e.poll(b) // another process reads the same replies: nothing twice
	e.poll(a)
	assert.Equal(t, 1, rep.Threads)
	require.Len(t, rep.Handled, 3)
	assert.Equal(t, Ignored, rep.Handled[0].Outcome)
	assert.Equal(t, Taken, rep.Handled[1].Outcome)
	assert.Equal(t, Taken, rep.Handled[2].Outcome)

	c := e.get(rec.ID)
	assert.Equal(t, ledger.Answered, c.Status)
	assert.Equal(t, "Exponential, capped at 30 s.\n\nAnd jitter, please.", c.RoundAnswer())
	assert.Equal(t, "slack:"+alice, c.PersonAt(1))
	assert.Equal(t, []chanref.SlackPost{{Entry: 0, TS: root}, {Entry: 1, TS: first, Inbound: true}, {Entry: 2, TS: second, Inbound: true}}, e.thread(rec.ID).Posts)
	eph := e.fake.Ephemerals()
	require.Len(t, eph, 1, "the stranger is told once")
	assert.Equal(t, mallory, eph[0].User)
	assert.Equal(t, root, eph[0].ThreadTS)
	assert.Contains(t, eph[0].Text, "only the people listed in [slack] answerers answer here")

	// Answers taken from the thread are not posted back into it.
	e.push(e.mode())
	assert.Len(t, e.fake.Messages(channel), 6)
}

// TestOptionReply proves a reply naming an option answers with it.
func TestOptionReply(t *testing.T) {
	e := newEnv(t)
	rec := e.ask(ledger.Human, "Exponential backoff", "A fixed delay")
	e.push(e.mode())
	e.fake.Reply(channel, e.thread(rec.ID).TS, alice, "2", false)
	rep := e.poll(e.mode())
	require.Len(t, rep.Handled, 1)
	assert.Equal(t, 2, rep.Handled[0].Option)
	assert.Equal(t, "A fixed delay", e.get(rec.ID).RoundAnswer())
}

// TestThreadFollowsTheClarification proves what happens elsewhere is said
// in the thread: a follow-up, an answer from a shell, an assumption, the
// resolution; and an escalation of a question between agents opens a
// thread a person settles with a reply.
func TestThreadFollowsTheClarification(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rec := e.ask(ledger.Human)
	m := e.mode()
	e.push(m)
	_, err := e.hub.Assume(ctx, rec.ID, "engineer", "a fixed delay, as the README says")
	require.NoError(t, err)
	rep := e.poll(m)
	assert.Equal(t, 1, rep.Told)
	e.poll(m)
	_, err = e.hub.Answer(ctx, rec.ID, ledger.Human, "Exponential.")
	require.NoError(t, err)
	_, err = e.hub.Followup(ctx, rec.ID, "engineer", "Capped where?")
	require.NoError(t, err)
	_, err = e.hub.Cancel(ctx, rec.ID, "engineer")
	require.NoError(t, err)
	e.push(m)
	var texts []string
	for _, msg := range e.fake.Messages(channel) {
		texts = append(texts, msg.Text)
	}
	require.Len(t, texts, 5, "%q", texts)
	assert.Contains(t, texts[1], "*engineer proceeds on its own* (round 1): it assumes\n> a fixed delay, as the README says")
	assert.Contains(t, texts[2], "*Answer* (round 1) from a person, given outside this thread\n> Exponential.")
	assert.Contains(t, texts[3], "*Follow-up CLR-42-001, round 2 of")
	assert.Contains(t, texts[4], "*Cancelled: no answer is needed any more*")

	// A question between agents has no thread until it escalates.
	rec2, err := e.hub.Ask(ctx, router.AskRequest{Issue: 42, From: "engineer", To: "architect", Topic: "Tenancy", Question: "Schema per tenant?"})
	require.NoError(t, err)
	e.push(m)
	assert.Nil(t, e.thread(rec2.ID))
	_, err = e.hub.Escalate(ctx, rec2.ID, "the architect is away")
	require.NoError(t, err)
	e.push(m)
	th := e.thread(rec2.ID)
	require.NotNil(t, th)
	ms := e.fake.Messages(channel)
	assert.Contains(t, ms[len(ms)-1].Text, ":rotating_light: *ESCALATED: CLR-42-002 needs a human decision* · the architect is away\nissue #42 · engineer asks architect")
	e.fake.Reply(channel, th.TS, alice, "decision: schema per tenant", false)
	e.poll(m)
	c := e.get(rec2.ID)
	assert.Equal(t, ledger.Resolved, c.Status)
	assert.Equal(t, "slack:"+alice, c.PersonAt(len(c.Thread)-1))
}

// TestSlackFailures proves a rate limit holds every call until its
// Retry-After, and an outage or a bad token queues the work with backoff:
// nothing is lost, and the next run posts it.
func TestSlackFailures(t *testing.T) {
	e := newEnv(t)
	e.ask(ledger.Human)
	m := e.mode()
	e.fake.Fail(1, 429, 120, "")
	rep, err := m.Push(context.Background(), false)
	var we *WaitError
	require.ErrorAs(t, err, &we)
	until, ok := relay.WaitOf(err)
	require.True(t, ok)
	assert.WithinDuration(t, e.clock().Add(120*time.Second), until, 5*time.Second)
	assert.Equal(t, []int{42}, rep.Behind)
	st, err := m.Status()
	require.NoError(t, err)
	require.Len(t, st.Behind, 1)
	assert.Equal(t, 1, st.Behind[0].Unmirrored)
	assert.NotNil(t, st.WaitUntil)

	// held: no call until it lifts
	before := e.fake.Requests
	_, err = m.Push(context.Background(), false)
	require.NoError(t, err)
	assert.Equal(t, before, e.fake.Requests)

	// a forced push waits for it too; then an outage, then a bad token:
	// errors, queued
	_, err = m.Push(context.Background(), true)
	require.ErrorAs(t, err, &we)
	assert.Equal(t, before, e.fake.Requests, "held: not sent")
	e.advance(2 * time.Minute)
	e.fake.Fail(1, 503, 0, "")
	_, err = m.Push(context.Background(), true)
	require.Error(t, err)
	e.fake.Fail(1, 200, 0, "invalid_auth")
	_, err = m.Push(context.Background(), true)
	require.ErrorContains(t, err, "invalid_auth")
	assert.Empty(t, e.fake.Messages(channel))

	rep = e.push(m)
	assert.Equal(t, 1, rep.Issues[0].Posted)
	assert.Empty(t, rep.Behind)

	// reading: a rate limit is kept, and the throttle holds reads
	e.fake.Fail(1, 429, 30, "")
	_, err = m.Poll(context.Background(), true)
	require.Error(t, err)
	prep, err := m.Poll(context.Background(), false)
	require.NoError(t, err)
	assert.Contains(t, prep.Skipped, "Slack rate limit")
}

// TestListenReconnectRereads proves the Socket Mode listener re-reads
// every open thread when it connects, so a reply made while it was not
// connected is taken, and a reply event is taken at once.
func TestListenReconnectRereads(t *testing.T) {
	e := newEnv(t)
	rec := e.ask(ledger.Human)
	e.push(e.mode())
	root := e.thread(rec.ID).TS
	e.fake.Reply(channel, root, alice, "Exponential.", false) // before anyone listens

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan ListenEvent, 100)
	done := make(chan error, 1)
	go func() {
		done <- e.mode().Listen(ctx, slackfake.AppToken, func(ev ListenEvent) { events <- ev })
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for !ok() {
			select {
			case ev := <-events:
				if ev.What == "error" {
					t.Logf("listener: %v", ev.Err)
				}
			case <-deadline:
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("the reply made before connecting", func() bool { return e.get(rec.ID).Status == ledger.Answered })

	// an event: taken at once, and acknowledged
	e.fake.Reply(channel, root, alice, "With jitter.", false)
	waitFor("the reply event", func() bool { return strings.Contains(e.get(rec.ID).RoundAnswer(), "With jitter.") })
	_, acked := e.fake.Connects()
	assert.NotEmpty(t, acked)

	// dropped: what is said meanwhile is read when it reconnects
	e.fake.Drop()
	e.fake.Reply(channel, root, alice, "Capped at 30 s.", false)
	waitFor("the reconnect and re-read", func() bool {
		n, _ := e.fake.Connects()
		return n >= 2 && strings.Contains(e.get(rec.ID).RoundAnswer(), "Capped at 30 s.")
	})
	assert.Equal(t, 3, strings.Count(e.get(rec.ID).RoundAnswer(), "\n\n")+1, "each reply once")
	cancel()
	require.NoError(t, <-done)

	// a bad app token ends it with an error
	err := e.mode().Listen(context.Background(), "xapp-wrong", func(ListenEvent) {})
	require.Error(t, err)
}

// TestRateLimitHoldsEveryCall: after a 429, no Slack call is made until
// its Retry-After has passed, whoever makes it: a sync run by hand
// (forced) in the process that got the 429, another process (its own
// client, the hold read from the workspace), each kind of call. An
// unforced run skips quietly meanwhile; once the wait is over, calls go
// out again. A sync by hand used to read the threads
// (conversations.replies) while a 429 on a post still held.
func TestRateLimitHoldsEveryCall(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rec := e.ask(ledger.Human)
	first := e.mode()
	e.push(first) // the thread, to read
	e.fake.Fail(1, 429, 30, "")
	e.ask(ledger.Human)
	_, err := first.Push(ctx, true)
	var we *WaitError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, e.clock().Add(30*time.Second), we.Until)
	th := e.thread(rec.ID)
	require.NotNil(t, th)

	sent := e.fake.Requests
	calls := []struct {
		name string
		call func(m *Mode) error
	}{
		{"a sync by hand: its post", func(m *Mode) error { _, err := m.Push(ctx, true); return err }},
		{"a sync by hand: its read", func(m *Mode) error { _, err := m.Poll(ctx, true); return err }},
		{"conversations.replies", func(m *Mode) error { _, err := m.Client.Replies(ctx, th.Channel, th.TS, ""); return err }},
		{"conversations.history", func(m *Mode) error { _, err := m.Client.History(ctx, channel, e.clock()); return err }},
		{"chat.postEphemeral", func(m *Mode) error { return m.Client.Ephemeral(ctx, channel, alice, th.TS, "x") }},
		{"auth.test", func(m *Mode) error { _, err := m.Client.Self(ctx); return err }},
	}
	for _, who := range []struct {
		name string
		m    *Mode
	}{{"the process that got the 429", first}, {"another process", e.mode()}} {
		for _, c := range calls {
			t.Run(who.name+"/"+c.name, func(t *testing.T) {
				err := c.call(who.m)
				until, held := relay.WaitOf(err)
				require.True(t, held, "held: %v", err)
				assert.Equal(t, e.clock().Add(30*time.Second), until)
				assert.Equal(t, sent, e.fake.Requests, "nothing sent")
			})
		}
	}
	assert.Zero(t, e.fake.Calls("conversations.replies"), "no thread read while held")

	// an unforced run skips quietly
	rep, err := e.mode().Poll(ctx, false)
	require.NoError(t, err)
	assert.Equal(t, "Slack rate limit: not before 2026-02-26T10:00:30Z", rep.Skipped)
	prep, err := e.mode().Push(ctx, false)
	require.NoError(t, err)
	assert.Empty(t, prep.Issues)
	st, err := e.mode().Status()
	require.NoError(t, err)
	require.NotNil(t, st.WaitUntil)
	assert.Equal(t, e.clock().Add(30*time.Second), st.WaitUntil.Time)
	assert.Equal(t, sent, e.fake.Requests)

	// the wait over, calls go out again
	e.advance(30 * time.Second)
	assert.Equal(t, 1, e.push(e.mode()).Issues[0].Posted)
	e.poll(first)
	assert.NotZero(t, e.fake.Calls("conversations.replies"))
}

// clock is the test's time, as every reader sees it.
func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

// advance moves the test's time on by d.
func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}
