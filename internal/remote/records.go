package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/ledger"
)

// recState is a record as it was before a change.
type recState struct {
	status  ledger.Status
	thread  int
	assumed int             // its assumptions (agentx's key)
	raw     json.RawMessage // its JSON as agentx writes it (a sealed record's: see whole)
	sealed  json.RawMessage // a sealed record's bytes as read
}

// whole fills in what a sealed record held (its thread, its JSON), decoded
// as Find would decode it, for a record the change opened: only then is it
// decoded, so a write that opens no closed record decodes none.
func (r *recState) whole() *recState {
	if r != nil && r.sealed != nil && r.raw == nil {
		if c, err := ledger.DecodeRecord(r.sealed); err == nil {
			r.thread, r.assumed = len(c.Thread), len(assumptions(c))
			r.raw, _ = ledger.RecordJSON(c)
		}
	}
	return r
}

func recStates(l *ledger.Ledger) map[string]*recState {
	m := make(map[string]*recState, len(l.Clarifications))
	for _, c := range l.Clarifications {
		r := &recState{status: c.Status, thread: len(c.Thread), assumed: len(assumptions(c)), sealed: c.SealedJSON()}
		if r.sealed == nil {
			r.raw, _ = ledger.RecordJSON(c)
		}
		m[c.ID] = r
	}
	return m
}

// assumptions are c's assumptions (nil: none).
func assumptions(c *ledger.Clarification) []ledger.Assumption {
	if c.X == nil {
		return nil
	}
	return c.X.Assumptions
}

// changeMessage names what a change did, for a commit message and the outbox:
// "CLR-42-001 answered by architect", one phrase per record changed; ""
// when it changed nothing.
func changeMessage(before map[string]*recState, l *ledger.Ledger) string {
	var out []string
	for _, c := range l.Clarifications {
		if c.Sealed() {
			continue
		}
		was, existed := before[c.ID]
		was = was.whole()
		by := ""
		if n := len(c.Thread); n > 0 {
			by = c.Thread[n-1].From
		}
		switch {
		case !existed:
			out = append(out, fmt.Sprintf("%s asked by %s of %s", c.ID, c.From, c.To))
		case was.status != c.Status && c.Status == ledger.Pending:
			out = append(out, fmt.Sprintf("%s followed up by %s", c.ID, by))
		case was.status != c.Status:
			out = append(out, fmt.Sprintf("%s %s by %s", c.ID, c.Status, by))
		case len(c.Thread) > was.thread:
			out = append(out, fmt.Sprintf("%s %s by %s", c.ID, c.Thread[len(c.Thread)-1].Type, by))
		case len(assumptions(c)) > was.assumed:
			out = append(out, fmt.Sprintf("%s assumption by %s", c.ID, assumptions(c)[len(assumptions(c))-1].By))
		default:
			if b, err := ledger.RecordJSON(c); err != nil || !bytes.Equal(b, was.raw) {
				out = append(out, c.ID+" updated")
			}
		}
	}
	return strings.Join(out, "; ")
}

// sameRecord reports whether c is the record raw holds.
func sameRecord(c *ledger.Clarification, raw json.RawMessage) bool {
	other, err := ledger.DecodeRecord(raw)
	if err != nil {
		return false
	}
	a, err1 := ledger.RecordJSON(c)
	b, err2 := ledger.RecordJSON(other)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}
