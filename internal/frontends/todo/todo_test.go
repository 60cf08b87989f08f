package todo

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/internal/eventlog"
	"github.com/agentx-cli/agentx/ledger"
)

func TestSort(t *testing.T) {
	at := func(min int) ledger.Time {
		return ledger.T(time.Date(2026, 2, 26, 10, min, 0, 0, time.UTC))
	}
	due := func(min int) *ledger.Time { d := at(min); return &d }
	items := []Item{
		{ID: "PROP-002", Since: at(1)},
		{ID: "CLR-10-001", Since: at(5), Due: due(50)},
		{ID: "CLR-9-002", Since: at(0), Due: due(40), Overdue: true},
		{ID: "CLR-9-001", Since: at(0), Due: due(20), Overdue: true},
		{ID: "CLR-2-001", Since: at(1)},
		{ID: "PROP-001", Since: at(1)},
	}
	Sort(items)
	var got []string
	for _, it := range items {
		got = append(got, it.ID)
	}
	// overdue first, longest overdue first; then by due or since; ties by
	// id, numbers compared as numbers
	assert.Equal(t, []string{"CLR-9-001", "CLR-9-002", "CLR-2-001", "PROP-001", "PROP-002", "CLR-10-001"}, got)
}

func TestSettled(t *testing.T) {
	tests := []struct {
		typ  eventlog.EventType
		by   string
		want string
	}{
		{eventlog.EventAnswered, "human:slack:U123", "answered by U123 on Slack"},
		{eventlog.EventResolved, "human:github:octo", "resolved by octo on GitHub"},
		{eventlog.EventAnswered, "human:desk:dana", "answered by dana on the desk"},
		{eventlog.EventResolved, "human:dana@example.com", "resolved by dana@example.com"},
		{eventlog.EventAnswered, "architect", "answered by architect"},
		{eventlog.EventProposalApproved, "human:bob", "approved by bob"},
		{eventlog.EventProposalRejected, "", "rejected"},
		{eventlog.EventRequested, "engineer", ""},
		{eventlog.EventStale, "agentx", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Settled(eventlog.Event{Type: tt.typ, By: tt.by}), "%s by %s", tt.typ, tt.by)
	}
}
