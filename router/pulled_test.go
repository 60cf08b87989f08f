package router

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentx-cli/agentx/ledger"
)

// One event per change another host made: each new thread entry, and a
// move no entry made; all marked as pulled, with the host.
func TestPulledEvents(t *testing.T) {
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	entry := func(round int, from string, typ ledger.EntryType) ledger.ThreadEntry {
		return ledger.ThreadEntry{Round: round, From: from, Type: typ, Body: "x", Timestamp: ledger.T(now)}
	}
	asked := &ledger.Clarification{ID: "CLR-3-001", From: "engineer", To: "architect", Topic: "T", Status: ledger.Pending, Round: 1,
		Thread: []ledger.ThreadEntry{entry(1, "engineer", ledger.Question)}}
	followed := *asked
	followed.Status, followed.Round = ledger.Pending, 2
	followed.Thread = append(append([]ledger.ThreadEntry{}, asked.Thread...), entry(1, "architect", ledger.Answer), entry(2, "engineer", ledger.Question))
	stale := followed
	stale.Status = ledger.Stale
	stale.X = &ledger.Extra{Monitor: &ledger.MonitorState{Reason: "no answer in 4h"}}

	evs := PulledEvents(3, []ledger.Pulled{
		{After: asked, Host: "laptop"},
		{Before: asked, After: &followed, Host: "ci"},
		{Before: &followed, After: &stale},
	}, now)
	type got struct {
		Type   EventType
		Round  int
		By     string
		Reason string
		Host   string
	}
	var out []got
	for _, e := range evs {
		assert.True(t, e.Pulled())
		assert.Equal(t, 3, e.IssueNumber)
		out = append(out, got{e.Type, e.Round, e.By, e.Reason, e.Host})
	}
	assert.Equal(t, []got{
		{EventRequested, 1, "engineer", "", "laptop"},
		{EventAnswered, 1, "architect", "", "ci"},
		{EventFollowedUp, 2, "engineer", "", "ci"},
		{EventStale, 2, HubAgent, "no answer in 4h", ""},
	}, out)
}
