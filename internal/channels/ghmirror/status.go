package ghmirror

import (
	"errors"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/ledger"
)

// Status is how far the mirror is behind, for agentx github status. It
// reads the local files only: no call to GitHub.
type Status struct {
	Repo   string `json:"repo"`
	APIURL string `json:"apiUrl"`
	// EventsBehind is how much of the event log (in bytes) no mirror run
	// has read yet: changes made since the last run.
	EventsBehind int64         `json:"eventsBehind"`
	Behind       []BehindIssue `json:"behind"`              // issues whose mirror is behind
	WaitUntil    *ledger.Time  `json:"waitUntil,omitempty"` // GitHub's rate limit holds calls until then
	Rate         *Rate         `json:"rate,omitempty"`      // as GitHub last reported it
	LastRead     *ledger.Time  `json:"lastRead,omitempty"`  // when comments were last read
	ReadError    string        `json:"readError,omitempty"` // why the last read failed
}

// BehindIssue is one queued issue.
type BehindIssue = relay.BehindIssue

// Status reads the outbox and the inbound state.
func (m *Mirror) Status() (Status, error) {
	st := Status{Repo: m.Config.Repo, APIURL: m.Config.APIURL, Behind: []BehindIssue{}}
	var ob Outbox
	var in Inbound
	err := errors.Join(m.file(OutboxFile).Read(&ob), m.file(InboundFile).Read(&in))
	if err != nil {
		return st, err
	}
	st.EventsBehind, st.Behind, err = m.outbox().Status(ob.Queue, func(c *ledger.Clarification) int {
		refs, _ := chanref.GitHubRefs(c) // unreadable: no entry counts as mirrored (a sync says why)
		count := 0
		for i := range c.Thread {
			if refAt(refs, i) == nil {
				count++
			}
		}
		return count
	})
	if err != nil {
		return st, err
	}
	st.WaitUntil, st.Rate = relay.Later(ob.WaitUntil, in.WaitUntil), ob.Rate
	st.LastRead, st.ReadError = in.Polled, in.Error
	return st, nil
}
