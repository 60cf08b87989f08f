package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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
	inPlace bool            // read sealed in place (from a file, no bytes kept)
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
		r.inPlace = c.Sealed() && r.sealed == nil
		if r.sealed == nil {
			r.raw, _ = ledger.RecordJSON(c)
		}
		m[c.ID] = r
	}
	return m
}

// sealedAsBefore reports whether c, read sealed, is the record was was:
// the same status and, where both were read from bytes, the same bytes
// (records read in place from one file, as a write reads its ledger, are
// one read). A record a change closed, read from the change's bytes (an
// intent's, a pulled commit's), is read sealed too, and is not as before.
func sealedAsBefore(was *recState, c *ledger.Clarification) bool {
	if !c.Sealed() || was.status != c.Status {
		return false
	}
	if b := c.SealedJSON(); b != nil {
		return bytes.Equal(b, was.sealed)
	}
	return was.inPlace
}

// assumptions are c's assumptions (nil: none).
func assumptions(c *ledger.Clarification) []ledger.Assumption {
	if c.X == nil {
		return nil
	}
	return c.X.Assumptions
}

// sameAssumption reports whether a and b are one assumption (as the
// ledger keeps it: its time to the millisecond).
func sameAssumption(a, b ledger.Assumption) bool {
	return a.Round == b.Round && a.By == b.By && a.Body == b.Body && a.Timestamp.Equal(b.Timestamp.Time) &&
		(a.Reuses == nil) == (b.Reuses == nil) && (a.Reuses == nil || *a.Reuses == *b.Reuses)
}

// hasAssumptions reports whether as holds every assumption of want.
func hasAssumptions(as, want []ledger.Assumption) bool {
	for _, w := range want {
		if !slices.ContainsFunc(as, func(a ledger.Assumption) bool { return sameAssumption(a, w) }) {
			return false
		}
	}
	return true
}

// rebased is what a change of a record from before (its JSON) to after
// makes of cur, the record as another change has left it since, when
// one of the two changes appended assumptions alone: what an asker
// proceeds on commutes with any other change. The assumptions after
// appended are added to cur (unless cur is closed), or those cur gained
// to after; cur itself when it holds after's already. ok false: the two
// conflict, and the change is superseded.
func rebased(before json.RawMessage, after, cur *ledger.Clarification) (merged *ledger.Clarification, ok bool) {
	switch {
	case cur == nil:
		return nil, false
	case onlyAssumed(before, after) && !cur.Status.Final():
		return withAssumptions(cur, after), true
	case onlyAssumed(before, cur):
		return withAssumptions(after, cur), true
	}
	return nil, false
}

// onlyAssumed reports whether x is the record before (its JSON) with
// assumptions appended, and nothing else changed.
func onlyAssumed(before json.RawMessage, x *ledger.Clarification) bool {
	b, err := ledger.DecodeRecord(before)
	if err != nil || len(assumptions(x)) <= len(assumptions(b)) || !hasAssumptions(assumptions(x)[:len(assumptions(b))], assumptions(b)) {
		return false
	}
	b.Ext().Assumptions = assumptions(x)
	bj, err1 := ledger.RecordJSON(b)
	xj, err2 := ledger.RecordJSON(x)
	return err1 == nil && err2 == nil && bytes.Equal(bj, xj)
}

// withAssumptions is c with the assumptions of from it lacks appended
// after its own: a copy, or c itself when it lacks none.
func withAssumptions(c, from *ledger.Clarification) *ledger.Clarification {
	m := c
	for _, a := range assumptions(from) {
		if hasAssumptions(assumptions(m), []ledger.Assumption{a}) {
			continue
		}
		if m == c {
			raw, err := ledger.RecordJSON(c)
			if err != nil {
				return c
			}
			if m, err = ledger.DecodeRecord(raw); err != nil {
				return c
			}
		}
		m.Ext().Assumptions = append(m.Ext().Assumptions, a)
	}
	return m
}

// changeMessage names what a change did, for a commit message and the outbox:
// "CLR-42-001 answered by architect", one phrase per record changed; ""
// when it changed nothing.
func changeMessage(before map[string]*recState, l *ledger.Ledger) string {
	var out []string
	for _, c := range l.Clarifications {
		was, existed := before[c.ID]
		if existed && sealedAsBefore(was, c) || !l.Open(c) {
			continue
		}
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
