package router

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// TestMessageLimit: every message the hub takes (a question, an answer, a
// follow-up, a resolution, an assumption, a note with an option) is
// refused past ledger.MaxMessageLen, whoever sends it, as input error
// naming the size and the limit, and nothing is written; at the limit it
// is taken. A 20 KB answer used to be taken whole, and the asker's inbox
// then showed it cut.
func TestMessageLimit(t *testing.T) {
	over := strings.Repeat("a", 20_000)
	atLimit := strings.Repeat("é", ledger.MaxMessageLen/2) // two bytes each: exactly the limit
	require.Len(t, atLimit, ledger.MaxMessageLen)
	tests := []struct {
		name  string
		field string
		// act takes text on a clarification made for it (id: asked of
		// human, answered once, with two options).
		act func(h *Hub, id, text string) error
	}{
		{"question", "question", func(h *Hub, _, text string) error {
			req := askReq("engineer", "architect")
			req.Question = text
			_, err := h.Ask(context.Background(), req)
			return err
		}},
		{"answer", "answer", func(h *Hub, id, text string) error {
			_, err := h.Answer(context.Background(), id, "human", text)
			return err
		}},
		{"answer with an option", "answer", func(h *Hub, id, text string) error {
			_, err := h.AnswerReply(context.Background(), id, "human", Reply{Option: 1, Body: text})
			return err
		}},
		{"follow-up", "follow-up", func(h *Hub, id, text string) error {
			_, err := h.Followup(context.Background(), id, "engineer", text)
			return err
		}},
		{"resolution", "resolution", func(h *Hub, id, text string) error {
			_, err := h.Resolve(context.Background(), id, "engineer", text)
			return err
		}},
		{"resolution with an option", "resolution", func(h *Hub, id, text string) error {
			_, err := h.ResolveReply(context.Background(), id, "engineer", Reply{Option: 2, Body: text})
			return err
		}},
		{"assumption", "assumption", func(h *Hub, id, text string) error {
			_, err := h.Assume(context.Background(), id, "engineer", text)
			return err
		}},
	}
	for _, tt := range tests {
		for _, text := range []string{over, atLimit} {
			t.Run(fmt.Sprintf("%s/%d bytes", tt.name, len(text)), func(t *testing.T) {
				h, _ := newTestHub(t, "")
				ctx := context.Background()
				req := askReq("engineer", "human")
				req.Options = []string{"SQLite", "PostgreSQL"}
				rec, err := h.Ask(ctx, req)
				require.NoError(t, err)
				if tt.field != "answer" {
					_, err = h.Answer(ctx, rec.ID, "human", "SQLite locally.")
					require.NoError(t, err)
				}
				before, err := os.ReadFile(h.Store.Path(42))
				require.NoError(t, err)
				evs, err := h.Events.Read(EventFilter{})
				require.NoError(t, err)

				err = tt.act(h, rec.ID, text)
				if len(text) <= ledger.MaxMessageLen {
					require.NoError(t, err, "at the limit it is taken")
					return
				}
				var in *ledger.InputError
				require.True(t, errors.As(err, &in), "an input error: %v", err)
				assert.Equal(t, tt.field, in.Field)
				assert.Contains(t, err.Error(), fmt.Sprintf("is %d bytes; the limit is %d bytes", len(text), ledger.MaxMessageLen))
				assert.Contains(t, in.Hint(), fmt.Sprintf("shorten it to %d bytes or fewer", ledger.MaxMessageLen))
				after, err := os.ReadFile(h.Store.Path(42))
				require.NoError(t, err)
				assert.Equal(t, string(before), string(after), "nothing written")
				now, err := h.Events.Read(EventFilter{})
				require.NoError(t, err)
				assert.Len(t, now.Events, len(evs.Events), "no event")
			})
		}
	}
}

// TestResponderAnswerWithinLimit: a responder's answer past one message's
// limit is cut there with a note the asker sees, and the prompt states
// the limit.
func TestResponderAnswerWithinLimit(t *testing.T) {
	got := answerOf([]byte(strings.Repeat("a", 20_000)), 20_000)
	assert.LessOrEqual(t, len(got), ledger.MaxMessageLen)
	assert.Contains(t, got, "[answer truncated by agentx: the responder printed 20000 bytes; the first part is kept]")
	assert.Contains(t, BuildPrompt(42, promptClarification(), nil), fmt.Sprintf("in at most %d bytes", ledger.MaxMessageLen))
}
