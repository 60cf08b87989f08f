package slackmode

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/channels/slackmode/slackfake"
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

// TestThreadTSNeverShared proves a thread ts Slack gives a second time is
// not bound to a second clarification: a reply in that thread answers the
// one it belongs to, and does not settle the other (which a server that
// reused timestamps made happen), which gets a thread of its own.
func TestThreadTSNeverShared(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, err := e.hub.Ask(ctx, router.AskRequest{Issue: 1, From: "engineer", To: ledger.Human, Topic: "Retries", Question: "Backoff?"})
	require.NoError(t, err)
	e.push(e.mode())
	b, err := e.hub.Ask(ctx, router.AskRequest{Issue: 2, From: "engineer", To: "architect", Topic: "Tenancy", Question: "Schema per tenant?"})
	require.NoError(t, err)
	_, err = e.hub.Escalate(ctx, b.ID, "the architect is away")
	require.NoError(t, err)
	e.fake.ReuseTS(1)
	_, err = e.mode().Push(ctx, true)
	var se *SharedError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, a.ID, se.Other)
	assert.Nil(t, e.thread(b.ID), "not bound to another clarification's thread")

	e.fake.Reply(channel, e.thread(a.ID).TS, alice, "Exponential backoff", false)
	e.poll(e.mode())
	assert.Equal(t, ledger.Answered, e.get(a.ID).Status)
	assert.Equal(t, ledger.Escalated, e.get(b.ID).Status, "one reply settles one clarification")

	e.push(e.mode())
	th := e.thread(b.ID)
	require.NotNil(t, th)
	assert.NotEqual(t, e.thread(a.ID).TS, th.TS, "posted again, in a thread of its own")
}

// TestSharedThreadReadForNone proves threads already recorded with one ts
// (before agentx refused it) are read for none of them, with a warning.
func TestSharedThreadReadForNone(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.ask(ledger.Human)
	e.push(e.mode())
	b, err := e.hub.Ask(ctx, router.AskRequest{Issue: 2, From: "engineer", To: ledger.Human, Topic: "Tenancy", Question: "Schema?"})
	require.NoError(t, err)
	_, err = e.hub.Store.Update(ctx, 2, func(l *ledger.Ledger) error {
		return chanref.SetSlackThread(l.Find(b.ID), &chanref.SlackThread{Channel: channel, TS: e.thread(a.ID).TS, Posts: []chanref.SlackPost{{Entry: 0, TS: e.thread(a.ID).TS}}})
	})
	require.NoError(t, err)
	e.fake.Reply(channel, e.thread(a.ID).TS, alice, "Yes", false)
	m := e.mode()
	var warned []string
	m.Warn = func(err error) { warned = append(warned, err.Error()) }
	rep := e.poll(m)
	assert.Zero(t, rep.Threads)
	assert.Equal(t, ledger.Pending, e.get(a.ID).Status)
	assert.Equal(t, ledger.Pending, e.get(b.ID).Status)
	require.Len(t, warned, 1)
	assert.Contains(t, warned[0], "is recorded for CLR-2-001 and CLR-42-001")
}

// TestSharedThreadKeepsItsPlace proves a thread read before it became
// shared keeps where its reading got to (inbound.json's threads and
// readAt): it is not read while shared, but it is not closed either.
func TestSharedThreadKeepsItsPlace(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.ask(ledger.Human)
	e.push(e.mode())
	e.fake.Reply(channel, e.thread(a.ID).TS, mallory, "Who asks?", false)
	m := e.mode()
	m.Warn = func(error) {}
	assert.Equal(t, 1, e.poll(m).Threads)
	var in Inbound
	require.NoError(t, m.file(InboundFile).Read(&in))
	last, readAt := in.Threads[a.ID], in.ReadAt[a.ID]
	require.NotEmpty(t, last)

	b, err := e.hub.Ask(ctx, router.AskRequest{Issue: 2, From: "engineer", To: ledger.Human, Topic: "Tenancy", Question: "Schema?"})
	require.NoError(t, err)
	_, err = e.hub.Store.Update(ctx, 2, func(l *ledger.Ledger) error {
		return chanref.SetSlackThread(l.Find(b.ID), &chanref.SlackThread{Channel: channel, TS: e.thread(a.ID).TS, Posts: []chanref.SlackPost{{Entry: 0, TS: e.thread(a.ID).TS}}})
	})
	require.NoError(t, err)
	e.advance(time.Minute)
	assert.Zero(t, e.poll(m).Threads)
	in = Inbound{}
	require.NoError(t, m.file(InboundFile).Read(&in))
	assert.Equal(t, last, in.Threads[a.ID])
	assert.Equal(t, readAt, in.ReadAt[a.ID])
}

// TestRefusedPostForgotten proves a post Slack refused (ok: false) leaves
// no note of a post in flight: the next sync posts it without reading the
// channel first. An outage, which may have posted it, keeps the note.
func TestRefusedPostForgotten(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.ask(ledger.Human)
	notes := relay.PostingIn(e.hub.Store.Dir(), Dir)
	e.fake.Fail(1, 200, 0, "not_in_channel")
	_, err := e.mode().Push(ctx, true)
	require.ErrorContains(t, err, "not_in_channel")
	lost, err := notes.Lost(42)
	require.NoError(t, err)
	assert.Empty(t, lost)
	history, _ := e.calls()
	assert.Equal(t, 1, e.push(e.mode()).Issues[0].Posted)
	after, _ := e.calls()
	assert.Equal(t, history, after, "posted without reading the channel")

	// A rate limit (429) posted nothing either: its note goes.
	e.ask(ledger.Human)
	e.fake.Fail(1, 429, 1, "")
	_, err = e.mode().Push(ctx, true)
	require.Error(t, err)
	lost, err = notes.Lost(42)
	require.NoError(t, err)
	assert.Empty(t, lost, "a rate-limited post leaves no note")
	e.advance(time.Second)                                // its Retry-After: a forced push waits for it too
	assert.Equal(t, 1, e.push(e.mode()).Issues[0].Posted) // then posts
	after, _ = e.calls()
	assert.Equal(t, history, after, "posted without reading the channel")

	rec := e.ask(ledger.Human)
	e.fake.Fail(1, 503, 0, "")
	_, err = e.mode().Push(ctx, true)
	require.Error(t, err)
	lost, err = notes.Lost(42)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{entryKey(rec.ID, 0): true}, lost)
	e.push(e.mode())
	after2, _ := e.calls()
	assert.Equal(t, after+1, after2, "read the channel to recover it")
	assert.Len(t, e.fake.Messages(channel), 3)
}

// TestOwnBotIsNoPerson proves a thread message from agentx's own bot user
// (its token is in every agent's environment) is never a person's answer,
// even without a bot_id and with [slack] answerers naming it; Slack is
// asked who the bot is once per client, only when a reply needs judging.
func TestOwnBotIsNoPerson(t *testing.T) {
	e := newEnv(t)
	rec := e.ask(ledger.Human)
	e.push(e.mode())
	m := e.mode()
	cfg := *m.Config
	cfg.Answerers = append([]string{slackfake.BotUser}, cfg.Answerers...)
	m.Config = &cfg
	assert.Zero(t, e.fake.Calls("auth.test"))
	e.fake.Reply(channel, e.thread(rec.ID).TS, slackfake.BotUser, "yes, deploy", false)
	rep := e.poll(m)
	assert.Equal(t, 1, rep.Replies)
	assert.Empty(t, rep.Handled)
	assert.Equal(t, ledger.Pending, e.get(rec.ID).Status)
	assert.Empty(t, e.fake.Ephemerals())

	e.fake.Reply(channel, e.thread(rec.ID).TS, alice, "no, wait", false)
	e.advance(time.Minute)
	e.poll(m)
	assert.Equal(t, "no, wait", e.get(rec.ID).RoundAnswer())
	assert.Equal(t, 1, e.fake.Calls("auth.test"))
}

// TestNumberedReplies proves a reply picks a question's or an
// escalation's option by number through the hub, which records the
// option's text and its number; a number not offered gets a notice naming
// the options.
func TestNumberedReplies(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rec := e.ask(ledger.Human, "Exponential backoff", "A fixed delay")
	e.push(e.mode())
	root := e.thread(rec.ID).TS
	e.fake.Reply(channel, root, alice, "#3", false)
	rep := e.poll(e.mode())
	require.Len(t, rep.Handled, 1)
	assert.Equal(t, Refused, rep.Handled[0].Outcome)
	eph := e.fake.Ephemerals()
	require.Len(t, eph, 1)
	assert.Contains(t, eph[0].Text, "CLR-42-001 has no option 3: its options are 1. Exponential backoff; 2. A fixed delay")
	assert.Equal(t, ledger.Pending, e.get(rec.ID).Status)

	e.fake.Reply(channel, root, alice, "#2 but only on weekends", false)
	e.advance(time.Minute)
	rep = e.poll(e.mode())
	require.Len(t, rep.Handled, 1)
	assert.Equal(t, Taken, rep.Handled[0].Outcome)
	c := e.get(rec.ID)
	assert.Equal(t, "A fixed delay\n\nbut only on weekends", c.RoundAnswer())
	assert.Equal(t, &ledger.Choice{Entry: len(c.Thread) - 1, Option: 2, Text: "A fixed delay"}, c.ChoiceAt(len(c.Thread)-1))

	// An escalation lists its options; "1" accepts the answer.
	rec2, err := e.hub.Ask(ctx, router.AskRequest{Issue: 2, From: "engineer", To: "architect", Topic: "Tenancy", Question: "Schema per tenant?"})
	require.NoError(t, err)
	_, err = e.hub.Answer(ctx, rec2.ID, "architect", "One schema.")
	require.NoError(t, err)
	_, err = e.hub.Escalate(ctx, rec2.ID, "they disagree")
	require.NoError(t, err)
	e.push(e.mode())
	ms := e.fake.Messages(channel)
	assert.Contains(t, ms[len(ms)-1].Text, "To pick one of its 2 options, reply with `#N`")
	e.fake.Reply(channel, e.thread(rec2.ID).TS, alice, "1", false)
	e.advance(time.Minute)
	e.poll(e.mode())
	c = e.get(rec2.ID)
	assert.Equal(t, ledger.Resolved, c.Status)
	assert.Contains(t, c.Thread[len(c.Thread)-1].Body, "Decision: accept architect's answer:\nOne schema.")
	assert.Equal(t, 1, c.ChoiceAt(len(c.Thread)-1).Option)
}

// TestThreadsReadInTurn proves that under Slack's limit for distributed
// apps (conversations.replies once a minute) every open thread is read in
// turn: a read stopped by the limit leaves the threads it did not reach
// first in line, so none starves.
func TestThreadsReadInTurn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.threeThreads()
	for _, id := range ids {
		e.fake.Reply(channel, e.thread(id).TS, alice, "Yes, for "+id, false)
	}
	e.fake.Limit("conversations.replies", 1, time.Minute)
	reads := 0
	for answered := 0; answered < 3; reads++ {
		require.Less(t, reads, 5, "every thread read within 5 minutes")
		_, err := e.mode().Poll(ctx, false)
		var we *WaitError
		if err != nil {
			require.ErrorAs(t, err, &we)
		}
		e.advance(time.Minute)
		answered = 0
		for _, id := range ids {
			if e.get(id).Status == ledger.Answered {
				answered++
			}
		}
	}
	assert.Equal(t, 3, reads, "one thread a minute, each in turn")
}

// TestListenerLeavesNothingToCommands proves that while the listener runs
// a command's read asks Slack for no thread, and that a reply event reads
// that reply's thread alone.
func TestListenerLeavesNothingToCommands(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.threeThreads()
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan ListenEvent, 100)
	done := make(chan error, 1)
	go func() { done <- e.mode().Listen(lctx, slackfake.AppToken, func(ev ListenEvent) { events <- ev }) }()
	waitRead := func() PollReport {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case ev := <-events:
				if ev.What == "read" {
					return *ev.Read
				}
			case <-deadline:
				t.Fatal("timed out waiting for the listener's read")
			}
		}
	}
	assert.Equal(t, 3, waitRead().Threads, "on connecting, every open thread")
	_, before := e.calls()
	e.fake.Reply(channel, e.thread(ids[1]).TS, alice, "Yes.", false)
	rep := waitRead()
	assert.Equal(t, 1, rep.Threads, "the reply's thread alone")
	_, after := e.calls()
	assert.Equal(t, 1, after-before)
	assert.Equal(t, ledger.Answered, e.get(ids[1]).Status)

	// A command's read leaves the threads to the listener.
	e.advance(time.Minute)
	prep, err := e.mode().Poll(ctx, false)
	require.NoError(t, err)
	assert.True(t, prep.Listening)
	assert.Zero(t, prep.Threads)
	_, after2 := e.calls()
	assert.Equal(t, after, after2)
	cancel()
	require.NoError(t, <-done)

	// Not heard from in three ticks: commands read again.
	e.advance(3 * time.Minute)
	prep, err = e.mode().Poll(ctx, false)
	require.NoError(t, err)
	assert.False(t, prep.Listening)
	assert.Equal(t, 3, prep.Threads)
}

// TestListenerSkipsBotEvents proves a bot's message in a thread (agentx's
// own posts among them) reads no thread: only a reply Take could act on
// costs a conversations.replies read.
func TestListenerSkipsBotEvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ids := e.threeThreads()
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan ListenEvent, 100)
	done := make(chan error, 1)
	go func() { done <- e.mode().Listen(lctx, slackfake.AppToken, func(ev ListenEvent) { events <- ev }) }()
	read := false
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for !ok() {
			select {
			case ev := <-events:
				read = read || ev.What == "read"
				if ev.What == "error" {
					t.Logf("listener: %v", ev.Err)
				}
			case <-deadline:
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("the read on connecting", func() bool { return read })
	_, before := e.calls()
	e.fake.Reply(channel, e.thread(ids[1]).TS, "", "A bot's note.", true)
	e.fake.Reply(channel, e.thread(ids[2]).TS, alice, "Yes.", false)
	// Events are handled in order, and the person's reply is in another
	// thread: once it is taken, the bot's event has been handled too.
	waitFor("the person's reply", func() bool { return e.get(ids[2]).Status == ledger.Answered })
	_, after := e.calls()
	assert.Equal(t, 1, after-before, "the person's reply alone read its thread")
	cancel()
	require.NoError(t, <-done)
}

// TestListenerStopSaysSo proves a listener that stops says so in
// inbound.json: a command's read right after reads the threads again,
// without waiting three ticks.
func TestListenerStopSaysSo(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.threeThreads()
	stop := e.listening(t)
	var in Inbound
	require.NoError(t, e.mode().file(InboundFile).Read(&in))
	require.NotNil(t, in.Listener)
	stop()

	in = Inbound{}
	require.NoError(t, e.mode().file(InboundFile).Read(&in))
	assert.Nil(t, in.Listener)
	e.advance(time.Minute)
	prep, err := e.mode().Poll(ctx, false)
	require.NoError(t, err)
	assert.False(t, prep.Listening)
	assert.Equal(t, 3, prep.Threads)
}

// TestListenerStopLeavesAnother proves a listener that stops leaves the
// mark of another listener that said it runs since (two run at once, one
// is stopped), so commands go on leaving the threads to the one running.
func TestListenerStopLeavesAnother(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.threeThreads()
	stop := e.listening(t)
	other := ledger.T(e.clock().Add(time.Second))
	var in Inbound
	require.NoError(t, e.mode().file(InboundFile).Update(ctx, &in, true, func() error {
		in.Listener = &other
		return nil
	}))
	stop()

	in = Inbound{}
	require.NoError(t, e.mode().file(InboundFile).Read(&in))
	require.NotNil(t, in.Listener, "the other listener's mark is kept")
	assert.True(t, in.Listener.Equal(other.Time))
}

// listening starts a listener and returns once it has read the threads;
// stop cancels it and waits for it to return.
func (e *env) listening(t *testing.T) (stop func()) {
	t.Helper()
	lctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	events := make(chan ListenEvent, 100)
	done := make(chan error, 1)
	go func() { done <- e.mode().Listen(lctx, slackfake.AppToken, func(ev ListenEvent) { events <- ev }) }()
	deadline := time.After(10 * time.Second)
	for read := false; !read; {
		select {
		case ev := <-events:
			read = ev.What == "read"
		case <-deadline:
			t.Fatal("timed out waiting for the listener's read")
		}
	}
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

// threeThreads asks a person a question on each of issues 1 to 3, posted:
// three open threads.
func (e *env) threeThreads() []string {
	var ids []string
	for _, n := range []int{1, 2, 3} {
		rec, err := e.hub.Ask(context.Background(), router.AskRequest{Issue: n, From: "engineer", To: ledger.Human, Topic: "Retries", Question: "Backoff?"})
		require.NoError(e.t, err)
		ids = append(ids, rec.ID)
	}
	e.push(e.mode())
	return ids
}
