package router

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// TestFurtherHumanReplies: a person may reply more than once in a round
// (people clarify in several messages; ask-and-suspend delivers every
// reply): each further reply in an answered round is one more answer entry
// of that round, the status stays answered, and each is an event. An agent
// answers a round once; a final clarification takes no reply.
func TestFurtherHumanReplies(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	toHuman, err := h.Ask(ctx, askReq("engineer", "human"))
	require.NoError(t, err)
	toArchitect, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)

	steps := []struct {
		name    string
		id      string
		from    string
		body    string
		answers int // answer entries in the current round afterwards
		status  ledger.Status
		refused bool // a *ledger.TransitionError
	}{
		{"a person answers", toHuman.ID, "human", "Ship on Monday.", 1, ledger.Answered, false},
		{"and adds to it", toHuman.ID, "human", "But only behind the flag.", 2, ledger.Answered, false},
		{"and again", toHuman.ID, "human", "And tell support first.", 3, ledger.Answered, false},
		{"the agent answers its round", toArchitect.ID, "architect", "SQLite in dev.", 1, ledger.Answered, false},
		{"not twice", toArchitect.ID, "architect", "And PostgreSQL in prod.", 1, ledger.Answered, true},
		{"a person adds to an agent's answer", toArchitect.ID, "human", "Agreed; PostgreSQL 16 in prod.", 2, ledger.Answered, false},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			rec, err := h.Answer(ctx, st.id, st.from, st.body)
			if st.refused {
				var te *ledger.TransitionError
				require.ErrorAs(t, err, &te)
				rec, err = h.Get(st.id)
			}
			require.NoError(t, err)
			assert.Equal(t, st.status, rec.Status)
			n := 0
			for _, e := range rec.Thread {
				if e.Type == ledger.Answer && e.Round == rec.Round {
					n++
				}
			}
			assert.Equal(t, st.answers, n)
			if !st.refused {
				assert.Equal(t, st.body, rec.Current(ledger.Answer).Body, "the latest answer is the reply")
			}
		})
	}

	// every reply is an event, so every one is delivered
	res, err := h.Events.Read(EventFilter{ID: toHuman.ID})
	require.NoError(t, err)
	answered := 0
	for _, e := range res.Events {
		if e.Type == EventAnswered {
			answered++
		}
	}
	assert.Equal(t, 3, answered)

	// a follow-up opens the next round as before; once resolved, no more replies
	rec, err := h.Followup(ctx, toHuman.ID, "engineer", "Which flag?")
	require.NoError(t, err)
	assert.Equal(t, 2, rec.Round)
	_, err = h.Answer(ctx, toHuman.ID, "human", "release-monday.")
	require.NoError(t, err)
	_, err = h.Resolve(ctx, toHuman.ID, "engineer", "")
	require.NoError(t, err)
	_, err = h.Answer(ctx, toHuman.ID, "human", "One more thing.")
	var te *ledger.TransitionError
	require.ErrorAs(t, err, &te, "a resolved clarification takes no reply")
}
