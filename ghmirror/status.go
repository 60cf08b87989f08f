package ghmirror

import (
	"github.com/agentx-cli/agentx/internal/relay"
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
type BehindIssue struct {
	Issue      int          `json:"issue"`
	Since      ledger.Time  `json:"since"`
	Attempts   int          `json:"attempts"`
	RetryAt    *ledger.Time `json:"retryAt,omitempty"`
	Error      string       `json:"error,omitempty"`
	Unmirrored int          `json:"unmirrored"` // thread entries with no comment yet
}

// Status reads the outbox and the inbound state.
func (m *Mirror) Status() (Status, error) {
	st := Status{Repo: m.Config.Repo, APIURL: m.Config.APIURL, Behind: []BehindIssue{}}
	var ob Outbox
	if err := m.file(OutboxFile).Read(&ob); err != nil {
		return st, err
	}
	var in Inbound
	if err := m.file(InboundFile).Read(&in); err != nil {
		return st, err
	}
	behind, queue, err := m.outbox().Behind(ob.Queue)
	if err != nil {
		return st, err
	}
	st.EventsBehind = behind
	st.WaitUntil, st.Rate = ob.WaitUntil, ob.Rate
	if in.WaitUntil != nil && (st.WaitUntil == nil || in.WaitUntil.After(st.WaitUntil.Time)) {
		st.WaitUntil = in.WaitUntil
	}
	st.LastRead, st.ReadError = in.Polled, in.Error
	for _, n := range relay.Sorted(queue) {
		b := queue[issueKey(n)]
		bi := BehindIssue{Issue: n, Since: b.Since, Attempts: b.Attempts, RetryAt: b.RetryAt, Error: b.Error}
		if l, err := m.Hub.Store.Read(n); err == nil {
			for _, c := range l.Clarifications {
				for i := range c.Thread {
					if refOf(c, i) == nil {
						bi.Unmirrored++
					}
				}
			}
		}
		st.Behind = append(st.Behind, bi)
	}
	return st, nil
}
