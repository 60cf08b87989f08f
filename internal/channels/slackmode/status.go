package slackmode

import (
	"errors"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/ledger"
)

// Status is how far Slack mode is behind, for agentx slack status. It
// reads the local files only: no call to Slack.
type Status struct {
	Channel string `json:"channel"`
	APIURL  string `json:"apiUrl"`
	// EventsBehind is how much of the event log (in bytes) no run has
	// read yet: changes made since the last run.
	EventsBehind int64               `json:"eventsBehind"`
	Behind       []relay.BehindIssue `json:"behind"`              // issues whose threads are behind
	Threads      int                 `json:"threads"`             // open threads read for replies
	WaitUntil    *ledger.Time        `json:"waitUntil,omitempty"` // Slack's rate limit holds calls until then
	LastRead     *ledger.Time        `json:"lastRead,omitempty"`  // when the threads were last read
	ReadError    string              `json:"readError,omitempty"` // why the last read failed
}

// Status reads the outbox and the inbound state.
func (m *Mode) Status() (Status, error) {
	st := Status{Channel: m.Config.Channel, APIURL: m.Config.APIURL, Behind: []relay.BehindIssue{}}
	var ob Outbox
	var in Inbound
	err := errors.Join(m.file(OutboxFile).Read(&ob), m.file(InboundFile).Read(&in))
	if err != nil {
		return st, err
	}
	st.EventsBehind, st.Behind, err = m.outbox().Status(ob.Queue, func(c *ledger.Clarification) int {
		th, _ := chanref.SlackThreadOf(c) // unreadable: no entry counts as posted (a sync says why)
		return len(unposted(c, th))
	})
	if err != nil {
		return st, err
	}
	open, err := m.openThreads()
	if err != nil {
		return st, err
	}
	st.Threads = len(open)
	st.WaitUntil = relay.Later(ob.WaitUntil, in.WaitUntil)
	if until := m.hold().Until(); until.After(m.Hub.Store.Now()) {
		u := ledger.T(until)
		st.WaitUntil = relay.Later(st.WaitUntil, &u)
	}
	st.LastRead, st.ReadError = in.Polled, in.Error
	return st, nil
}
