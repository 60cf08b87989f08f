package ledger

import (
	"fmt"
	"strings"
)

// Status is a clarification's place in its lifecycle.
type Status string

// The statuses of the AgentX ledger format.
const (
	Pending   Status = "pending"
	Answered  Status = "answered"
	Resolved  Status = "resolved"
	Stale     Status = "stale"
	Escalated Status = "escalated"
	Abandoned Status = "abandoned"
)

// Statuses lists every status in lifecycle order.
var Statuses = []Status{Pending, Answered, Stale, Escalated, Resolved, Abandoned}

// The lifecycle: the only moves a clarification may make. resolved and
// abandoned are final. (Slices of constants, laid out by the linker: a map
// would be built at every start of every command.)
var (
	fromPending   = []Status{Answered, Stale, Escalated, Abandoned}
	fromAnswered  = []Status{Pending, Resolved, Escalated, Abandoned}
	fromStale     = []Status{Pending, Answered, Escalated, Abandoned}
	fromEscalated = []Status{Resolved}
)

// transitions is where the lifecycle lets s move (nil: nowhere). The
// caller must not change the slice.
func transitions(s Status) []Status {
	switch s {
	case Pending:
		return fromPending
	case Answered:
		return fromAnswered
	case Stale:
		return fromStale
	case Escalated:
		return fromEscalated
	}
	return nil
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	switch s {
	case Pending, Answered, Stale, Escalated, Resolved, Abandoned:
		return true
	}
	return false
}

// Final reports whether no move leaves s.
func (s Status) Final() bool { return s == Resolved || s == Abandoned }

// Open reports whether a clarification in s still needs someone to act:
// everything but resolved and abandoned.
func (s Status) Open() bool {
	switch s {
	case Pending, Answered, Stale, Escalated:
		return true
	}
	return false
}

// Allowed returns the statuses that s may move to.
func (s Status) Allowed() []Status { return append([]Status(nil), transitions(s)...) }

// CanMove reports whether the lifecycle allows from → to.
func CanMove(from, to Status) bool {
	for _, s := range transitions(from) {
		if s == to {
			return true
		}
	}
	return false
}

// TransitionError is a move the lifecycle forbids.
type TransitionError struct {
	ID       string
	From, To Status
}

func (e *TransitionError) Error() string {
	allowed := transitions(e.From)
	if len(allowed) == 0 {
		return fmt.Sprintf("%s is %s, which is final: it cannot become %s", e.ID, e.From, e.To)
	}
	names := make([]string, len(allowed))
	for i, s := range allowed {
		names[i] = string(s)
	}
	return fmt.Sprintf("%s is %s: it cannot become %s (from %s it may become %s)",
		e.ID, e.From, e.To, e.From, strings.Join(names, ", "))
}

// statusList is the statuses for messages: pending, answered, ...
func statusList() string {
	names := make([]string, len(Statuses))
	for i, s := range Statuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
