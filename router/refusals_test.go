package router

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// TestScopeRefusalIsLogged: an ask of someone the step's can_clarify does
// not list is refused as before and logged (scope-refused: who asked whom,
// the topic, the refusal); the other refusals are not scope, and an
// allowed ask logs only its request. A refusal is not a change.
func TestScopeRefusalIsLogged(t *testing.T) {
	tests := []struct {
		name string
		req  AskRequest
		want []Event // the events logged (type, agents, topic, by; reason checked apart)
	}{
		{"outside can_clarify", askReq("engineer", "reviewer"),
			[]Event{{Type: EventScopeRefused, IssueNumber: 42, FromAgent: "engineer", ToAgent: "reviewer", Topic: "Database adapter", By: "engineer"}}},
		{"nobody allowed", askReq("product-manager", "architect"),
			[]Event{{Type: EventScopeRefused, IssueNumber: 42, FromAgent: "product-manager", ToAgent: "architect", Topic: "Database adapter", By: "product-manager"}}},
		{"blocking not allowed: not scope", AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "t", Question: "q", Workflow: "bug"}, nil},
		{"allowed", askReq("engineer", "architect"),
			[]Event{{Type: EventRequested, ClarificationID: "CLR-42-001", IssueNumber: 42, FromAgent: "engineer", ToAgent: "architect", Topic: "Database adapter", Blocking: true, Round: 1, By: "engineer"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newTestHub(t, "")
			_, err := h.Ask(context.Background(), tt.req)
			var re *RuleError
			refused := errors.As(err, &re)
			evs, rerr := h.Events.Read(EventFilter{})
			require.NoError(t, rerr)
			require.Len(t, evs.Events, len(tt.want))
			for i, w := range tt.want {
				got := evs.Events[i]
				assert.Equal(t, t0, got.Timestamp.Time)
				if w.Type == EventScopeRefused {
					require.True(t, refused && re.Kind == RuleScope, "refused by scope as before: %v", err)
					assert.Equal(t, re.Msg, got.Reason)
					assert.True(t, got.Refusal())
					assert.Zero(t, h.Changes(), "not a change")
				}
				got.Timestamp, got.Reason = ledger.Time{}, ""
				assert.Equal(t, w, got)
			}
		})
	}
}

// TestLockTimeoutIsLogged: a write that gives up waiting for the issue's
// lock fails as before (a *lock.TimeoutError, nothing written) and is
// logged (lock-timeout): the clarification it was changing, or the
// question it was asking, and who held the lock. Other failures are not.
func TestLockTimeoutIsLogged(t *testing.T) {
	dir, rules := testenv.Workspace(t, "")
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{Wait: 150 * time.Millisecond, Agent: "test"}, func() time.Time { return t0 })
	h := New(store, rules, dir)
	h.Runner = &fakeRunner{}
	h.Warn = func(err error) { t.Errorf("unexpected warning: %v", err) }
	ctx := context.Background()
	rec, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)

	held, err := lock.Acquire(ctx, store.Path(42), lock.Options{Agent: "holder"})
	require.NoError(t, err)
	before, err := h.Events.Read(EventFilter{})
	require.NoError(t, err)
	tests := []struct {
		name string
		act  func() error
		want Event
	}{
		{"an answer", func() error { _, err := h.Answer(ctx, rec.ID, "architect", "SQLite."); return err },
			Event{Type: EventLockTimeout, ClarificationID: rec.ID, IssueNumber: 42, FromAgent: "engineer", ToAgent: "architect", Topic: "Database adapter", Blocking: true, Round: 1}},
		{"a question", func() error {
			req := askReq("engineer", "product-manager")
			req.Topic = "Scope"
			_, err := h.Ask(ctx, req)
			return err
		}, Event{Type: EventLockTimeout, IssueNumber: 42, FromAgent: "engineer", ToAgent: "product-manager", Topic: "Scope", Blocking: true, By: "engineer"}},
		{"the monitor's move", func() error {
			return h.Apply(ctx, 42, []Move{{ID: rec.ID, To: ledger.Stale, Reason: "SLA"}})[0].Err
		}, Event{Type: EventLockTimeout, ClarificationID: rec.ID, IssueNumber: 42, FromAgent: "engineer", ToAgent: "architect", Topic: "Database adapter", Blocking: true, Round: 1, By: HubAgent}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.act()
			var te *lock.TimeoutError
			require.True(t, errors.As(err, &te), "a lock timeout as before: %v", err)
			evs, rerr := h.Events.Read(EventFilter{})
			require.NoError(t, rerr)
			require.Len(t, evs.Events, len(before.Events)+i+1, "one event more")
			got := evs.Events[len(evs.Events)-1]
			assert.Equal(t, te.Summary(), got.Reason)
			assert.Contains(t, got.Reason, `agent "holder"`)
			assert.NotContains(t, got.Reason, "resume it", "what happened, not the advice")
			got.Timestamp, got.Reason = ledger.Time{}, ""
			assert.Equal(t, tt.want, got)
		})
	}
	require.NoError(t, held.Release())
	got, err := h.Get(rec.ID)
	require.NoError(t, err)
	assert.Equal(t, ledger.Pending, got.Status, "nothing written")

	// other failures are not lock timeouts: nothing logged
	n := len(mustEvents(t, h))
	_, err = h.Answer(ctx, "CLR-42-099", "architect", "x")
	require.ErrorIs(t, err, ledger.ErrNotFound)
	assert.Len(t, mustEvents(t, h), n)
}

func mustEvents(t *testing.T, h *Hub) []Event {
	t.Helper()
	evs, err := h.Events.Read(EventFilter{})
	require.NoError(t, err)
	return evs.Events
}
