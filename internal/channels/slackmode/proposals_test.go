package slackmode

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/ledger"
)

// TestProposalPosted proves an enhancement proposal is one message in the
// channel (what, why, evidence, how a person decides with the CLI), its
// decisions and new evidence follow in its thread, each once however many
// processes run and whichever dies between posting and recording, and a
// reply in its thread is no answer to anything.
func TestProposalPosted(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.push(e.mode()) // the outbox starts here
	p, err := proposal.Create(ctx, e.hub, proposal.Proposal{Type: proposal.TypeNewSkill, Title: "Test database not migrated",
		Rationale: "TestMigrate failed on #7 <!channel> @here", Action: "Run migrations <https://evil.example|first>", Issues: []int{7}, CreatedBy: "engineer",
		Evidence: []proposal.Evidence{{Issue: 7, Eval: "EVAL-7-1", Check: "tests", Feedback: "no such table"}}})
	require.NoError(t, err)

	crashAfterPost = func() error { return errors.New("killed") }
	_, err = e.mode().Push(ctx, true)
	crashAfterPost = nil
	require.Error(t, err)
	rep := e.push(e.mode())
	require.Len(t, rep.Issues, 1)
	assert.Equal(t, 0, rep.Issues[0].Issue, "proposals ride on issue 0")
	assert.Equal(t, 1, rep.Issues[0].Found, "the message posted before the crash is found by its metadata")
	e.push(e.mode())

	ms := e.fake.Messages(channel)
	require.Len(t, ms, 1, "posted once")
	text := ms[0].Text
	assert.Contains(t, text, ":bulb: *Enhancement proposal PROP-001* from engineer · new_skill · impact medium, risk low\n*Test database not migrated*\n")
	assert.Contains(t, text, "*Why:*\n> TestMigrate failed on #7 &lt;!channel&gt; @\u200bhere\n")
	assert.Contains(t, text, "*What:*\n> Run migrations &lt;https://evil.example|first&gt;\n")
	assert.Contains(t, text, "• issue #7: EVAL-7-1, check tests: no such table\n")
	assert.Contains(t, text, "agentx proposals approve PROP-001\n")
	assert.Contains(t, text, "Replies in this thread are not read")
	assert.NotContains(t, text, "<!channel>")
	assert.JSONEq(t, `{"event_type":"agentx_proposal","event_payload":{"id":"PROP-001","entry":0,"evidence":"`+evidenceSum(p)+`"}}`, string(ms[0].Meta))
	b, err := proposal.Read(e.hub.Store)
	require.NoError(t, err)
	mir := b.Find(p.ID).Mirror
	require.NotNil(t, mir)
	assert.Equal(t, &chanref.SlackThread{Channel: channel, TS: ms[0].TS, Posts: []chanref.SlackPost{{Entry: 0, TS: ms[0].TS}}}, mir.Slack)
	assert.Equal(t, evidenceSum(p), mir.SlackEvidence)

	// a reply in the proposal's thread, even an answerer's, answers
	// nothing and approves nothing, and nobody is told anything
	rec := e.ask(ledger.Human)
	e.push(e.mode())
	e.fake.Reply(channel, ms[0].TS, alice, "approve", false)
	e.fake.Reply(channel, ms[0].TS, mallory, "1", false)
	poll := e.poll(e.mode())
	assert.Equal(t, 1, poll.Threads, "the clarification's thread only")
	assert.Equal(t, 0, poll.Replies)
	assert.Empty(t, poll.Handled)
	assert.Empty(t, e.fake.Ephemerals())
	assert.Equal(t, ledger.Pending, e.get(rec.ID).Status)
	b, err = proposal.Read(e.hub.Store)
	require.NoError(t, err)
	assert.Equal(t, proposal.Pending, b.Find(p.ID).Status)

	// new evidence, then a person's decision: in the thread, once each,
	// a crash after posting the decision notwithstanding
	require.NoError(t, proposal.RecordMirror(ctx, e.hub.Store, p.ID, func(p *proposal.Proposal) error {
		p.Mirror.SlackEvidence = "older"
		return nil
	}))
	_, err = proposal.Decide(ctx, e.hub, p.ID, proposal.Approved, "slack:U0ALICE01", "go ahead <!here>")
	require.NoError(t, err)
	crashAfterPost = func() error { return errors.New("killed") }
	_, err = e.mode().Push(ctx, true) // the evidence posted, then killed
	require.Error(t, err)
	_, err = e.mode().Push(ctx, true) // the evidence found; the decision posted, then killed
	crashAfterPost = nil
	require.Error(t, err)
	rep = e.push(e.mode())
	assert.Equal(t, 1, rep.Issues[0].Found, "the decision posted before the crash")
	assert.Equal(t, 0, rep.Issues[0].Posted)
	e.push(e.mode())
	_, err = proposal.Decide(ctx, e.hub, p.ID, proposal.Implemented, "alice@example.com", "")
	require.NoError(t, err)
	e.push(e.mode())
	e.push(e.mode())

	var thread []string
	for _, msg := range e.fake.Messages(channel) {
		if msg.ThreadTS == ms[0].TS {
			thread = append(thread, msg.Text)
		}
	}
	require.Len(t, thread, 5, "two replies, then evidence, approval and implementation once each")
	assert.Contains(t, thread[2], ":mag: *New evidence for PROP-001*: the failures behind it are now\n• issue #7: EVAL-7-1")
	assert.Contains(t, thread[3], ":white_check_mark: *Proposal PROP-001 approved* by a person (U0ALICE01 in Slack) · Test database not migrated\n> go ahead &lt;!here&gt;\n")
	assert.Contains(t, thread[3], "Next: `agentx skills draft PROP-001`.")
	assert.Contains(t, thread[4], ":rocket: *Proposal PROP-001 implemented* by a person ·")
	assert.NotContains(t, thread[4], "alice@example.com", "a name from git config is not published")
	b, err = proposal.Read(e.hub.Store)
	require.NoError(t, err)
	assert.Len(t, b.Find(p.ID).Mirror.Slack.Posts, 3, "the proposal and two decisions, recorded")
	assert.Equal(t, evidenceSum(p), b.Find(p.ID).Mirror.SlackEvidence)
}

// TestProposalBeforeSlackMode proves the first run in a workspace posts
// the pending proposals made before it, and not those people decided
// already.
func TestProposalBeforeSlackMode(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, title := range []string{"Decided already", "Still pending"} {
		_, err := proposal.Create(ctx, e.hub, proposal.Proposal{Type: proposal.TypeToolFix, Title: title, Rationale: "r", Action: "a", CreatedBy: "engineer"})
		require.NoError(t, err)
	}
	_, err := proposal.Decide(ctx, e.hub, "PROP-001", proposal.Rejected, "alice@example.com", "no")
	require.NoError(t, err)
	e.push(e.mode())
	e.push(e.mode())
	ms := e.fake.Messages(channel)
	require.Len(t, ms, 1)
	assert.Contains(t, ms[0].Text, "*Enhancement proposal PROP-002*")
}
