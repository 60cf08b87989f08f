package router

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
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
