package router

import (
	"slices"
	"sync"

	"github.com/agentx-cli/agentx/ledger"
)

// What holds an issue up is decided here, once, for every surface that
// asks: the ready gate (`ready`, and the exit 9 of `ready --issue N`), the
// strict finish hook, the agents' states and the deadlock monitor.
//
// The rule: a blocking question holds its issue up while it is unanswered,
// that is pending or stale (its asker waits for the one asked) or
// escalated (it waits for a person's decision). A non-blocking question
// never does, whatever its status, escalated included: its asker said it
// keeps working without the answer, and a person's decision on it reaches
// the asker like any answer. An answered question holds nothing up (the
// asker has an answer to act on), and resolved and abandoned ones are
// closed.
//
// Beside the clarifications, two other things hold an issue up, and are
// listed as blockers of their own rule: work the supervisor gate sent back
// for revision (BlockSentBack, made by internal/gate/evaluate), and a
// ledger that cannot be read (BlockUnreadable: the gate fails closed).

// BlockRule names the rule by which something holds an issue up.
type BlockRule string

// The rules.
const (
	// BlockUnanswered: a blocking question is pending or stale.
	BlockUnanswered BlockRule = "blocking_unanswered"
	// BlockEscalated: a blocking question is escalated, awaiting a
	// person's decision.
	BlockEscalated BlockRule = "blocking_escalated"
	// BlockSentBack: the supervisor gate sent a step's work back for
	// revision.
	BlockSentBack BlockRule = "sent_back"
	// BlockUnreadable: the issue's ledger cannot be read.
	BlockUnreadable BlockRule = "ledger_unreadable"
)

// Blocker is one thing that holds an issue up, and the rule by which.
type Blocker struct {
	ID     string // the clarification, or the evaluation (EVAL-N-M); "" for an unreadable ledger
	Rule   BlockRule
	From   string        // the asker (sent back: the worker)
	On     string        // whom it waits on: the one asked, or human once escalated
	Status ledger.Status // the clarification's status
	// Why says it in a sentence, for the rules whose subject is not a
	// clarification: sent back (which checks failed), unreadable (the
	// read error).
	Why string
}

// Blocks is the rule on one clarification: whether a clarification with
// this blocking flag and status holds its issue up, and by which rule.
func Blocks(blocking bool, s ledger.Status) (BlockRule, bool) {
	if !blocking {
		return "", false
	}
	switch s {
	case ledger.Pending, ledger.Stale:
		return BlockUnanswered, true
	case ledger.Escalated:
		return BlockEscalated, true
	}
	return "", false
}

// Blockers returns what of an issue's open clarifications holds it up, in
// the order given (ledger order).
func Blockers(es []ledger.IndexEntry) []Blocker {
	var out []Blocker
	for _, e := range es {
		if b, ok := BlockerOf(e); ok {
			out = append(out, b)
		}
	}
	return out
}

// BlockerOf is the blocker e is, if it is one.
func BlockerOf(e ledger.IndexEntry) (Blocker, bool) {
	rule, ok := Blocks(e.Blocking, e.Status)
	if !ok {
		return Blocker{}, false
	}
	on := e.To
	if rule == BlockEscalated {
		on = ledger.Human
	}
	return Blocker{ID: e.ID, Rule: rule, From: e.From, On: on, Status: e.Status}, true
}

// Blockers returns what holds issue up: its open clarifications, by the
// rule above, then what the registered holds (RegisterHolds) hold it up by.
func (h *Hub) Blockers(issue int) ([]Blocker, error) {
	es, err := h.Store.OpenEntries(issue)
	if err != nil {
		return nil, err
	}
	bs := Blockers(es)
	for _, s := range registeredHolds() {
		more, err := s.Blockers(h.Store, issue)
		if err != nil {
			return nil, err
		}
		bs = append(bs, more...)
	}
	return bs, nil
}

// Holds is a source of what holds issues up beside their clarifications:
// the supervisor gate's work sent back for revision (BlockSentBack). The
// gate registers its own (RegisterHolds) rather than router reading the
// gate's records: the gate imports router, so router cannot import it.
// Every caller of Hub.Ready and Hub.Blockers, whatever its front end, so
// gets the one answer.
type Holds interface {
	// HeldIssues lists the issues it may hold up (any order; an issue it
	// lists may turn out to hold nothing).
	HeldIssues(store *ledger.Store) ([]int, error)
	// Blockers is what it holds issue up by, in its order (none: nil).
	Blockers(store *ledger.Store, issue int) ([]Blocker, error)
}

var holds struct {
	sync.Mutex
	list []Holds
}

// RegisterHolds adds s to what every hub's Ready and Blockers consult; a
// package registers its holds once, when it is loaded.
func RegisterHolds(s Holds) {
	holds.Lock()
	defer holds.Unlock()
	holds.list = append(holds.list, s)
}

func registeredHolds() []Holds {
	holds.Lock()
	defer holds.Unlock()
	return slices.Clip(holds.list)
}

// Readiness is whether an issue may proceed.
type Readiness struct {
	Issue   int      `json:"issue"`
	State   string   `json:"state"` // READY, BLOCKED or ESCALATED
	Reason  string   `json:"reason,omitempty"`
	Blocked []string `json:"blockedBy"` // ids of the clarifications (and evaluations) in the way
	// Blockers are what holds the issue up, with their rules; the front
	// end words Reason from the first of them that gives the state.
	Blockers []Blocker `json:"-"`
}

// The readiness states.
const (
	StateReady     = "READY"
	StateBlocked   = "BLOCKED"
	StateEscalated = "ESCALATED"
)

// ReadinessOf is an issue's readiness given what holds it up: ESCALATED
// while a blocker awaits a person's decision, BLOCKED while anything else
// holds it up, else READY. Reason is left to the front end (see Cause).
func ReadinessOf(issue int, bs []Blocker) Readiness {
	r := Readiness{Issue: issue, State: StateReady, Blocked: []string{}, Blockers: bs}
	for _, b := range bs {
		if b.ID != "" {
			r.Blocked = append(r.Blocked, b.ID)
		}
		switch {
		case b.Rule == BlockEscalated:
			r.State = StateEscalated
		case r.State == StateReady:
			r.State = StateBlocked
		}
	}
	return r
}

// Cause is the blocker that gives r its state: the first escalated one
// when ESCALATED, else the first one. ok is false when r is READY.
func (r Readiness) Cause() (b Blocker, ok bool) {
	for _, b := range r.Blockers {
		if r.State != StateEscalated || b.Rule == BlockEscalated {
			return b, true
		}
	}
	return Blocker{}, false
}
