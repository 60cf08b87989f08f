package router

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// The changes a writer hands to the process holding its issue's lock when
// the issue is busy (ledger.Store.Hand, group commit): answers,
// assumptions, follow-ups, resolutions, abandons (a cancel is one) and
// escalations by hand: the changes agents and people make on one issue. Their Changers are also the code that makes them in this
// process: one path.

// Kinds of ledger.Change the hub makes.
const (
	changeAnswer   = "answer"
	changeAssume   = "assume"
	changeResolve  = "resolve"
	changeFollowup = "followup"
	changeAbandon  = "abandon"
	changeEscalate = "escalate"
)

// changerOf is the hub's Changer of kind (a switch, not a table made at
// start: TestInitDoesNoWork).
func changerOf(kind string) ledger.Changer {
	switch kind {
	case changeAnswer:
		return answerChange{}
	case changeAssume:
		return assumeChange{}
	case changeResolve:
		return resolveChange{}
	case changeFollowup:
		return followupChange{}
	case changeAbandon:
		return abandonChange{}
	case changeEscalate:
		return escalateChange{}
	}
	return nil
}

// handle has s make the hub's changes for the processes that hand them.
func handle(s *ledger.Store) {
	for _, kind := range []string{changeAnswer, changeAssume, changeResolve, changeFollowup, changeAbandon, changeEscalate} {
		s.Handle(kind, changerOf(kind))
	}
}

// hand makes ch (At, when not set, set here) through the issue's
// hand-off (ledger.Store.Hand). Under a Once (WithOnce), whose guard reads
// the ledger under the lock, it is made as change makes a change, by this
// process.
func (h *Hub) hand(ctx context.Context, ch ledger.Change) (Record, error) {
	if o, _ := ctx.Value(onceKey{}).(*Once); o != nil {
		return h.makeHere(ctx, ch)
	}
	issue, _, err := ledger.ParseID(ch.ID)
	if err != nil {
		return Record{}, err
	}
	if ch.At.IsZero() {
		ch.At = h.now()
	}
	c, err := h.Store.Hand(ctx, ch)
	if err != nil {
		return Record{}, h.lockTimedOut(err, func() Event { return h.about(issue, ch.ID) })
	}
	return Record{IssueNumber: issue, Clarification: c}, nil
}

// makeHere makes ch in this process, under the issue's lock, as change
// makes a change: never handed to another process.
func (h *Hub) makeHere(ctx context.Context, ch ledger.Change) (Record, error) {
	return h.change(ctx, ch.ID, func(c *ledger.Clarification, now time.Time) error {
		if ch.At.IsZero() {
			ch.At = now
		}
		return changerOf(ch.Kind).Make(c, ch)
	})
}

// actorOf is who makes a change to id and the person who signs it (""
// for an agent): from, or, when "", the party of the record def names (a
// change names who makes it, so the record is read first).
func (h *Hub) actorOf(ctx context.Context, id, from string, def func(Record) string) (string, string, error) {
	if from == "" {
		rec, err := h.get(id)
		if err != nil {
			return "", "", err
		}
		from = def(rec)
	}
	signer, err := person(ctx, from)
	return from, signer, err
}

// args is v as a Change's Args.
func args(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the hub's own argument types always encode
	}
	return b
}

// answerArgs are an answer's: the reply, the round a responder answers
// (0: the current one) and the person who signs it ("" for an agent).
type answerArgs struct {
	Reply  Reply  `json:"reply"`
	Round  int    `json:"round,omitempty"`
	Signer string `json:"signer,omitempty"`
}

// answerChange makes an answer: By is the one answering (the record's
// target or a human), At the thread entry's time.
type answerChange struct{}

func (answerChange) Make(c *ledger.Clarification, ch ledger.Change) error {
	var a answerArgs
	if err := json.Unmarshal(ch.Args, &a); err != nil {
		return err
	}
	if err := inRound(c, a.Round); err != nil {
		return err
	}
	from := ch.By
	if from != c.To && from != ledger.Human {
		return partyError(c, from, OpAnswer, "answer", c.To, ledger.Human)
	}
	// A person's further reply to an answered round (people clarify in
	// several messages) is one more answer of the round, not an error.
	further := c.Status == ledger.Answered && from == ledger.Human
	body, choice, err := pick(c, a.Reply)
	if err != nil {
		return err
	}
	// A further note is welcome; a second pick of an option is not: the
	// first answer that picked one stands, wherever it came from.
	if further && choice != nil {
		if first := pickedInRound(c); first != nil {
			return &PickedError{ID: c.ID, First: *first}
		}
	}
	if err := c.Move(ledger.Answered); err != nil && !further {
		return err
	}
	c.Thread = append(c.Thread, entry(c, from, ledger.Answer, body, ch.At))
	c.Sign(a.Signer)
	c.Chose(choice)
	return nil
}

// Made: c's thread holds an answer of ch.By's at ch.At.
func (answerChange) Made(c *ledger.Clarification, ch ledger.Change) bool {
	return hasEntry(c, ledger.Answer, ch)
}

// hasEntry reports whether c's thread holds an entry of type t by ch.By
// at ch.At.
func hasEntry(c *ledger.Clarification, t ledger.EntryType, ch ledger.Change) bool {
	for _, e := range c.Thread {
		if e.Type == t && e.From == ch.By && e.Timestamp.Equal(ch.At) {
			return true
		}
	}
	return false
}

// assumeArgs are an assumption's: what the asker proceeds on, and the
// earlier decision it reuses (nil: none).
type assumeArgs struct {
	Body   string        `json:"body"`
	Reuses *ledger.Reuse `json:"reuses,omitempty"`
}

// assumeChange records an assumption: By is the asker ("": the record's),
// At the assumption's time.
type assumeChange struct{}

func (assumeChange) Make(c *ledger.Clarification, ch ledger.Change) error {
	var a assumeArgs
	if err := json.Unmarshal(ch.Args, &a); err != nil {
		return err
	}
	by := ch.By
	if by == "" {
		by = c.From
	}
	if by != c.From {
		return partyError(c, by, OpAssume, "record an assumption on", c.From)
	}
	if c.Status.Final() {
		return &ledger.TransitionError{ID: c.ID, From: c.Status, To: c.Status}
	}
	x := c.Ext()
	x.Assumptions = append(x.Assumptions, ledger.Assumption{Round: c.Round, By: by, Body: a.Body, Timestamp: ledger.T(ch.At), Reuses: a.Reuses})
	return nil
}

// Made: c holds the assumption, by its asker, at ch.At.
func (assumeChange) Made(c *ledger.Clarification, ch ledger.Change) bool {
	var a assumeArgs
	if json.Unmarshal(ch.Args, &a) != nil || c.X == nil {
		return false
	}
	for _, x := range c.X.Assumptions {
		if x.Body == a.Body && x.By == c.From && x.Timestamp.Equal(ch.At) {
			return true
		}
	}
	return false
}

// resolveArgs are a resolution's: the reply (its text or the option
// picked), the decision's summary ("": none) and the person who signs it.
type resolveArgs struct {
	Reply   Reply  `json:"reply"`
	Summary string `json:"summary,omitempty"`
	Signer  string `json:"signer,omitempty"`
}

// resolveChange closes a clarification: By is the asker, a human or the
// hub, At the resolution's time.
type resolveChange struct{}

func (resolveChange) Make(c *ledger.Clarification, ch ledger.Change) error {
	var a resolveArgs
	if err := json.Unmarshal(ch.Args, &a); err != nil {
		return err
	}
	from := ch.By
	if c.Status == ledger.Escalated && from != ledger.Human {
		return partyError(c, from, OpResolve, "resolve the escalated", ledger.Human)
	}
	if from != c.From && from != ledger.Human && from != HubAgent {
		return partyError(c, from, OpResolve, "resolve", c.From, ledger.Human)
	}
	if c.Status == ledger.Resolved || c.Status == ledger.Abandoned {
		return settledError(c, ledger.Resolved) // a race lost: say who won, not what the options were
	}
	// the options are read before the move: an escalation's are its own
	text, choice, err := pick(c, a.Reply)
	if err != nil {
		return err
	}
	if err := c.Move(ledger.Resolved); err != nil {
		return err
	}
	if text == "" {
		text = "Resolved."
		if ans := c.RoundAnswer(); ans != "" {
			text = "Resolved with the answer: " + ans
		}
	}
	c.Thread = append(c.Thread, entry(c, from, ledger.Resolution, text, ch.At))
	c.Sign(a.Signer)
	c.Chose(choice)
	if a.Summary != "" {
		c.Ext().Summary = a.Summary
	}
	t := ledger.T(ch.At)
	c.ResolvedAt = &t
	return nil
}

// Made: c's thread holds a resolution of ch.By's at ch.At.
func (resolveChange) Made(c *ledger.Clarification, ch ledger.Change) bool {
	return hasEntry(c, ledger.Resolution, ch)
}

// followupChange asks the next round: By is the asker, At the follow-up's
// time, Args its body (a JSON string). At the round limit it escalates
// instead, with the follow-up as the asker's latest position.
type followupChange struct{}

func (followupChange) Make(c *ledger.Clarification, ch ledger.Change) error {
	var body string
	if err := json.Unmarshal(ch.Args, &body); err != nil {
		return err
	}
	from := ch.By
	if from != c.From {
		return partyError(c, from, OpFollowup, "follow up on", c.From)
	}
	if c.Status != ledger.Answered {
		return &ledger.TransitionError{ID: c.ID, From: c.Status, To: ledger.Pending}
	}
	if c.MaxRounds > 0 && c.Round >= c.MaxRounds {
		reason := fmt.Sprintf("round limit reached (%d of %d) without resolution", c.Round, c.MaxRounds)
		return escalate(c, issueOf(c), reason, body, ch.At)
	}
	sla := roundSLA(c)
	if err := c.Move(ledger.Pending); err != nil {
		return err
	}
	c.Round++
	c.Thread = append(c.Thread, entry(c, from, ledger.Question, body, ch.At))
	c.StaleAfter = ledger.T(ch.At.Add(sla))
	return nil
}

// Made: c's thread holds the follow-up (a question of ch.By's at ch.At),
// or the escalation it made at the round limit (the hub's, at ch.At).
func (followupChange) Made(c *ledger.Clarification, ch ledger.Change) bool {
	return hasEntry(c, ledger.Question, ch) || escalateChange{}.Made(c, ledger.Change{By: HubAgent, At: ch.At})
}

// abandonArgs are an abandon's: its thread entry and the person who signs
// it ("" for an agent or the hub).
type abandonArgs struct {
	Body   string `json:"body"`
	Signer string `json:"signer,omitempty"`
}

// abandonChange closes a clarification nobody will finish: By is who
// closes it (an agent, human, or the hub), At the entry's time.
type abandonChange struct{}

func (abandonChange) Make(c *ledger.Clarification, ch ledger.Change) error {
	var a abandonArgs
	if err := json.Unmarshal(ch.Args, &a); err != nil {
		return err
	}
	if err := c.Move(ledger.Abandoned); err != nil {
		return err
	}
	c.Thread = append(c.Thread, entry(c, ch.By, ledger.Resolution, a.Body, ch.At))
	c.Sign(a.Signer)
	return nil
}

// Made: c's thread holds a closing entry of ch.By's at ch.At.
func (abandonChange) Made(c *ledger.Clarification, ch ledger.Change) bool {
	return hasEntry(c, ledger.Resolution, ch)
}

// escalateChange hands a clarification to a human by hand: By is the
// hub (its entry's author), At the entry's time, Args the reason (a JSON
// string).
type escalateChange struct{}

func (escalateChange) Make(c *ledger.Clarification, ch ledger.Change) error {
	var reason string
	if err := json.Unmarshal(ch.Args, &reason); err != nil {
		return err
	}
	return escalate(c, issueOf(c), reason, "", ch.At)
}

// Made: c's thread holds the hub's escalation at ch.At.
func (escalateChange) Made(c *ledger.Clarification, ch ledger.Change) bool {
	return hasEntry(c, ledger.Escalation, ch)
}
