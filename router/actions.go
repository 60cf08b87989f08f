package router

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

func entry(c *ledger.Clarification, from string, t ledger.EntryType, body string, now time.Time) ledger.ThreadEntry {
	round := c.Round
	if round < 1 {
		round = 1
	}
	return ledger.ThreadEntry{Round: round, From: from, Type: t, Body: body, Timestamp: ledger.T(now)}
}

// partyError refuses an agent that is not a party allowed to do op (an
// Op* constant; phrase is how the message says it) on c. It names who may,
// and leaves the front end to say how they do it.
func partyError(c *ledger.Clarification, who, op, phrase string, allowed ...string) error {
	allowed = slices.Compact(allowed)
	return &RuleError{
		Kind:    RuleParty,
		Msg:     fmt.Sprintf("%s may not %s %s: only %s may", who, phrase, c.ID, joinOr(allowed)),
		Allowed: allowed,
		ID:      c.ID,
		Op:      op,
	}
}

// The operations on a clarification that only its parties may do, as
// RuleError.Op names them.
const (
	OpAnswer   = "answer"
	OpFollowup = "followup"
	OpResolve  = "resolve"
	OpCancel   = "cancel"
	OpAssume   = "assume"
)

func joinOr(names []string) string {
	switch len(names) {
	case 0:
		return "nobody"
	case 1:
		return names[0]
	}
	out := names[0]
	for _, n := range names[1 : len(names)-1] {
		out += ", " + n
	}
	return out + " or " + names[len(names)-1]
}

// actor is who an event says acted: the agent, or human:NAME for a person.
func actor(from, person string) string {
	if from == ledger.Human {
		return ledger.HumanAs(person)
	}
	return from
}

// Answer records the target's (or a human's) answer to the current round.
// A human may reply again to an answered round: each reply is another
// answer entry of the round (and another event).
func (h *Hub) Answer(ctx context.Context, id, from, body string) (Record, error) {
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	return h.answer(ctx, id, from, Reply{Body: body}, 0)
}

// answer is Answer; a responder's answer gives the round it was run for,
// and is refused as superseded (*SupersededError) if the clarification is
// no longer waiting for an answer to that round.
func (h *Hub) answer(ctx context.Context, id, from string, r Reply, round int) (Record, error) {
	if err := validateReply("answer", r); err != nil {
		return Record{}, err
	}
	from, signer, err := h.actorOf(ctx, id, from, func(r Record) string { return r.To })
	if err != nil {
		return Record{}, err
	}
	ch := ledger.Change{Kind: changeAnswer, ID: id, By: from, What: "an answer", Args: args(answerArgs{Reply: r, Round: round, Signer: signer})}
	rec, err := h.hand(ctx, ch)
	if err != nil {
		return Record{}, err
	}
	h.changed(EventAnswered, rec, actor(from, signer), "")
	h.notify(ctx, "answer", rec) // a wake of any kind the team wires (a tmux pane, a webhook)
	return rec, nil
}

// Followup asks the next round. At the round limit it escalates instead,
// with the follow-up as the asker's latest position.
func (h *Hub) Followup(ctx context.Context, id, from, body string) (Record, error) {
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	if err := ledger.ValidateMessage("follow-up", body); err != nil {
		return Record{}, err
	}
	from, _, err := h.actorOf(ctx, id, from, func(r Record) string { return r.From })
	if err != nil {
		return Record{}, err
	}
	at := h.now().UTC().Truncate(time.Millisecond) // as the ledger keeps it
	rec, err := h.hand(ctx, ledger.Change{Kind: changeFollowup, ID: id, By: from, At: at, What: "a follow-up", Args: args(body)})
	if err != nil {
		return Record{}, err
	}
	if !hasEntry(rec.Clarification, ledger.Question, ledger.Change{By: from, At: at}) {
		// at the round limit: escalated, with the follow-up as the
		// asker's latest position (told by the question it did not
		// add: the record's status may be another change's of the same
		// write, made after it)
		h.escalated(ctx, rec)
		return rec, nil
	}
	h.changed(EventFollowedUp, rec, from, "")
	return h.respond(ctx, rec)
}

// DefaultSLA applies when a record carries no usable SLA.
const DefaultSLA = 30 * time.Minute

// roundSLA is how long the current round was given before going stale: the
// time from its question to staleAfter. Each new round gets the same.
func roundSLA(c *ledger.Clarification) time.Duration {
	start := c.Created.Time
	if q := c.Current(ledger.Question); q != nil {
		start = q.Timestamp.Time
	}
	if d := c.StaleAfter.Sub(start); d > 0 {
		return d
	}
	return DefaultSLA
}

func issueOf(c *ledger.Clarification) int {
	issue, _, _ := ledger.ParseID(c.ID)
	return issue
}

// Resolve closes a clarification: by its asker once answered, or by a human
// (also after escalation). ResolveReply also takes a summary of the
// decision.
func (h *Hub) Resolve(ctx context.Context, id, from, body string) (Record, error) {
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	return h.resolve(ctx, id, from, Reply{Body: body})
}

func (h *Hub) resolve(ctx context.Context, id, from string, r Reply) (Record, error) {
	if r.Body != "" {
		if err := validateReply("resolution", r); err != nil {
			return Record{}, err
		}
	}
	summary := strings.TrimSpace(r.Summary)
	if r.Summary != "" {
		if err := ledger.ValidateSummary("summary", summary); err != nil {
			return Record{}, err
		}
	}
	from, signer, err := h.actorOf(ctx, id, from, func(r Record) string { return r.From })
	if err != nil {
		return Record{}, err
	}
	ch := ledger.Change{Kind: changeResolve, ID: id, By: from, What: "a resolution", Args: args(resolveArgs{Reply: r, Summary: summary, Signer: signer})}
	rec, err := h.hand(ctx, ch)
	if err != nil {
		return Record{}, err
	}
	h.changed(EventResolved, rec, actor(from, signer), "")
	return rec, nil
}

// Escalate hands a clarification to a human, with a summary a person can
// act on.
func (h *Hub) Escalate(ctx context.Context, id, reason string) (Record, error) {
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	if reason == "" {
		reason = "escalated by hand"
	}
	rec, err := h.hand(ctx, ledger.Change{Kind: changeEscalate, ID: id, By: HubAgent, What: "an escalation", Args: args(reason)})
	if err != nil {
		return Record{}, err
	}
	h.escalated(ctx, rec)
	return rec, nil
}

// escalate moves c to escalated and appends the summary entry, in one write.
func escalate(c *ledger.Clarification, issue int, reason, askerLatest string, now time.Time) error {
	if err := c.Move(ledger.Escalated); err != nil {
		return err
	}
	c.Thread = append(c.Thread, entry(c, HubAgent, ledger.Escalation, EscalationBody(issue, c, reason, askerLatest), now))
	return nil
}

// escalated records the event and notifies a human.
func (h *Hub) escalated(ctx context.Context, rec Record) {
	h.changed(EventEscalated, rec, HubAgent, EscalationReason(rec.Clarification))
	h.notify(ctx, "escalation", rec)
}

// Abandon closes a clarification nobody will finish. by is who closes it:
// an agent, human (a person, recorded by name as for an answer), or "" for
// the hub itself.
func (h *Hub) Abandon(ctx context.Context, id, by, reason string) (Record, error) {
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	body := "Abandoned."
	if reason != "" {
		body = "Abandoned: " + reason
	}
	signer, err := person(ctx, by)
	if err != nil {
		return Record{}, err
	}
	who := by
	if who == "" {
		who = HubAgent
	}
	what := "an abandon"
	if reason == CancelledReason {
		what = "a cancel"
	}
	rec, err := h.hand(ctx, ledger.Change{Kind: changeAbandon, ID: id, By: who, What: what, Args: args(abandonArgs{Body: body, Signer: signer})})
	if err != nil {
		return Record{}, err
	}
	h.changed(EventAbandoned, rec, actor(by, signer), reason)
	return rec, nil
}

// Cancel is the asker withdrawing its question (recorded as abandoned,
// reason "cancelled"); a person (human) may withdraw it for the asker.
func (h *Hub) Cancel(ctx context.Context, id, from string) (Record, error) {
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	c, err := h.Store.Get(id)
	if err != nil {
		return Record{}, err
	}
	if from == "" {
		from = c.From
	}
	if from != c.From && from != ledger.Human {
		return Record{}, partyError(c, from, OpCancel, "cancel", c.From, ledger.Human)
	}
	return h.Abandon(ctx, id, from, CancelledReason)
}

// Assume records the assumption the asker proceeded on while its question
// was unanswered, so a late answer can be checked against it.
func (h *Hub) Assume(ctx context.Context, id, by, assumption string) (Record, error) {
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	return h.assume(ctx, id, by, assumption, nil)
}

// assume is Assume, of an assumption that reuses decision (nil: none).
func (h *Hub) assume(ctx context.Context, id, by, assumption string, reuses *ledger.Reuse) (Record, error) {
	if err := ledger.ValidateMessage("assumption", assumption); err != nil {
		return Record{}, err
	}
	ch := ledger.Change{Kind: changeAssume, ID: id, By: by, What: "an assumption", Args: args(assumeArgs{Body: assumption, Reuses: reuses})}
	return h.hand(ctx, ch)
}

// SettledError is a change to a clarification that is closed already
// (resolved or abandoned): it says by whom and when, so that the loser of
// a race learns who settled it. It is an invalid transition (exit 6).
type SettledError struct {
	ID     string
	Status ledger.Status // resolved or abandoned
	By     string        // who closed it: the person's name where one was recorded, else the party
	At     ledger.Time
	To     ledger.Status // what the change would have made it
}

func (e *SettledError) Error() string {
	return fmt.Sprintf("%s was already %s by %s at %s: nothing to change", e.ID, e.Status, e.By, e.At.UTC().Format("2006-01-02 15:04 UTC"))
}

// Unwrap makes it an invalid transition.
func (e *SettledError) Unwrap() error {
	return &ledger.TransitionError{ID: e.ID, From: e.Status, To: e.To}
}

// settledError is the refusal of a change to the closed c.
func settledError(c *ledger.Clarification, to ledger.Status) *SettledError {
	e := &SettledError{ID: c.ID, Status: c.Status, To: to, By: "someone"}
	if n := len(c.Thread); n > 0 {
		last := c.Thread[n-1]
		e.By, e.At = last.From, last.Timestamp
		if p := c.PersonAt(n - 1); p != "" {
			e.By = p
		}
	}
	return e
}
