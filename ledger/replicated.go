package ledger

import "encoding/json"

// The types a Replicator tells its callers with, and the optional check it
// offers: the hub turns them into events and refusals without importing
// the replication (internal/remote aliases them).

// Pulled is one clarification another host changed, as a fetch brought it:
// as this host had it (Before; nil when it is new here) and as the shared
// ledger now has it (After). Both are whole records.
type Pulled struct {
	Before *Clarification
	After  *Clarification
	// Host is the host named by the newest commit that changed it ("" when
	// the remote cannot say).
	Host string
}

// Outcome is what became of a queued change that was not delivered as
// made: OutcomeRenumbered (its new clarification took another id, As, as
// another host had taken its own) or OutcomeSuperseded (another host
// changed the clarification first; Winner is the record as it was then).
type Outcome struct {
	Outcome string `json:"outcome"`
	ID      string `json:"id"`
	As      string `json:"as,omitempty"`
	Message string `json:"message"`
	At      Time   `json:"at"`
	// By is the agent (or person) who made the change, when its record
	// says: who is told of the outcome.
	By     string          `json:"by,omitempty"`
	Winner json.RawMessage `json:"winner,omitempty"`
}

// Outcomes of queued changes.
const (
	OutcomeRenumbered = "renumbered"
	OutcomeSuperseded = "superseded"
)

// IDChecker is a Replicator that refuses some of the ids a caller names
// (remote mode: an id this host printed while the remote was out of
// reach, for a question since delivered under another id, which another
// host's question has now). The hub asks the store's Replicator for it
// before acting on an id a caller named; the ids it finds in the ledger
// itself are never refused.
type IDChecker interface {
	CheckID(id string) error
}
