package router

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/ledger"
)

// Outcome is what came of an ask or a follow-up for the asker: what the
// responder did, when one ran.
type Outcome string

// The outcomes of Ask and Followup (Record.Outcome).
const (
	// OutcomeAnswered: the responder answered and its answer is recorded.
	OutcomeAnswered Outcome = "answered"
	// OutcomePending: no responder ran here (none configured, a human was
	// asked, or it runs detached): the question waits for its answer.
	OutcomePending Outcome = "pending"
	// OutcomeRetrying: the responder failed; agentx runs it once more at
	// Record.RetryAt (the monitor of whichever command runs then, or the
	// asker's wait), and escalates if it fails again.
	OutcomeRetrying Outcome = "retrying"
	// OutcomeEscalated: handed to a human (the follow-up passed the round
	// limit, or the responder failed a second time).
	OutcomeEscalated Outcome = "escalated"
	// OutcomeSuperseded: someone answered or moved the clarification on
	// while the responder ran, so the responder's answer (or failure) was
	// not recorded; the record is as it stands.
	OutcomeSuperseded Outcome = "superseded"
)

// Outcomes lists every Outcome.
var Outcomes = []Outcome{OutcomeAnswered, OutcomePending, OutcomeRetrying, OutcomeEscalated, OutcomeSuperseded}

// Limits of what a responder's failure leaves in a ledger.
const (
	// MaxFailureLen is the longest failure reason recorded, in bytes.
	MaxFailureLen = 1024
	// claimGrace is added to the longest a claimed retry may run: a
	// claim lapses that much after its run must have ended (the run's
	// process group is killed at its bound, then its result is written
	// under the lock), and only then may another process take it over.
	claimGrace = 30 * time.Second
	// releaseWait bounds the write that gives back a retry cut off.
	releaseWait = 10 * time.Second
)

// SupersededError is a responder's result that no longer applies: the
// clarification left the round the responder was run for (answered,
// followed up, escalated or closed meanwhile). Nothing was written.
type SupersededError struct {
	ID     string
	Round  int           // the round the responder was run for
	Status ledger.Status // the status found
	Now    int           // the round found
}

func (e *SupersededError) Error() string {
	if e.Now != e.Round {
		return fmt.Sprintf("%s moved on to round %d (%s) while its responder ran for round %d", e.ID, e.Now, e.Status, e.Round)
	}
	return fmt.Sprintf("%s was %s while its responder ran", e.ID, e.Status)
}

// inRound refuses, as superseded, a responder's result for round when c
// is no longer waiting for an answer to that round. round 0 accepts any.
func inRound(c *ledger.Clarification, round int) error {
	if round == 0 || (c.Round == round && (c.Status == ledger.Pending || c.Status == ledger.Stale)) {
		return nil
	}
	return &SupersededError{ID: c.ID, Round: round, Status: c.Status, Now: c.Round}
}

// FailureText is a responder's error as agentx records it (failure
// reason, escalation entry, event): one line of printable valid UTF-8
// (invalid bytes and control characters made visible escapes), at most
// MaxFailureLen bytes, whatever the responder wrote on stderr.
func FailureText(err error) string {
	text := err.Error()
	var re *ResponderError
	if errors.As(err, &re) {
		text = re.Reason() // the agent is named where the text is used
	}
	s := safetext.Line(text)
	if len(s) <= MaxFailureLen {
		return s
	}
	return clip(s, MaxFailureLen-len("...")) + "..."
}

// ScheduledRetry is when the one retry of e's failed responder is due, if
// one is owed for e's current round: the question is still waiting
// (pending or stale) and its responder failed once in this round.
func ScheduledRetry(e ledger.IndexEntry) (time.Time, bool) {
	m := e.Monitor
	if m == nil || m.RetryAt == nil || m.Failures != 1 || m.FailedRound != e.Round ||
		(e.Status != ledger.Pending && e.Status != ledger.Stale) {
		return time.Time{}, false
	}
	return m.RetryAt.Time, true
}

// RetryClaimed reports whether a process claimed e's scheduled retry and
// may still be running it at now (its claim has not lapsed).
func RetryClaimed(e ledger.IndexEntry, now time.Time) bool {
	return e.Monitor != nil && e.Monitor.RetryUntil != nil && now.Before(e.Monitor.RetryUntil.Time)
}

// RetryGuard is the guard of a retry's claim (ClaimRetry): under the
// ledger's lock, the clarification as it is now must still have its retry
// due, as due decides.
func RetryGuard(due func(e ledger.IndexEntry, now time.Time) bool) Guard {
	return func(l *ledger.Ledger, c *ledger.Clarification, now time.Time) string {
		if !due(ledger.EntryOf(l.IssueNumber, c), now) {
			return fmt.Sprintf("%s is %s and its retry is not due", c.ID, c.Status)
		}
		return ""
	}
}

// RetryDue reports whether e's scheduled retry is due at now and nobody is
// making it.
func RetryDue(e ledger.IndexEntry, now time.Time) bool {
	at, ok := ScheduledRetry(e)
	return ok && !now.Before(at) && !RetryClaimed(e, now)
}

// responder is the responder configured for agent, if any, and trusted to
// run on this machine (h.Trust).
func (h *Hub) responder(agent string) (Responder, bool) {
	a, ok := h.Rules().Config.Agents[agent]
	if !ok || len(a.Command) == 0 || !h.Trust.Allow(trust.Responder(agent, a.Command)) {
		return Responder{}, false
	}
	return Responder{Agent: agent, Command: a.Command, Timeout: a.Timeout.Duration}, true
}

// RetryBound is the longest one automatic retry of a question to target
// runs: its responder's timeout, or the notify command's for a human.
func (h *Hub) RetryBound(target string) time.Duration {
	if target == ledger.Human {
		if n := h.Rules().Config.Notify; n != nil && n.Timeout.Duration > 0 {
			return n.Timeout.Duration
		}
		return DefaultNotifyTimeout
	}
	if r, ok := h.responder(target); ok && r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultResponderTimeout
}

// ClaimUntil is when a claim made at now for a retry that runs at most
// bound lapses.
func ClaimUntil(now time.Time, bound time.Duration) time.Time {
	return now.Add(bound + claimGrace)
}

// invocation is rec's current round put to its responder: the prompt
// with the question's card.
func (h *Hub) invocation(rec Record) Invocation {
	c := rec.Clarification
	return Invocation{ClarificationID: c.ID, Issue: rec.IssueNumber, From: c.From, To: c.To, Round: c.Round, Prompt: BuildPrompt(rec.IssueNumber, c, h.Card(rec))}
}

// RecordedError is a failure after a question was recorded (Ask, Followup):
// its responder's result could not be written (a lock that timed out), or
// the run was interrupted. The question stands, pending, as Record: the
// asker still gets its id, and the monitor takes the question up as any
// other unanswered one.
type RecordedError struct {
	Record Record
	Err    error
}

func (e *RecordedError) Error() string {
	return fmt.Sprintf("%s is recorded, but running its %s responder failed: %v", e.Record.ID, e.Record.To, e.Err)
}

func (e *RecordedError) Unwrap() error { return e.Err }

// CutOffError is a responder run that ctx ended before it finished (a
// budget ran out, Ctrl-C): nothing is recorded about it.
type CutOffError struct {
	ID  string
	Err error // ctx's error
}

func (e *CutOffError) Error() string {
	return fmt.Sprintf("%s: the responder run was cut off before it finished: %v", e.ID, e.Err)
}

func (e *CutOffError) Unwrap() error { return e.Err }

// attempt runs r once for rec's current round, without the lock, and
// records what came of it, returning the record with its Outcome:
//
//   - an answer: recorded (answered);
//   - a failure: recorded with its reason (FailureText) and an event; the
//     round's second failure escalates (escalated); a first one schedules
//     the one retry delay later (retrying), or with delay 0 leaves the
//     question as it is and returns the responder's error;
//   - the clarification left the round meanwhile: nothing recorded
//     (superseded), with an event saying so;
//   - ctx ended the run: nothing recorded, a *CutOffError.
func (h *Hub) attempt(ctx context.Context, rec Record, r Responder, delay time.Duration) (Record, error) {
	round := rec.Round
	answer, err := h.Runner.Run(ctx, r, h.invocation(rec))
	if err != nil && ctx.Err() != nil {
		return rec, &CutOffError{ID: rec.ID, Err: ctx.Err()}
	}
	if err != nil {
		return h.responderFailed(ctx, rec, round, err, delay)
	}
	out, aerr := h.answer(ctx, rec.ID, rec.To, Reply{Body: answer}, round)
	if aerr != nil {
		return h.superseded(rec, aerr, "answered")
	}
	out.Outcome = OutcomeAnswered
	return out, nil
}

// superseded turns a *SupersededError from recording a responder's result
// into the superseded outcome: the record as it stands, an event, a
// detail saying what was not recorded. Other errors are returned as they
// are.
func (h *Hub) superseded(rec Record, err error, what string) (Record, error) {
	var se *SupersededError
	if !errors.As(err, &se) {
		return rec, err
	}
	cur, gerr := h.get(rec.ID)
	if gerr != nil {
		return rec, gerr
	}
	cur.Outcome = OutcomeSuperseded
	cur.Detail = fmt.Sprintf("the %s responder %s, but %s; that was not recorded", rec.To, what, se.Error())
	h.changed(EventSuperseded, cur, HubAgent, cur.Detail)
	return cur, nil
}

// responderFailed records that rec's responder failed for round with
// runErr, under the lock (see attempt).
func (h *Hub) responderFailed(ctx context.Context, rec Record, round int, runErr error, delay time.Duration) (Record, error) {
	reason := FailureText(runErr)
	var outcome Outcome
	out, err := h.change(ctx, rec.ID, func(c *ledger.Clarification, now time.Time) error {
		if err := inRound(c, round); err != nil {
			return err
		}
		m := monitorState(c)
		if m.FailedRound != round {
			m.Failures = 0
		}
		m.Failures++
		m.FailedRound = round
		t := ledger.T(now)
		m.FailedAt, m.Failure, m.RetryAt, m.RetryUntil = &t, reason, nil, nil
		switch {
		case m.Failures >= 2:
			outcome = OutcomeEscalated
			m.Reason = fmt.Sprintf("the %s responder failed twice: %s", c.To, reason)
			return escalate(c, issueOf(c), m.Reason, "", now)
		case delay > 0:
			outcome = OutcomeRetrying
			at := ledger.T(now.Add(delay))
			m.RetryAt = &at
		}
		return nil
	})
	if err != nil {
		return h.superseded(rec, err, "failed ("+reason+")")
	}
	m := out.X.Monitor
	switch outcome {
	case OutcomeEscalated:
		h.changed(EventResponderFailed, out, HubAgent, reason+"; escalated to a human")
		h.escalated(ctx, out)
		out.Detail = m.Reason
	case OutcomeRetrying:
		out.RetryAt = m.RetryAt
		out.Detail = fmt.Sprintf("the %s responder failed (%s); it is retried once at %s, and a second failure escalates to a human",
			out.To, reason, m.RetryAt.UTC().Format("2006-01-02 15:04:05 MST"))
		h.changed(EventResponderFailed, out, HubAgent, reason+"; retry due at "+m.RetryAt.String())
	default:
		h.changed(EventResponderFailed, out, HubAgent, reason)
		return out, runErr
	}
	out.Outcome = outcome
	return out, nil
}

// OutcomeOf is the outcome an asker is told for rec as it stands, when
// nothing more particular (superseded) is known.
func OutcomeOf(rec Record) Record {
	rec.Outcome, rec.RetryAt = OutcomePending, nil
	switch rec.Status {
	case ledger.Answered, ledger.Resolved:
		rec.Outcome = OutcomeAnswered
	case ledger.Escalated:
		rec.Outcome = OutcomeEscalated
	case ledger.Pending, ledger.Stale:
		if _, ok := ScheduledRetry(ledger.EntryOf(rec.IssueNumber, rec.Clarification)); ok {
			rec.Outcome, rec.RetryAt = OutcomeRetrying, rec.X.Monitor.RetryAt
		}
	}
	return rec
}

// retryLater is the detached path's retry (see Hub.Detach): a long-lived
// process waits until rec's retry is due and makes it itself, claimed as
// the monitor claims it, so that it is made once whoever gets there first.
func (h *Hub) retryLater(ctx context.Context, rec Record) {
	if rec.RetryAt == nil {
		return
	}
	t := time.NewTimer(rec.RetryAt.Sub(h.now()))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	claimed, err := h.ClaimRetry(ctx, rec.ID, ClaimUntil(h.now(), h.RetryBound(rec.To)), RetryGuard(RetryDue))
	var skip *SkippedError
	if errors.As(err, &skip) {
		return
	}
	if err == nil {
		_, err = h.Retry(ctx, claimed)
	}
	if err != nil && ctx.Err() == nil {
		h.Warn(fmt.Errorf("%s: retry of the %s responder: %w", rec.ID, rec.To, err))
	}
}

// ReleaseRetry gives back a claimed retry that did not run to its end
// (see CutOffError), so that the next command makes it: unless another
// process has taken the claim over since, the claim is undone. It uses its
// own short context: ctx may be what ended the run.
func (h *Hub) ReleaseRetry(claimed Record) error {
	mine := claimed.X.Monitor.RetriedAt
	ctx, cancel := context.WithTimeout(context.Background(), releaseWait)
	defer cancel()
	_, err := h.changeIf(ctx, claimed.ID, func(_ *ledger.Ledger, c *ledger.Clarification, _ time.Time) string {
		if c.X == nil || c.X.Monitor == nil || c.X.Monitor.RetriedAt == nil || mine == nil || !c.X.Monitor.RetriedAt.Equal(mine.Time) {
			return "the claim is no longer this process's"
		}
		return ""
	}, func(c *ledger.Clarification, _ time.Time) error {
		m := c.X.Monitor
		m.Retries = max(0, m.Retries-1)
		m.RetriedAt, m.RetryUntil = nil, nil
		return nil
	})
	var skip *SkippedError
	if errors.As(err, &skip) {
		return nil
	}
	return err
}
