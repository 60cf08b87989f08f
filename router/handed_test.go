package router

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// TestChangersFindWhatTheyMade: each change the hub hands to the holder
// of the issue's lock is found, by its Changer's Made, on the record its
// Make changed (how a writer whose holder died, or a holder making its
// write again on a ledger that holds it, knows it is made), and not on
// the record before, nor as made at another time. A follow-up at the
// round limit escalates instead, and is found by that escalation.
func TestChangersFindWhatTheyMade(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	answered := func(rounds int) *ledger.Clarification {
		l := &ledger.Ledger{IssueNumber: 4}
		c := l.Ask(ledger.NewQuestion{From: "engineer", To: "architect", Topic: "retries", Body: "How many?", MaxRounds: rounds, SLA: time.Hour}, t0)
		require.NoError(t, answerChange{}.Make(c, ledger.Change{Kind: changeAnswer, ID: c.ID, By: "architect", At: t0.Add(time.Second), Args: args(answerArgs{Reply: Reply{Body: "Three."}})}))
		return c
	}
	at := t0.Add(time.Minute)
	for _, tc := range []struct {
		name   string
		rounds int
		ch     ledger.Change
		mk     ledger.Changer
		status ledger.Status
	}{
		{"a follow-up", 3, ledger.Change{Kind: changeFollowup, By: "engineer", Args: args("And on timeouts?")}, followupChange{}, ledger.Pending},
		{"a follow-up at the round limit", 1, ledger.Change{Kind: changeFollowup, By: "engineer", Args: args("And on timeouts?")}, followupChange{}, ledger.Escalated},
		{"a cancel", 3, ledger.Change{Kind: changeAbandon, By: "engineer", Args: args(abandonArgs{Body: "Abandoned: " + CancelledReason})}, abandonChange{}, ledger.Abandoned},
		{"an abandon by the hub", 3, ledger.Change{Kind: changeAbandon, By: HubAgent, Args: args(abandonArgs{Body: "Abandoned: nobody answers"})}, abandonChange{}, ledger.Abandoned},
		{"an escalation by hand", 3, ledger.Change{Kind: changeEscalate, By: HubAgent, Args: args("escalated by hand")}, escalateChange{}, ledger.Escalated},
		{"a resolution", 3, ledger.Change{Kind: changeResolve, By: "engineer", Args: args(resolveArgs{Reply: Reply{Body: "Done."}})}, resolveChange{}, ledger.Resolved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := answered(tc.rounds)
			ch := tc.ch
			ch.ID, ch.At = c.ID, at
			assert.False(t, tc.mk.Made(c, ch), "not made yet")
			require.NoError(t, tc.mk.Make(c, ch))
			assert.Equal(t, tc.status, c.Status)
			assert.True(t, tc.mk.Made(c, ch), "found once made")
			other := ch
			other.At = at.Add(time.Millisecond)
			assert.False(t, tc.mk.Made(c, other), "a change made at another time is another change")
			assert.IsType(t, tc.mk, changerOf(ch.Kind), "the hub makes the kind with this Changer")
		})
	}
}

// TestHandedFollowupBesideAnEscalation: a follow-up and an escalation by
// hand of one record, both handed to the holder of the issue's lock, are
// made in one write, the follow-up first; the follow-up's writer is told
// the record escalated by the other change, and reports its follow-up
// (one followed-up event, one escalation), not an escalation of its own.
func TestHandedFollowupBesideAnEscalation(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	rec, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	_, err = h.Answer(ctx, rec.ID, "architect", "SQLite.")
	require.NoError(t, err)

	f, err := h.Store.Lock(ctx, 42)
	require.NoError(t, err)
	spool := h.Store.Path(42) + ledger.HandoffSuffix
	waitSpool := func(n int) {
		require.Eventually(t, func() bool { ents, _ := os.ReadDir(spool); return len(ents) == n }, 10*time.Second, time.Millisecond)
	}
	followed := make(chan error, 1)
	go func() {
		_, err := h.Followup(ctx, rec.ID, "engineer", "And in CI?")
		followed <- err
	}()
	waitSpool(1)
	escalated := make(chan error, 1)
	go func() {
		_, err := h.Escalate(ctx, rec.ID, "no agent knows")
		escalated <- err
	}()
	waitSpool(2)
	require.NoError(t, f.Release())
	require.NoError(t, <-followed)
	require.NoError(t, <-escalated)
	assert.ElementsMatch(t, []EventType{EventRequested, EventAnswered, EventFollowedUp, EventEscalated}, eventTypes(t, h, rec.ID))
}
