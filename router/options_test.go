package router

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

func TestOptionsAndPick(t *testing.T) {
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	q := func(body string) ledger.ThreadEntry {
		return ledger.ThreadEntry{Round: 1, From: "engineer", Type: ledger.Question, Body: body}
	}
	ans := func(body string) ledger.ThreadEntry {
		return ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Body: body}
	}
	escalated := func(thread []ledger.ThreadEntry, latest string, options ...string) *ledger.Clarification {
		c := &ledger.Clarification{ID: "CLR-4-001", From: "engineer", To: "architect", Topic: "DB", Status: ledger.Pending, Round: 1, MaxRounds: 1, Thread: thread}
		if len(options) > 0 {
			c.X = &ledger.Extra{Options: options}
		}
		require.NoError(t, escalate(c, 4, "round limit", latest, now))
		return c
	}
	asked := &ledger.Clarification{ID: "CLR-4-002", From: "engineer", To: "human", Status: ledger.Pending, Round: 1,
		Thread: []ledger.ThreadEntry{q("Ship how?")}, X: &ledger.Extra{Options: []string{"Flag", "All"}}}
	plain := &ledger.Clarification{ID: "CLR-4-003", From: "engineer", To: "human", Status: ledger.Pending, Round: 1, Thread: []ledger.ThreadEntry{q("TTL?")}}

	tests := []struct {
		name     string
		c        *ledger.Clarification
		r        Reply
		options  []string
		want     string
		choice   int
		wantErr  string
		needBody bool
	}{
		{name: "question option", c: asked, r: Reply{Option: 2}, options: []string{"Flag", "All"}, want: "All", choice: 2},
		{name: "question option with a note", c: asked, r: Reply{Option: 1, Body: "default off"}, options: []string{"Flag", "All"}, want: "Flag\n\ndefault off", choice: 1},
		{name: "text alone", c: asked, r: Reply{Body: "neither"}, options: []string{"Flag", "All"}, want: "neither"},
		{name: "out of range", c: asked, r: Reply{Option: 3}, options: []string{"Flag", "All"}, wantErr: "CLR-4-002 has no option 3: its options are 1. Flag; 2. All"},
		{name: "negative", c: asked, r: Reply{Option: -1}, options: []string{"Flag", "All"}, wantErr: "has no option -1"},
		{name: "no options", c: plain, r: Reply{Option: 1}, wantErr: "CLR-4-003 offers no options"},
		{
			name:    "escalation: accept the answer",
			c:       escalated([]ledger.ThreadEntry{q("SQLite?"), ans("Postgres.")}, "Even locally?\nIt is slow."),
			r:       Reply{Option: 1},
			options: []string{"Accept architect's answer.", "Accept engineer's proposal.", "Give a new decision."},
			want:    "Decision: accept architect's answer:\nPostgres.", choice: 1,
		},
		{
			name:    "escalation: the asker's latest, only in the escalation entry",
			c:       escalated([]ledger.ThreadEntry{q("SQLite?"), ans("Postgres.")}, "Even locally?\nIt is slow."),
			r:       Reply{Option: 2},
			options: []string{"Accept architect's answer.", "Accept engineer's proposal.", "Give a new decision."},
			want:    "Decision: accept engineer's proposal:\nEven locally?\nIt is slow.", choice: 2,
		},
		{
			name:    "escalation: a new decision needs text",
			c:       escalated([]ledger.ThreadEntry{q("SQLite?"), ans("Postgres.")}, "Even locally?"),
			r:       Reply{Option: 3},
			options: []string{"Accept architect's answer.", "Accept engineer's proposal.", "Give a new decision."},
			wantErr: "needs the decision's text", needBody: true,
		},
		{
			name:    "escalation: a new decision",
			c:       escalated([]ledger.ThreadEntry{q("SQLite?"), ans("Postgres.")}, "Even locally?"),
			r:       Reply{Option: 3, Body: "MySQL"},
			options: []string{"Accept architect's answer.", "Accept engineer's proposal.", "Give a new decision."},
			want:    "MySQL", choice: 3,
		},
		{
			name:    "escalation: the asker only asked, no proposal to accept",
			c:       escalated([]ledger.ThreadEntry{q("SQLite?"), ans("Postgres.")}, ""),
			r:       Reply{Option: 2, Body: "MySQL"},
			options: []string{"Accept architect's answer.", "Give a new decision."},
			want:    "MySQL", choice: 2,
		},
		{
			name:    "escalation: the asker only asked, option 3 is gone",
			c:       escalated([]ledger.ThreadEntry{q("SQLite?"), ans("Postgres.")}, ""),
			r:       Reply{Option: 3, Body: "MySQL"},
			options: []string{"Accept architect's answer.", "Give a new decision."},
			wantErr: "CLR-4-001 has no option 3: its options are 1. Accept architect's answer.; 2. Give a new decision.",
		},
		{
			name: "escalation: a follow-up in the thread is the asker's proposal",
			c: escalated([]ledger.ThreadEntry{q("SQLite?"), ans("Postgres."),
				{Round: 2, From: "engineer", Type: ledger.Question, Body: "SQLite is enough here."},
				{Round: 2, From: "architect", Type: ledger.Answer, Body: "Postgres."}}, ""),
			r:       Reply{Option: 2},
			options: []string{"Accept architect's answer.", "Accept engineer's proposal.", "Give a new decision."},
			want:    "Decision: accept engineer's proposal:\nSQLite is enough here.", choice: 2,
		},
		{
			name:    "escalation without an answer",
			c:       escalated([]ledger.ThreadEntry{q("SQLite?")}, ""),
			r:       Reply{Option: 1, Body: "Postgres"},
			options: []string{"Answer engineer's question yourself.", "Give a new decision."},
			want:    "Postgres", choice: 1,
		},
		{
			name:    "escalated question with options, unanswered: its options",
			c:       escalated([]ledger.ThreadEntry{q("Ship how?")}, "", "Flag", "All"),
			r:       Reply{Option: 2},
			options: []string{"Flag", "All"},
			want:    "All", choice: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, o := range Options(tt.c) {
				got = append(got, o.Text)
			}
			assert.Equal(t, tt.options, got)
			text, ch, err := pick(tt.c, tt.r)
			if tt.wantErr != "" {
				var oe *OptionError
				require.True(t, errors.As(err, &oe), "%v", err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Equal(t, tt.needBody, oe.NoBody)
				assert.NotEmpty(t, oe.Hint())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, text)
			if tt.choice == 0 {
				assert.Nil(t, ch)
				return
			}
			require.NotNil(t, ch)
			assert.Equal(t, tt.choice, ch.Option)
			assert.Equal(t, tt.options[tt.choice-1], ch.Text)
		})
	}
}

func TestAnswerReplyStoresTheChoice(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := t.Context()
	rec, err := h.Ask(ctx, AskRequest{Issue: 9, From: "engineer", To: ledger.Human, Topic: "Ship", Question: "How?", Options: []string{"Flag", "All"}})
	require.NoError(t, err)
	_, err = h.AnswerReply(ctx, rec.ID, ledger.Human, Reply{Option: 5})
	var oe *OptionError
	require.ErrorAs(t, err, &oe)
	got, err := h.Get(rec.ID)
	require.NoError(t, err)
	assert.Equal(t, ledger.Pending, got.Status, "a refused option writes nothing")

	out, err := h.AnswerReply(ctx, rec.ID, ledger.Human, Reply{Option: 2})
	require.NoError(t, err)
	c := out.Clarification
	assert.Equal(t, "All", c.Thread[len(c.Thread)-1].Body)
	assert.Equal(t, &ledger.Choice{Entry: len(c.Thread) - 1, Option: 2, Text: "All"}, c.ChoiceAt(len(c.Thread)-1))
	assert.Nil(t, c.ChoiceAt(0))
}

// TestResolveRaceLoserIsToldWhoWon: the second of two people resolving the
// same clarification with an option (two desks, say) is told it was
// resolved already, by whom, not that it offers no options.
func TestResolveRaceLoserIsToldWhoWon(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := t.Context()
	rec, err := h.Ask(ctx, AskRequest{Issue: 9, From: "engineer", To: ledger.Human, Topic: "Ship", Question: "How?", Options: []string{"Flag", "All"}})
	require.NoError(t, err)
	_, err = h.AnswerReply(ctx, rec.ID, ledger.Human, Reply{Option: 1})
	require.NoError(t, err)
	_, err = h.ResolveReply(WithCaller(ctx, &Caller{Person: func() (string, error) { return "desk:pat", nil }}), rec.ID, ledger.Human, Reply{Option: 1})
	require.NoError(t, err)
	_, err = h.ResolveReply(WithCaller(ctx, &Caller{Person: func() (string, error) { return "desk:sam", nil }}), rec.ID, ledger.Human, Reply{Option: 2})
	var se *SettledError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "desk:pat", se.By)
	assert.Contains(t, err.Error(), "already resolved by desk:pat")
	assert.NotContains(t, err.Error(), "options")
	var te *ledger.TransitionError
	assert.ErrorAs(t, err, &te, "an invalid transition: exit 6")
}

// TestResolveSummary: a resolution's summary is stored as agentx.summary
// (trimmed) and is the clarification's decision; none given stores none
// (the decision is derived); a summary refused writes nothing.
func TestResolveSummary(t *testing.T) {
	tests := []struct {
		name     string
		r        Reply
		stored   string
		decision string
		wantErr  string
	}{
		{name: "given", r: Reply{Body: "We go with the dual adapter.\n\nDetails: ...", Summary: " Dual adapter behind a repository interface. "},
			stored: "Dual adapter behind a repository interface.", decision: "Dual adapter behind a repository interface."},
		{name: "with an option", r: Reply{Option: 1, Summary: "Ship behind a flag."}, stored: "Ship behind a flag.", decision: "Ship behind a flag."},
		{name: "absent: derived", r: Reply{Body: "We go with the dual adapter. Details follow."}, decision: "We go with the dual adapter."},
		{name: "too long", r: Reply{Summary: strings.Repeat("x", ledger.MaxSummary+1)}, wantErr: "summary \"xxx"},
		{name: "three sentences", r: Reply{Summary: "A. B. C."}, wantErr: "is 3 sentences"},
		{name: "a line break", r: Reply{Summary: "A.\nB."}, wantErr: "has a control character"},
		{name: "blank", r: Reply{Summary: "   "}, wantErr: "summary \"\" is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newTestHub(t, "")
			ctx := t.Context()
			rec, err := h.Ask(ctx, AskRequest{Issue: 9, From: "engineer", To: ledger.Human, Topic: "Ship", Question: "How?", Options: []string{"Flag", "All"}})
			require.NoError(t, err)
			_, err = h.Answer(ctx, rec.ID, ledger.Human, "Flag.")
			require.NoError(t, err)
			got, err := h.ResolveReply(ctx, rec.ID, "engineer", tt.r)
			if tt.wantErr != "" {
				var ie *ledger.InputError
				require.ErrorAs(t, err, &ie, "a usage error (exit 2)")
				assert.Contains(t, err.Error(), tt.wantErr)
				cur, err := h.Get(rec.ID)
				require.NoError(t, err)
				assert.Equal(t, ledger.Answered, cur.Status, "nothing written")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, ledger.Resolved, got.Status)
			cur, err := h.Get(rec.ID)
			require.NoError(t, err)
			summary := ""
			if cur.X != nil {
				summary = cur.X.Summary
			}
			assert.Equal(t, tt.stored, summary)
			assert.Equal(t, tt.decision, cur.Decision())
		})
	}
}
