package proposal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/gate/evaluate"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// File is the proposals' file, relative to the state directory.
const File = "proposals.json"

// The types of proposal.
const (
	TypeNewSkill            = "new_skill"
	TypeToolFix             = "tool_fix"
	TypeConfigChange        = "config_change"
	TypeWorkflowImprovement = "workflow_improvement"
)

// Types lists the proposal types.
var Types = []string{TypeNewSkill, TypeToolFix, TypeConfigChange, TypeWorkflowImprovement}

// Status is where a proposal is in its life.
type Status string

// The statuses.
const (
	Pending     Status = "pending"
	Approved    Status = "approved"
	Rejected    Status = "rejected"
	Implemented Status = "implemented"
)

// Statuses are the statuses, in the order of a proposal's life.
var Statuses = []Status{Pending, Approved, Rejected, Implemented}

// CheckStatus checks a status given as a filter (field names it): an
// *ledger.InputError when it is none of Statuses.
func CheckStatus(field, s string) error {
	if slices.Contains(Statuses, Status(s)) {
		return nil
	}
	return &ledger.InputError{Field: field, Value: s, Msg: "is not a proposal status: use pending, approved, rejected or implemented"}
}

// Levels are the values of impact and risk.
var Levels = []string{"low", "medium", "high"}

// Proposal is one enhancement proposal.
type Proposal struct {
	ID        string     `json:"id"` // PROP-001
	Type      string     `json:"type"`
	Title     string     `json:"title"`
	Rationale string     `json:"rationale"` // what triggered it, the evidence
	Action    string     `json:"action"`    // what should be done
	Impact    string     `json:"impact"`
	Risk      string     `json:"risk"`
	Status    Status     `json:"status"`
	Issues    []int      `json:"issues"`
	Evidence  []Evidence `json:"evidence,omitempty"`
	// Pattern identifies what a proposal from the gate is about
	// ("check:WORKFLOW/STEP/CHECK"), so a pattern is proposed once.
	Pattern    string       `json:"pattern,omitempty"`
	CreatedBy  string       `json:"createdBy"` // an agent, agentx, or human:NAME
	Created    ledger.Time  `json:"created"`
	ResolvedBy string       `json:"resolvedBy,omitempty"` // human:NAME
	ResolvedAt *ledger.Time `json:"resolvedAt,omitempty"`
	Reason     string       `json:"reason,omitempty"`  // a rejection's reason, an approval's note
	Drafted    *Drafted     `json:"drafted,omitempty"` // the skill drafted from it
	// Decisions are the moves people made, oldest first: approved or
	// rejected, then implemented (what the mirrors post).
	Decisions []Decision `json:"decisions,omitempty"`
	// Mirror records where GitHub and Slack mode posted it.
	Mirror *Mirror `json:"mirror,omitempty"`
}

// Decision is one move a person made.
type Decision struct {
	Status Status      `json:"status"`
	By     string      `json:"by"` // human:NAME
	At     ledger.Time `json:"at"`
	Reason string      `json:"reason,omitempty"`
}

// Mirror is where a proposal was posted. Entry 0 is the proposal, entry k
// its decision k-1.
type Mirror struct {
	GitHub []GitHubRef          `json:"github,omitempty"` // one comment per issue it names and entry
	Slack  *chanref.SlackThread `json:"slack,omitempty"`  // its thread in the channel
	// SlackEvidence is the digest of the evidence the Slack thread last
	// showed (in the proposal's message, or in the thread since), so that
	// new evidence is posted in the thread once.
	SlackEvidence string `json:"slackEvidence,omitempty"`
}

// GitHubRef is the comment that carries one entry on one issue.
type GitHubRef struct {
	Issue int `json:"issue"`
	chanref.GitHubRef
}

// GitHubRef is the comment recorded for entry i on issue n, or nil.
func (p *Proposal) GitHubRef(n, i int) *GitHubRef {
	if p.Mirror == nil {
		return nil
	}
	for k := range p.Mirror.GitHub {
		if r := &p.Mirror.GitHub[k]; r.Issue == n && r.Entry == i {
			return r
		}
	}
	return nil
}

// Entries is how many entries the mirrors carry: the proposal, then each
// decision.
func (p *Proposal) Entries() int { return 1 + len(p.Decisions) }

// RecordMirror runs fn on proposal id, under the proposals' lock, and
// writes what it recorded (fn sets p.Mirror): no status changes, so no
// event.
func RecordMirror(ctx context.Context, store *ledger.Store, id string, fn func(p *Proposal) error) error {
	return update(ctx, store, func(b *Book) error {
		p := b.Find(id)
		if p == nil {
			return fmt.Errorf("proposal %s: %w", id, ErrNotFound)
		}
		if p.Mirror == nil {
			p.Mirror = &Mirror{}
		}
		return fn(p)
	})
}

// logged appends the event of type t about p, by by, to h's event log; a
// failure goes to h.Warn (the change is recorded).
func logged(h *router.Hub, t router.EventType, p *Proposal, by, reason string) {
	issues := p.Issues
	if len(issues) == 0 {
		issues = nil
	}
	e := router.Event{Type: t, Topic: p.Title, Timestamp: ledger.T(h.Store.Now()), By: by, Reason: reason,
		ProposalID: p.ID, Issues: slices.Clone(issues)}
	if err := h.Events.Append(e); err != nil && h.Warn != nil {
		h.Warn(fmt.Errorf("event log: %w", err))
	}
}

// event is the event type of a move to s.
func event(s Status) router.EventType {
	switch s {
	case Approved:
		return router.EventProposalApproved
	case Rejected:
		return router.EventProposalRejected
	case Implemented:
		return router.EventProposalImplemented
	}
	return ""
}

// Drafted records the skill drafted from a new_skill proposal.
type Drafted struct {
	Skill string      `json:"skill"` // its name
	Path  string      `json:"path"`  // its SKILL.md, relative to the repository root
	By    string      `json:"by"`    // an agent, or human:NAME
	At    ledger.Time `json:"at"`
}

// Evidence is one failure behind a proposal from the gate.
type Evidence struct {
	Issue    int    `json:"issue"`
	Eval     string `json:"eval"` // EVAL-N-M
	Check    string `json:"check"`
	Feedback string `json:"feedback,omitempty"`
}

// Book is the proposals' file.
type Book struct {
	Proposals []*Proposal `json:"proposals"`
}

// Find returns the proposal with id, or nil.
func (b *Book) Find(id string) *Proposal {
	for _, p := range b.Proposals {
		if strings.EqualFold(p.ID, id) {
			return p
		}
	}
	return nil
}

// Read returns every proposal; a missing file holds none.
func Read(store *ledger.Store) (*Book, error) {
	b := &Book{}
	if err := store.ReadRecord(File, b); err != nil {
		return nil, err
	}
	return b, nil
}

func update(ctx context.Context, store *ledger.Store, fn func(b *Book) error) error {
	b := &Book{}
	return store.UpdateRecord(ctx, File, b, func() error { return fn(b) })
}

// Validate checks a new proposal's fields.
func Validate(p *Proposal) error {
	if !slices.Contains(Types, p.Type) {
		return &ledger.InputError{Field: "type", Value: p.Type, Msg: "is not a proposal type: use " + strings.Join(Types, ", ")}
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"title", p.Title, ledger.MaxTopicLen}, {"rationale", p.Rationale, ledger.MaxBodyLen}, {"action", p.Action, ledger.MaxBodyLen}} {
		if err := ledger.ValidateText(f.name, f.v, f.max); err != nil {
			return err
		}
	}
	for _, f := range []struct{ name, v string }{{"impact", p.Impact}, {"risk", p.Risk}} {
		if !slices.Contains(Levels, f.v) {
			return &ledger.InputError{Field: f.name, Value: f.v, Msg: "use low, medium or high"}
		}
	}
	for _, n := range p.Issues {
		if err := ledger.ValidateIssue(n); err != nil {
			return err
		}
	}
	return nil
}

// Create records a new pending proposal in h's store, logs
// proposal-created, and returns it as written.
func Create(ctx context.Context, h *router.Hub, p Proposal) (*Proposal, error) {
	store := h.Store
	if p.Impact == "" {
		p.Impact = "medium"
	}
	if p.Risk == "" {
		p.Risk = "low"
	}
	if p.Issues == nil {
		p.Issues = []int{}
	}
	if err := Validate(&p); err != nil {
		return nil, err
	}
	p.Status, p.Created = Pending, ledger.T(store.Now())
	err := update(ctx, store, func(b *Book) error {
		p.ID = fmt.Sprintf("PROP-%03d", len(b.Proposals)+1)
		b.Proposals = append(b.Proposals, &p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	logged(h, router.EventProposalCreated, &p, p.CreatedBy, "")
	return &p, nil
}

// canMove is the lifecycle: pending → approved or rejected, approved →
// implemented.
func canMove(from, to Status) bool {
	return from == Pending && (to == Approved || to == Rejected) || from == Approved && to == Implemented
}

// TransitionError is a move the lifecycle does not allow.
type TransitionError struct {
	ID       string
	From, To Status
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("%s is %s: it cannot become %s", e.ID, e.From, e.To)
}

// ErrNotFound is a proposal id that does not exist.
var ErrNotFound = ledger.ErrNotFound

// Decide moves proposal id to status to, by person (the caller has checked
// that a person acts: only people decide), with an optional reason, and
// logs the move (proposal-approved, -rejected, -implemented).
func Decide(ctx context.Context, h *router.Hub, id string, to Status, person, reason string) (*Proposal, error) {
	store := h.Store
	if reason != "" {
		if err := ledger.ValidateText("reason", reason, ledger.MaxBodyLen); err != nil {
			return nil, err
		}
	}
	var out *Proposal
	err := update(ctx, store, func(b *Book) error {
		p := b.Find(id)
		if p == nil {
			return fmt.Errorf("proposal %s: %w", id, ErrNotFound)
		}
		if !canMove(p.Status, to) {
			return &TransitionError{ID: p.ID, From: p.Status, To: to}
		}
		now := ledger.T(store.Now())
		p.Status, p.ResolvedBy, p.ResolvedAt = to, ledger.HumanAs(person), &now
		if reason != "" {
			p.Reason = reason
		}
		p.Decisions = append(p.Decisions, Decision{Status: to, By: p.ResolvedBy, At: now, Reason: reason})
		out = p
		return nil
	})
	if err == nil {
		logged(h, event(to), out, out.ResolvedBy, reason)
	}
	return out, err
}

// DraftError is a proposal that cannot be drafted into a skill: not a
// new_skill proposal, not approved, or drafted already.
type DraftError struct {
	ID      string
	Type    string
	Status  Status
	Drafted *Drafted
}

func (e *DraftError) Error() string {
	switch {
	case e.Type != TypeNewSkill:
		return fmt.Sprintf("%s is a %s proposal: only a new_skill proposal is drafted into a skill", e.ID, e.Type)
	case e.Drafted != nil:
		return fmt.Sprintf("%s was drafted already, into %s", e.ID, e.Drafted.Path)
	}
	return fmt.Sprintf("%s is %s: only an approved proposal is drafted into a skill", e.ID, e.Status)
}

// Hint says what to do, in no front end's words (each words Next its
// way).
func (e *DraftError) Hint() string {
	switch e.Next() {
	case NextCarryOut:
		return "a person carries out other proposals, then marks them implemented"
	case NextEdit:
		return "edit that skill, and validate it again"
	case NextDecide:
		return "a person decides first, in a session of their own"
	}
	return ""
}

// DraftNext is what comes of a proposal that cannot be drafted into a
// skill, for a front end to word.
type DraftNext int

// What comes of a proposal a draft refused.
const (
	NextNothing  DraftNext = iota // rejected or implemented: nothing more
	NextCarryOut                  // not a new_skill proposal: a person carries it out and marks it implemented
	NextEdit                      // drafted already: the skill is edited
	NextDecide                    // pending: a person approves or rejects it first
)

// Next is what comes of the proposal.
func (e *DraftError) Next() DraftNext {
	switch {
	case e.Type != TypeNewSkill:
		return NextCarryOut
	case e.Drafted != nil:
		return NextEdit
	case e.Status == Pending:
		return NextDecide
	}
	return NextNothing
}

// WrongType reports whether the proposal is not a new_skill one.
func (e *DraftError) WrongType() bool { return e.Type != TypeNewSkill }

// RecordDraft drafts proposal id into a skill: under the proposals' lock,
// when the proposal is an approved new_skill one not drafted yet, it calls
// write, which writes the skill and returns its name and path, and
// records the draft, by by, on the proposal. Otherwise it returns a
// *DraftError and write is not called. An error from write records
// nothing.
func RecordDraft(ctx context.Context, store *ledger.Store, id, by string, write func(p *Proposal) (skill, path string, err error)) (*Proposal, error) {
	var out *Proposal
	err := update(ctx, store, func(b *Book) error {
		p := b.Find(id)
		if p == nil {
			return fmt.Errorf("proposal %s: %w", id, ErrNotFound)
		}
		if p.Type != TypeNewSkill || p.Status != Approved || p.Drafted != nil {
			return &DraftError{ID: p.ID, Type: p.Type, Status: p.Status, Drafted: p.Drafted}
		}
		skill, path, err := write(p)
		if err != nil {
			return err
		}
		p.Drafted = &Drafted{Skill: skill, Path: path, By: by, At: ledger.T(store.Now())}
		out = p
		return nil
	})
	return out, err
}

// MinIssues is how many issues the same check must fail on before the
// gate proposes something about it.
const MinIssues = 2

// Observe looks, after attempt a on issue did not pass, for its failing
// checks failing on other issues too: a check of the same workflow step
// that did not pass on MinIssues issues or more gets a pending new_skill
// proposal with the evidence (one per check: a later failure adds its
// evidence to the open proposal). It returns the proposals created or
// extended, each logged (proposal-created, or proposal-evidence), by
// agentx.
func Observe(ctx context.Context, h *router.Hub, issue int, a *evaluate.Attempt) ([]*Proposal, error) {
	store := h.Store
	failing := a.FailedChecks()
	if len(failing) == 0 {
		return nil, nil
	}
	issues, err := evaluate.Issues(store)
	if err != nil {
		return nil, err
	}
	evidence := map[string][]Evidence{}
	for _, n := range issues {
		rec, err := evaluate.Read(store, n)
		if err != nil {
			continue // a broken record of another issue is no evidence
		}
		for _, check := range failing {
			if ev, ok := lastFailure(rec, a.Workflow, a.Step, check); ok {
				evidence[check] = append(evidence[check], ev)
			}
		}
	}
	var out []*Proposal
	for _, check := range failing {
		evs := evidence[check]
		if len(evs) < MinIssues {
			continue
		}
		pattern := fmt.Sprintf("check:%s/%s/%s", a.Workflow, a.Step, check)
		var got *Proposal
		ev := router.EventProposalCreated
		err := update(ctx, store, func(b *Book) error {
			for _, p := range b.Proposals {
				if p.Pattern != pattern {
					continue
				}
				if p.Status == Pending {
					p.Evidence, p.Issues = evs, issuesOf(evs)
					got, ev = p, router.EventProposalEvidence
					return nil
				}
				if p.Status == Approved {
					return nil // a person is already on it
				}
			}
			p := &Proposal{
				ID: fmt.Sprintf("PROP-%03d", len(b.Proposals)+1), Type: TypeNewSkill,
				Title:     head(fmt.Sprintf("Agents keep failing the %s check of %s/%s", check, a.Workflow, a.Step), ledger.MaxTopicLen),
				Rationale: fmt.Sprintf("The %s check of step %s (workflow %s) did not pass on %d issues (%s): the %s agent lacks something it needs there.", check, a.Step, a.Workflow, len(evs), issueList(evs), a.Agent),
				Action:    fmt.Sprintf("Write a skill for the %s agent on passing the %s check of step %s: what the failures below have in common and how to avoid it; or fix the check or the tool if it is the one at fault.", a.Agent, check, a.Step),
				Impact:    "medium", Risk: "low", Status: Pending, Issues: issuesOf(evs), Evidence: evs,
				Pattern: pattern, CreatedBy: "agentx", Created: ledger.T(store.Now()),
			}
			b.Proposals = append(b.Proposals, p)
			got = p
			return nil
		})
		if err != nil {
			return out, err
		}
		if got != nil {
			logged(h, ev, got, router.HubAgent, "")
			out = append(out, got)
		}
	}
	return out, nil
}

// lastFailure is the newest attempt at the step on rec whose check did
// not pass, as evidence.
func lastFailure(rec *evaluate.Record, wf, step, check string) (Evidence, bool) {
	for i := len(rec.Attempts) - 1; i >= 0; i-- {
		at := rec.Attempts[i]
		if at.Workflow != wf || at.Step != step {
			continue
		}
		for _, c := range at.Checks {
			if c.Name == check && c.Verdict != evaluate.Pass {
				return Evidence{Issue: rec.IssueNumber, Eval: at.ID, Check: check, Feedback: head(c.Feedback, 1024)}, true
			}
		}
	}
	return Evidence{}, false
}

func issuesOf(evs []Evidence) []int {
	out := make([]int, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Issue)
	}
	return out
}

func issueList(evs []Evidence) string {
	parts := make([]string, len(evs))
	for i, e := range evs {
		parts[i] = fmt.Sprintf("#%d", e.Issue)
	}
	return strings.Join(parts, ", ")
}

func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// IsTransition reports whether err is a refused move.
func IsTransition(err error) bool {
	var te *TransitionError
	return errors.As(err, &te)
}
