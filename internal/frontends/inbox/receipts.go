package inbox

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
)

// The states of an answer's receipt, in order.
const (
	ReceiptAnswered  = "answered"  // recorded; its asker has not seen it
	ReceiptDelivered = "delivered" // its asker has seen it, by some way
	ReceiptConsumed  = "consumed"  // its asker acted after it
)

// What an asker did after an answer (Receipt.Consumed).
const (
	ConsumedFollowup   = "followup"   // asked a follow-up
	ConsumedResolved   = "resolved"   // the clarification was resolved
	ConsumedAbandoned  = "abandoned"  // the asker closed it
	ConsumedAssumption = "assumption" // recorded an assumption
)

// UndeliveredAfter is how long an answer may wait for its asker to see it
// before its receipt says it is overdue.
const UndeliveredAfter = 10 * time.Minute

// Receipt is what became of one answer entry of a clarification: whether
// its asker has seen it (when, and by which way) and acted after it. It is
// derived on read, from the asker's inbox marks and the ledger: answering
// and reading write nothing more for it.
type Receipt struct {
	Entry int    `json:"entry"` // the answer's index in the thread
	Round int    `json:"round"`
	By    string `json:"by"` // who answered
	To    string `json:"to"` // the asker
	State string `json:"state"`
	// Delivered is when the asker first saw the answer; nil when unknown
	// (a mark from before receipts, or one pruned since) or not delivered.
	Delivered *ledger.Time `json:"delivered,omitempty"`
	// Via is the way it was delivered (see the Via constants); "" when
	// unknown or not delivered.
	Via string `json:"via,omitempty"`
	// Consumed says what the asker did after it, ConsumedAt when.
	Consumed   string       `json:"consumed,omitempty"`
	ConsumedAt *ledger.Time `json:"consumedAt,omitempty"`
	// Overdue says the answer has waited UndeliveredAfter and more for
	// its asker, who has neither seen it nor acted since.
	Overdue bool `json:"overdue,omitempty"`
}

// Receipts returns the receipt of each answer entry of c, in thread
// order, reading its asker's inbox state (nothing for a human asker, who
// has no inbox). It takes no lock and writes nothing.
func Receipts(store *ledger.Store, c *ledger.Clarification) ([]Receipt, error) {
	if c == nil || c.From == "" || ledger.IsHuman(c.From) || ledger.ValidateAgent("agent", c.From) != nil {
		return nil, nil
	}
	var st State
	if err := store.ReadState(StateFile(c.From), &st); err != nil {
		return nil, fmt.Errorf("inbox %s: %w", c.From, err)
	}
	return receipts(st, c, store.Now()), nil
}

// receipts is Receipts from the asker's state st, at now.
func receipts(st State, c *ledger.Clarification, now time.Time) []Receipt {
	var out []Receipt
	m, marked := st.Marks[c.ID]
	for i := range c.Thread {
		e := &c.Thread[i]
		if e.Type != ledger.Answer {
			continue
		}
		r := Receipt{Entry: i, Round: e.Round, By: e.From, To: c.From, State: ReceiptAnswered}
		switch {
		case marked && m.Entries > i:
			r.State = ReceiptDelivered
			for _, s := range m.Via {
				if s.Entries > i {
					at := s.At
					r.Delivered, r.Via = &at, s.Via
					break
				}
			}
		case st.Seen != nil && st.Offset > 0 && !st.Seen.Before(e.Timestamp.Time):
			// the inbox settled the log past the answer's event: delivered,
			// its mark pruned since
			r.State = ReceiptDelivered
		}
		if what, at := consumed(c, i); what != "" {
			r.State, r.Consumed, r.ConsumedAt = ReceiptConsumed, what, at
		}
		r.Overdue = r.State == ReceiptAnswered && now.Sub(e.Timestamp.Time) >= UndeliveredAfter
		out = append(out, r)
	}
	return out
}

// consumed says what the asker of c did first after its answer entry i,
// and when: a follow-up, a resolution (by anyone) or its abandonment, or
// an assumption it recorded.
func consumed(c *ledger.Clarification, i int) (string, *ledger.Time) {
	answer := c.Thread[i].Timestamp
	what, at := "", (*ledger.Time)(nil)
	for j := i + 1; j < len(c.Thread) && what == ""; j++ {
		e := &c.Thread[j]
		switch {
		case e.Type == ledger.Question && e.From == c.From:
			what = ConsumedFollowup
		case e.Type == ledger.Resolution && c.Status == ledger.Abandoned && e.From == c.From:
			what = ConsumedAbandoned
		case e.Type == ledger.Resolution && c.Status == ledger.Resolved:
			what = ConsumedResolved
		default:
			continue
		}
		t := e.Timestamp
		at = &t
	}
	if c.X != nil {
		for _, a := range c.X.Assumptions {
			if a.By == c.From && a.Timestamp.After(answer.Time) && (at == nil || a.Timestamp.Before(at.Time)) {
				t := a.Timestamp
				what, at = ConsumedAssumption, &t
			}
		}
	}
	return what, at
}

// Line is the receipt in one line of text: who has the answer, since
// when, by which way, and what they did after it.
func (r Receipt) Line() string {
	var parts []string
	if r.State == ReceiptAnswered {
		s := "not delivered yet"
		if r.Overdue {
			s = fmt.Sprintf("NOT DELIVERED to %s (overdue: more than %s)", safetext.Line(r.To), UndeliveredAfter)
		}
		return s
	}
	if r.State == ReceiptDelivered || r.Delivered != nil || r.Via != "" {
		s := "delivered to " + safetext.Line(r.To)
		if r.Delivered != nil {
			s += " " + r.Delivered.UTC().Format("15:04") + " UTC"
		}
		if r.Via != "" {
			s += " via " + safetext.Line(r.Via)
		}
		parts = append(parts, s)
	}
	if r.Consumed != "" {
		parts = append(parts, "consumed ("+r.Consumed+")")
	}
	return strings.Join(parts, " · ")
}
