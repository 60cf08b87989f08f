package ghmirror

import (
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/ledger"
)

// The files GitHub mode keeps, in .agentx/state/github/. Both are local
// and advisory (relay.File): losing one costs a re-read, never a duplicate
// comment (the ledger records what is posted, and what was taken).
const (
	Dir         = "github"
	OutboxFile  = "outbox.json"
	InboundFile = "inbound.json"
)

// Outbox is what the mirror still owes GitHub, and where it got to.
type Outbox struct {
	relay.Queue
	// Labels are the status labels agentx set on each issue, so that
	// only a change costs a call, and agentx removes only its own.
	Labels map[string][]string `json:"labels,omitempty"`
	// Rate is the rate limit GitHub last reported.
	Rate *Rate `json:"rate,omitempty"`
}

// Behind is one issue whose mirror is behind.
type Behind = relay.Behind

// Rate is a rate limit as GitHub reported it.
type Rate struct {
	Limit     int         `json:"limit"`
	Remaining int         `json:"remaining"`
	Reset     ledger.Time `json:"reset"`
}

// Inbound is where reading comments got to.
type Inbound struct {
	// Since is the update time of the newest comment read; the next read
	// asks for comments updated since then.
	Since *ledger.Time `json:"since,omitempty"`
	// ETag is GitHub's tag of the last answer to that read, for a
	// conditional read that costs nothing when nothing changed.
	ETag string `json:"etag,omitempty"`
	// Seen are the comments updated at Since already handled (GitHub's
	// since is inclusive).
	Seen []int64 `json:"seen,omitempty"`
	relay.Throttle
}

func (m *Mirror) file(name string) relay.File {
	return relay.FileIn(m.Hub.Store.Dir(), Dir, name)
}

// outbox is the mirror's outbox over the hub's event log.
func (m *Mirror) outbox() *relay.Outbox {
	return &relay.Outbox{File: m.file(OutboxFile), Store: m.Hub.Store, Events: m.Hub.Events, Service: "GitHub"}
}

// ErrBusy is another agentx process doing the same GitHub work right now:
// this one leaves it to that one.
var ErrBusy = relay.ErrBusy
