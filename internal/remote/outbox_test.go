package remote

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// TestReplayRebasesAssumptions: a queued change (an intent, the outbox) to
// a record that another change has moved since lands only where the
// record is still as it found it, unless one of the two appended
// assumptions alone: what an asker proceeds on commutes with an answer,
// another assumption, a follow-up, and lands beside it, once. Before, an
// asker's assumption made as the answer came was superseded (and an
// answer made as the asker assumed). A change already on the record (an
// intent of it merged before its host went out of reach), the record
// moved on since, is delivered already: before, it was told superseded.
func TestReplayRebasesAssumptions(t *testing.T) {
	at := sharedRecord("CLR-1-001", "x").Created
	assume := func(c *ledger.Clarification, body string) *ledger.Clarification {
		c.Ext().Assumptions = append(c.Ext().Assumptions, ledger.Assumption{Round: 1, By: "engineer", Body: body, Timestamp: at})
		return c
	}
	answer := func(c *ledger.Clarification, body string) *ledger.Clarification {
		require.NoError(t, c.Move(ledger.Answered))
		c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Body: body, Timestamp: at})
		return c
	}
	resolve := func(c *ledger.Clarification) *ledger.Clarification {
		require.NoError(t, c.Move(ledger.Resolved))
		c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 1, From: ledger.Human, Type: ledger.Resolution, Body: "done", Timestamp: at})
		return c
	}
	base := func() *ledger.Clarification { return sharedRecord("CLR-1-001", "x") }
	bodies := func(c *ledger.Clarification) []string {
		var out []string
		for _, a := range assumptions(c) {
			out = append(out, a.Body)
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		before      *ledger.Clarification // what the change was made on
		after       *ledger.Clarification // the change
		cur         *ledger.Clarification // the record as it stands
		superseded  bool
		applied     bool
		status      ledger.Status
		thread      int
		assumptions []string
	}{
		{"an assumption on an answered record", base(), assume(base(), "mine"), answer(base(), "a"),
			false, true, ledger.Answered, 2, []string{"mine"}},
		{"an answer on a record assumed on", base(), answer(base(), "a"), assume(base(), "theirs"),
			false, true, ledger.Answered, 2, []string{"theirs"}},
		{"two assumptions", base(), assume(base(), "mine"), assume(base(), "theirs"),
			false, true, ledger.Pending, 1, []string{"theirs", "mine"}},
		{"an assumption delivered already", base(), assume(base(), "mine"), assume(assume(base(), "theirs"), "mine"),
			false, false, ledger.Pending, 1, []string{"theirs", "mine"}},
		{"an assumption on a resolved record", base(), assume(base(), "mine"), resolve(answer(base(), "a")),
			true, false, ledger.Resolved, 3, nil},
		{"two answers", base(), answer(base(), "mine"), answer(base(), "theirs"),
			true, false, ledger.Answered, 2, nil},
		{"an answer delivered already, assumed on since", base(), answer(base(), "mine"), assume(answer(base(), "mine"), "theirs"),
			false, false, ledger.Answered, 2, []string{"theirs"}},
		{"an answer delivered already, resolved since", base(), answer(base(), "mine"), resolve(answer(base(), "mine")),
			false, false, ledger.Resolved, 3, nil},
		{"a change to the agentx key alone, the record moved on", base(), func() *ledger.Clarification {
			c := base()
			c.Ext().Summary = "rewritten"
			return c
		}(), answer(base(), "a"), true, false, ledger.Answered, 2, nil},
		{"an assumption that also rewrites the record", base(), func() *ledger.Clarification {
			c := assume(base(), "mine")
			c.Ext().Summary = "rewritten"
			return c
		}(), answer(base(), "a"), true, false, ledger.Answered, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &ledger.Ledger{IssueNumber: 1, Clarifications: []*ledger.Clarification{tc.cur}}
			q := Queued{Message: "CLR-1-001 changed", Records: []QueuedRecord{{ID: "CLR-1-001",
				Before: mustRecordJSON(t, tc.before), After: mustRecordJSON(t, tc.after)}}}
			applied, outs, err := replay(l, q, time.Now(), map[string]string{})
			require.NoError(t, err)
			assert.Equal(t, tc.applied, applied)
			if tc.superseded {
				require.Len(t, outs, 1)
				assert.Equal(t, OutcomeSuperseded, outs[0].Outcome)
			} else {
				assert.Empty(t, outs)
			}
			c := l.Find("CLR-1-001")
			assert.Equal(t, tc.status, c.Status)
			assert.Len(t, c.Thread, tc.thread)
			assert.Equal(t, tc.assumptions, bodies(c))
			require.NoError(t, l.Validate())
			if applied {
				// as another host checks a pulled commit: it only appends
				prev := &ledger.Ledger{IssueNumber: 1, Clarifications: []*ledger.Clarification{tc.cur}}
				assert.NoError(t, appendsRecord(prev.Clarifications[0], c))
				assert.True(t, holds(c, tc.after), "its host finds its change there")
			}
		})
	}
}

// TestOfflineAssumptionLandsBesideTheAnswer: the asker, out of reach of
// the remote, records what it proceeds on while another host answers the
// question: when its outbox is delivered, its assumption lands beside the
// answer, and nothing is told as overtaken. Before, the assumption was
// superseded (dropped, and its asker told so).
func TestOfflineAssumptionLandsBesideTheAnswer(t *testing.T) {
	r := &memRemote{chains: map[int][]Commit{}}
	a, b := sharedHost(t, r), sharedHost(t, r)
	id, err := sharedAsk(a, "TTL?")
	require.NoError(t, err)
	r.offline = true
	require.NoError(t, sharedAssume(a, id, "five minutes, as in staging"))
	assert.Len(t, a.Unsynced(), 1, "kept in the outbox")
	r.offline = false
	_, err = b.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	require.NoError(t, sharedAnswer(b, id, "an hour"))
	_, err = a.Sync(context.Background(), 1, nil)
	require.NoError(t, err)

	st, err := ReadSync(a.Store, 1)
	require.NoError(t, err)
	assert.Empty(t, st.Pending)
	assert.Empty(t, st.Outcomes, "nothing overtaken")
	final, err := ledger.Decode("mem", r.head(1).Data)
	require.NoError(t, err)
	c := final.Find(id)
	assert.Equal(t, ledger.Answered, c.Status)
	assert.Equal(t, "an hour", c.RoundAnswer())
	require.NotNil(t, c.X)
	require.Len(t, c.X.Assumptions, 1)
	assert.Equal(t, "five minutes, as in staging", c.X.Assumptions[0].Body)
	var msgs []string
	for _, c := range r.chains[1] {
		msgs = append(msgs, c.Message)
	}
	assert.Equal(t, []string{"CLR-1-001 asked by engineer of architect", "CLR-1-001 answered by architect", "CLR-1-001 assumption by engineer"}, msgs)
}
