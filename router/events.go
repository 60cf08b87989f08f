package router

import (
	"time"

	"github.com/agentx-cli/agentx/internal/eventlog"
	"github.com/agentx-cli/agentx/ledger"
)

// The event log is package eventlog, beside the ledgers; these are its
// names as the hub and its callers have always used them.
type (
	EventType   = eventlog.EventType
	Event       = eventlog.Event
	EventLog    = eventlog.EventLog
	EventFilter = eventlog.EventFilter
	ReadResult  = eventlog.ReadResult
	Line        = eventlog.Line
)

// The event types (see eventlog).
const (
	EventRequested           = eventlog.EventRequested
	EventAnswered            = eventlog.EventAnswered
	EventFollowedUp          = eventlog.EventFollowedUp
	EventStale               = eventlog.EventStale
	EventResolved            = eventlog.EventResolved
	EventEscalated           = eventlog.EventEscalated
	EventAbandoned           = eventlog.EventAbandoned
	EventResponderFailed     = eventlog.EventResponderFailed
	EventSuperseded          = eventlog.EventSuperseded
	EventRemoteRefused       = eventlog.EventRemoteRefused
	EventClockSkew           = eventlog.EventClockSkew
	EventRenumbered          = eventlog.EventRenumbered
	EventChangeSuperseded    = eventlog.EventChangeSuperseded
	EventProposalCreated     = eventlog.EventProposalCreated
	EventProposalEvidence    = eventlog.EventProposalEvidence
	EventProposalApproved    = eventlog.EventProposalApproved
	EventProposalRejected    = eventlog.EventProposalRejected
	EventProposalImplemented = eventlog.EventProposalImplemented
	EventScopeRefused        = eventlog.EventScopeRefused
	EventLockTimeout         = eventlog.EventLockTimeout
	ViaRemote                = eventlog.ViaRemote
	ViaForeign               = eventlog.ViaForeign
)

// EventFor is eventlog.EventFor.
func EventFor(t EventType, issue int, c *ledger.Clarification, now time.Time) Event {
	return eventlog.EventFor(t, issue, c, now)
}
