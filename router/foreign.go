package router

import (
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// ForeignEvents are the events of what another AgentX tool wrote to the
// ledgers (the VS Code extension, the PowerShell CLI: they keep no event
// log of agentx's), as a reader that may write found it (ledger.Index's
// Foreign), at now, marked ViaForeign: a question asked on a new issue or
// where agentx had nothing open, an answer, a follow-up, an escalation or
// a resolution written to a question agentx knew open. The inbox delivers
// them, the channels mirror them. What the tool wrote is known only as far
// as the index knew the question before: its status and round, so the
// entries of later rounds (and a pending round's answers) are new.
func ForeignEvents(changes []ledger.ForeignChange, now time.Time) []Event {
	var out []Event
	for _, fc := range changes {
		if fc.Ledger == nil {
			continue
		}
		known := make(map[string]ledger.IndexEntry, len(fc.Before))
		for _, e := range fc.Before {
			known[e.ID] = e
		}
		for _, c := range fc.Ledger.Clarifications {
			b, ok := known[c.ID]
			switch {
			case !ok && c.Status.Open():
				out = append(out, changeEvents(fc.Issue, nil, c, now, ViaForeign, "")...)
			case ok && (b.Status != c.Status || b.Round != c.Round):
				out = append(out, changeEvents(fc.Issue, asKnown(c, b), c, now, ViaForeign, "")...)
			}
		}
	}
	return out
}

// asKnown is c as the index entry b knew it: b's status, and the thread up
// to where b's round and status put it (a pending round ends at its
// question; any other status at the round's last entry).
func asKnown(c *ledger.Clarification, b ledger.IndexEntry) *ledger.Clarification {
	was := *c
	was.Status = b.Status
	n := 0
	for i, en := range c.Thread {
		if en.Round < b.Round || en.Round == b.Round && (b.Status != ledger.Pending || en.Type == ledger.Question) {
			n = i + 1
		}
	}
	was.Thread = c.Thread[:n]
	return &was
}
