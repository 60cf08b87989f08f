package evaluate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// ResultWaiting is a finish that ran no checks: the step's last attempt
// was escalated and the person has not settled it yet.
const ResultWaiting = "waiting"

// ResultUntrusted is a finish that ran no checks because this machine does
// not trust the workspace's commands: the step waits until a person does.
const ResultUntrusted = "untrusted"

// Outcome is what the gate did when a worker finished.
type Outcome struct {
	Issue      int      `json:"issue"`
	Agent      string   `json:"agent"`
	Workflow   string   `json:"workflow"`
	Step       string   `json:"step"`
	Result     string   `json:"result"` // done, revise, escalated or waiting
	Attempt    *Attempt `json:"attempt,omitempty"`
	Escalation string   `json:"escalation,omitempty"` // the clarification a person settles
	// Request is the revision request the worker gets (revise only).
	Request string `json:"request,omitempty"`
}

// Done reports whether the step is done: the work passed.
func (o *Outcome) Done() bool { return o.Result == OutcomeDone }

// Gate evaluates finished work and acts on the verdict.
type Gate struct {
	Hub    *router.Hub
	Runner Runner
}

// Job prepares the evaluation of agent's work on step s of w for issue:
// its attempt number within the step's cycle and the cycle's earlier
// attempts. waiting is the clarification a person has yet to settle when
// the step's last attempt was escalated and still is.
func (g *Gate) Job(issue int, agent string, w *workflow.Workflow, s *workflow.Step) (job Job, waiting string, err error) {
	rec, err := Read(g.Hub.Store, issue)
	if err != nil {
		return Job{}, "", err
	}
	if last := rec.Latest(w.Name, s.ID); last != nil && last.Outcome == OutcomeEscalated && last.Escalation != "" {
		c, err := g.Hub.Store.Get(last.Escalation)
		if err != nil && !errors.Is(err, ledger.ErrNotFound) {
			return Job{}, "", err
		}
		if c != nil && c.Status == ledger.Escalated {
			return Job{}, c.ID, nil
		}
	}
	mine := rec.cycle(w.Name, s.ID)
	return Job{Issue: issue, Agent: agent, Workflow: w, Step: s, Attempt: len(mine) + 1, MaxAttempts: s.MaxRevisions + 1, Previous: mine}, "", nil
}

// Evaluate runs the job's checks and returns the attempt, not recorded.
func (g *Gate) Evaluate(ctx context.Context, job Job) (*Attempt, error) {
	checks, err := g.Runner.Checks(ctx, job)
	if err != nil {
		return nil, err
	}
	vs := make([]Verdict, len(checks))
	for i, c := range checks {
		vs[i] = c.Verdict
	}
	return &Attempt{
		Workflow: job.Workflow.Name, Step: job.Step.ID, Agent: job.Agent,
		Attempt: job.Attempt, MaxAttempts: job.MaxAttempts, Verdict: Overall(vs...),
		Checks: checks, At: ledger.T(g.Hub.Store.Now()),
	}, nil
}

// Finish evaluates agent's work on step s of w when it finishes issue,
// records the attempt and acts: PASS, the step is done; NEEDS_REVISION
// within max_revisions, a revision request for the worker; a hard FAIL, or
// a revision past max_revisions, an escalation to a person (a clarification
// from the worker to human, escalated at once, the attempts as the
// worker's position). While that escalation is open, Finish runs no checks
// and reports ResultWaiting; once a person settled it, the next finish
// starts a new cycle.
func (g *Gate) Finish(ctx context.Context, issue int, agent string, w *workflow.Workflow, s *workflow.Step) (*Outcome, error) {
	out := &Outcome{Issue: issue, Agent: agent, Workflow: w.Name, Step: s.ID}
	job, waiting, err := g.Job(issue, agent, w, s)
	if err != nil {
		return nil, err
	}
	if waiting != "" {
		out.Result, out.Escalation = ResultWaiting, waiting
		return out, nil
	}
	a, err := g.Evaluate(ctx, job)
	if err != nil {
		return nil, err
	}
	switch {
	case a.Verdict == Pass:
		a.Outcome = OutcomeDone
	case a.Verdict == NeedsRevision && a.Attempt <= s.MaxRevisions:
		a.Outcome = OutcomeRevise
	default:
		a.Outcome = OutcomeEscalated
		rec, err := g.Hub.EscalateWork(ctx, escalation(issue, job, a))
		if err != nil {
			return nil, fmt.Errorf("evaluation of #%d: escalate: %w", issue, err)
		}
		a.Escalation = rec.ID
	}
	err = update(ctx, g.Hub.Store, issue, func(r *Record) error {
		a.ID = fmt.Sprintf("EVAL-%d-%d", issue, len(r.Attempts)+1)
		r.Attempts = append(r.Attempts, a)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("evaluation of #%d: record: %w", issue, err)
	}
	out.Result, out.Attempt, out.Escalation = a.Outcome, a, a.Escalation
	if a.Outcome == OutcomeRevise {
		out.Request = RequestText(issue, a)
	}
	return out, nil
}

// escalation is the escalation of a's cycle.
func escalation(issue int, job Job, a *Attempt) router.WorkEscalation {
	all := append(append([]*Attempt(nil), job.Previous...), a)
	reason := fmt.Sprintf("evaluation: step %s did not pass in %s (max_revisions = %d)", job.Step.ID, words.Count(a.Attempt, "attempt", "attempts"), job.Step.MaxRevisions)
	if a.Verdict == Fail {
		reason = fmt.Sprintf("evaluation: a check of step %s failed hard (%s): revising will not fix it", job.Step.ID, strings.Join(checksWith(a, Fail), ", "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The %s agent's work on step %q (workflow %s) did not pass evaluation.\n", job.Agent, job.Step.ID, job.Workflow.Name)
	per := (ledger.MaxBodyLen - 2048) / max(1, len(all)*max(1, len(a.Checks)))
	for _, p := range all {
		fmt.Fprintf(&b, "\nAttempt %d of %d: %s\n", p.Attempt, p.MaxAttempts, p.Verdict.Label())
		for _, c := range p.Checks {
			fmt.Fprintf(&b, "  %s: %s%s\n", c.Name, c.Verdict.Label(), exitNote(c))
			if c.Verdict != Pass && c.Feedback != "" {
				b.WriteString("    " + indent(tail(c.Feedback, min(per, 2048))) + "\n")
			}
		}
	}
	fmt.Fprintf(&b, "\nDecide: accept the work as it is, say what to change, or take it over. `agentx eval show %d` has every check's output.", issue)
	topic := fmt.Sprintf("Evaluation of step %s: %s after %s", job.Step.ID, a.Verdict.Label(), words.Count(a.Attempt, "attempt", "attempts"))
	return router.WorkEscalation{
		Issue: issue, Agent: job.Agent, Workflow: job.Workflow.Name, Step: job.Step.ID,
		Topic: head(topic, ledger.MaxTopicLen-8), Position: head(b.String(), ledger.MaxBodyLen-16), Reason: reason,
	}
}

func checksWith(a *Attempt, v Verdict) []string {
	var out []string
	for _, c := range a.Checks {
		if c.Verdict == v {
			out = append(out, fmt.Sprintf("%s%s", c.Name, exitNote(c)))
		}
	}
	return out
}

// exitNote is " (exit N)", " (timed out)" or "" for a JSON verdict.
func exitNote(c CheckResult) string {
	switch {
	case c.TimedOut:
		return " (timed out)"
	case c.JSON:
		return ""
	case c.ExitCode < 0:
		return " (did not run)"
	}
	return fmt.Sprintf(" (exit %d)", c.ExitCode)
}

// maxRequestFeedback bounds each check's feedback in a revision request,
// so that it fits in a Claude Code hook's context with room to spare.
const maxRequestFeedback = 2500

// RequestText is the revision request for attempt a: what did not pass,
// the feedback, and what to do next. It is plain text; its feedback is
// the checks' own output, which the caller neutralises for a terminal.
func RequestText(issue int, a *Attempt) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Revision requested (%s): your work on issue #%d, step %q, did not pass evaluation (attempt %d of %d).\n",
		a.ID, issue, a.Step, a.Attempt, a.MaxAttempts)
	for _, c := range a.Checks {
		if c.Verdict == Pass {
			continue
		}
		fmt.Fprintf(&b, "- %s: %s%s\n", c.Name, c.Verdict.Label(), exitNote(c))
		if c.Feedback != "" {
			b.WriteString("    " + indent(tail(c.Feedback, maxRequestFeedback)) + "\n")
		}
	}
	left := a.MaxAttempts - a.Attempt
	fmt.Fprintf(&b, "Next: fix what the checks report, then finish again (agentx hook finish --issue %d). ", issue)
	if left == 1 {
		b.WriteString("This is the last revision: if the next attempt does not pass, a person decides.")
	} else {
		fmt.Fprintf(&b, "%d attempts left before a person decides.", left)
	}
	fmt.Fprintf(&b, " The whole output: agentx eval show %s.", a.ID)
	return b.String()
}

// Pending is a revision request not yet delivered to its worker.
type Pending struct {
	Issue   int
	Attempt *Attempt
}

// PendingFor returns the revision requests for agent not yet delivered:
// the latest attempt at each step, sent back for revision, on issue (nil:
// every issue whose record is marked as owing one, see owing; a record
// that cannot be read is then left out and returned in skipped).
func PendingFor(store *ledger.Store, agent string, issue *int) (out []Pending, skipped []error, err error) {
	type read struct {
		rec *Record
		err error
	}
	cache := map[int]read{}
	get := func(n int) (*Record, error) {
		r, ok := cache[n]
		if !ok {
			r.rec, r.err = Read(store, n)
			cache[n] = r
		}
		return r.rec, r.err
	}
	var issues []int
	if issue != nil {
		issues = []int{*issue}
	} else if issues, err = owing(store, func(n int) bool {
		rec, err := get(n)
		return err != nil || rec.owes() // one that cannot be read stays marked, and said
	}); err != nil {
		return nil, nil, err
	}
	for _, n := range issues {
		rec, err := get(n)
		if err != nil && issue == nil {
			// another issue's record that cannot be read does not keep
			// this agent from the rest
			skipped = append(skipped, err)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		for _, k := range rec.Steps() {
			if a := rec.Latest(k[0], k[1]); a.Agent == agent && a.Outcome == OutcomeRevise && !a.Delivered {
				out = append(out, Pending{Issue: n, Attempt: a})
			}
		}
	}
	return out, skipped, nil
}

// MarkDelivered records that the revision request of attempt id on issue
// reached its worker.
func MarkDelivered(ctx context.Context, store *ledger.Store, issue int, id string) error {
	return update(ctx, store, issue, func(r *Record) error {
		if a := r.Find(id); a != nil {
			a.Delivered = true
		}
		return nil
	})
}

// Blocking returns, for issue, the steps whose latest attempt was sent
// back for revision: the step is not done, and `ready` says why.
func Blocking(store *ledger.Store, issue int) ([]*Attempt, error) {
	rec, err := Read(store, issue)
	if err != nil {
		return nil, err
	}
	var out []*Attempt
	for _, k := range rec.Steps() {
		if a := rec.Latest(k[0], k[1]); a.Outcome == OutcomeRevise {
			out = append(out, a)
		}
	}
	return out, nil
}

// Blockers is Blocking as what holds the issue up (router.BlockSentBack),
// beside its clarifications: registered with router (sentBack), so that
// Hub.Ready and Hub.Blockers count them.
func Blockers(store *ledger.Store, issue int) ([]router.Blocker, error) {
	ats, err := Blocking(store, issue)
	if err != nil {
		return nil, err
	}
	var out []router.Blocker
	for _, a := range ats {
		out = append(out, router.Blocker{ID: a.ID, Rule: router.BlockSentBack, From: a.Agent, On: a.Agent, Why: BlockingReason(a)})
	}
	return out, nil
}

// sentBack is the work sent back for revision as what holds issues up
// (router.Holds): registered with router, so that every hub's Ready and
// Blockers count it, whichever front end asks.
type sentBack struct{}

func init() { router.RegisterHolds(sentBack{}) }

// HeldIssues are the issues with an evaluation record.
func (sentBack) HeldIssues(store *ledger.Store) ([]int, error) { return Issues(store) }

// Blockers is the issue's work sent back (Blockers).
func (sentBack) Blockers(store *ledger.Store, issue int) ([]router.Blocker, error) {
	return Blockers(store, issue)
}

// BlockingReason says why an attempt sent back holds its issue up (a
// front end adds where to read it whole).
func BlockingReason(a *Attempt) string {
	return fmt.Sprintf("Evaluation %s of step %s needs revision by %s (attempt %d of %d: %s)",
		a.ID, a.Step, a.Agent, a.Attempt, a.MaxAttempts, strings.Join(a.FailedChecks(), ", "))
}
