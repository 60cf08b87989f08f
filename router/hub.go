package router

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/eventlog"
	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// HubAgent is the name the hub writes on entries it makes itself
// (escalations, automatic resolutions).
const HubAgent = "agentx"

// EventsFile is the event log's name in the state directory.
const EventsFile = eventlog.File

// Hub routes clarifications. Build it with New.
type Hub struct {
	Store  *ledger.Store
	Runner Runner
	Events EventLog
	Dir    string // the repository root: responders run here
	// Warn receives problems that do not undo a change already recorded
	// (an event that could not be appended, a notify command that failed).
	Warn func(error)
	// Detach, when set, takes responder runs off the caller's path: Ask and
	// Followup return the question as recorded and the answer lands in the
	// ledger when the responder is done. Detach must call run, with a
	// context that ends when the work should stop. A long-lived server
	// (agentx mcp) sets it, so a slow responder never holds up a tool call.
	Detach func(run func(ctx context.Context))
	// Trust decides whether a command the workspace names (a responder,
	// the notify command) may run on this machine. One it refuses is not
	// run: the question waits as if none were configured. nil runs every
	// command (a hub a test builds around its own Runner).
	Trust *trust.Gate

	rules   atomic.Pointer[workflow.Set] // Rules
	changes atomic.Int64                 // changes recorded through this hub (Changes)
}

// Rules are the workspace's rules the hub routes by: those it was built
// with, or those SetRules put in their place since.
func (h *Hub) Rules() *workflow.Set { return h.rules.Load() }

// SetRules replaces the rules, for the work that starts after it: a
// long-lived process (agentx mcp, desk, watch) that read the workspace's
// files again. Work already under way keeps the rules it started with;
// the trust gate, if any, judges the new rules' commands.
func (h *Hub) SetRules(rules *workflow.Set) {
	h.rules.Store(rules)
	h.Trust.SetRules(rules)
}

// Changes counts the changes recorded through this hub (questions,
// answers, hooks, the monitor's moves): a caller that derives a view of
// the workspace (SyncAgentStatus) knows by it whether to derive again.
func (h *Hub) Changes() int64 { return h.changes.Load() }

// New returns a hub over a workspace's store and rules, running responders
// as real processes in dir.
func New(store *ledger.Store, rules *workflow.Set, dir string) *Hub {
	h := &Hub{
		Store:  store,
		Runner: ExecRunner{Dir: dir},
		Events: EventLog{Path: filepath.Join(store.Dir(), EventsFile)},
		Dir:    dir,
		Warn:   func(error) {},
	}
	h.rules.Store(rules)
	handle(store)
	return h
}

func (h *Hub) now() time.Time { return h.Store.Now() }

// Record is a clarification with the issue it belongs to, as commands print it.
type Record struct {
	IssueNumber int `json:"issueNumber"`
	*ledger.Clarification

	// Set by Ask and Followup only: what came of running the responder.
	Outcome Outcome      `json:"outcome,omitempty"`
	RetryAt *ledger.Time `json:"retryAt,omitempty"` // retrying: when the one retry is due
	Detail  string       `json:"detail,omitempty"`  // retrying, escalated by a failure, superseded: what happened

	// DecidedBefore, set by Ask only, is what was decided before on the
	// question asked (see DecidedBefore), newest first.
	DecidedBefore []Decided `json:"decidedBefore,omitempty"`
}

// AskRequest is one new question.
type AskRequest struct {
	Issue       int
	From, To    string
	Topic       string
	Question    string
	NonBlocking bool
	Workflow    string   // "" = the default workflow
	Step        string   // "" = the asker's step in the workflow
	Options     []string // choices offered to the one asked (for a human: multiple choice)
	// Refs are the files (or lines of them) the asker gives with the
	// question; with the asked agent's artifact, the issue's text and the
	// asker's commit they are what it carries (brief.Gather), recorded as
	// agentx.context.
	Refs []brief.Ref
	// Session, when the front end knows it, is when the asker's session
	// began (a client's session: its MCP server's start, or a session its
	// hook reported): max_questions counts the questions since the later of
	// it and the asker's last hook on the issue.
	Session *time.Time
}

// Rule returns the rule that governs from's questions.
func (h *Hub) Rule(workflowName, from, step string) (workflow.Rule, error) {
	w, err := h.Rules().Workflow(workflowName)
	if err != nil {
		return workflow.Rule{}, err
	}
	return w.Rule(from, step)
}

// Ask records a new question after checking the rules, then, if the target
// has a responder, runs it and records its answer. It returns the record as
// it stands when Ask is done.
func (h *Hub) Ask(ctx context.Context, req AskRequest) (Record, error) {
	if err := validateAsk(req); err != nil {
		return Record{}, err
	}
	rule, err := h.Rule(req.Workflow, req.From, req.Step)
	if errors.Is(err, workflow.ErrNoStep) {
		if typo := KnownAgent(h.Rules(), "from", req.From, false); typo != nil {
			return Record{}, typo
		}
	}
	if err != nil {
		return Record{}, err
	}
	if req.To != ledger.Human && !rule.Allows(req.To) {
		if typo := KnownAgent(h.Rules(), "to", req.To, true); typo != nil {
			return Record{}, typo
		}
		err := scopeError(req.From, req.To, rule.CanClarify, rule.Workflow, rule.Step)
		h.ScopeRefused(req.Issue, req.From, req.To, req.Topic, err.Msg)
		return Record{}, err
	}
	blocking := !req.NonBlocking
	if blocking && !rule.BlockingAllowed {
		return Record{}, &RuleError{
			Kind: RuleBlocking,
			Msg:  fmt.Sprintf("step %q of workflow %q does not allow blocking questions", rule.Step, rule.Workflow),
			From: req.From, To: req.To, Workflow: rule.Workflow, Step: rule.Step,
		}
	}
	maxQ := h.Rules().Config.MaxQuestions
	var run *time.Time
	if maxQ > 0 {
		if run, err = h.RunStart(req.Issue, req.From); err != nil {
			return Record{}, err
		}
		if req.Session != nil && (run == nil || req.Session.After(*run)) {
			run = req.Session
		}
	}
	// read before the lock: the files are the asker's, not the ledger's
	cx := brief.Gather(ctx, brief.Request{
		Root: h.Dir, Rules: h.Rules(), Workflow: rule.Workflow, Step: rule.Step,
		From: req.From, To: req.To, Issue: req.Issue, Refs: req.Refs,
	})
	if maxQ > 0 {
		// a change made on a copy that may be behind (remote mode) is
		// judged by the cap again on the ledger it lands on
		ctx = ledger.WithCap(ctx, ledger.Cap{Max: maxQ, Since: run})
	}
	// One question, asked at one time, however many times the store makes
	// the change (remote mode makes it again on the shared ledger, or
	// after its intent was not found; or the holder of the issue's lock
	// it was handed to makes it): a question is known across hosts and
	// processes by what was asked and when, so each making must give the
	// same record.
	c, err := h.Store.Ask(ctx, req.Issue, ledger.Asking{
		Question: ledger.NewQuestion{
			From: req.From, To: req.To, Topic: req.Topic, Body: req.Question,
			Blocking: blocking, MaxRounds: rule.Rounds(blocking), SLA: h.sla(rule, req.To),
			Workflow: rule.Workflow, Step: rule.Step, Options: req.Options,
		},
		At:      h.now(),
		Cap:     ledger.Cap{Max: maxQ, Since: run},
		Context: cx,
		Capped:  func(n int) error { return capError(req, n, maxQ, run) },
	})
	if err != nil {
		return Record{}, h.lockTimedOut(err, func() Event {
			return Event{IssueNumber: req.Issue, FromAgent: req.From, ToAgent: req.To, Topic: req.Topic, Blocking: blocking, By: req.From}
		})
	}
	rec := Record{IssueNumber: req.Issue, Clarification: c}
	h.changed(EventRequested, rec, req.From, "")
	// what was decided before on the same question, for the asker: a
	// failure to read it takes nothing from the question asked
	decided, err := h.DecidedBefore(ctx, req.Topic, req.Question)
	if err != nil {
		h.Warn(fmt.Errorf("%s: decisions taken before could not be read: %w", rec.ID, err))
	}
	rec.DecidedBefore = decided
	out, err := h.respond(ctx, rec)
	out.DecidedBefore = decided
	var recorded *RecordedError
	if errors.As(err, &recorded) {
		recorded.Record.DecidedBefore = decided
	}
	return out, err
}

func validateAsk(req AskRequest) error {
	if err := ledger.ValidateIssue(req.Issue); err != nil {
		return err
	}
	if err := ledger.ValidateAgent("from", req.From); err != nil {
		return err
	}
	if err := ledger.ValidateAgent("to", req.To); err != nil {
		return err
	}
	if req.From == req.To {
		return &ledger.InputError{Field: "to", Value: req.To, Msg: "is the asker: an agent cannot ask itself"}
	}
	if req.From == ledger.Human {
		return &ledger.InputError{Field: "from", Value: req.From, Msg: "is not an agent: a human answers and resolves, but does not ask through agentx"}
	}
	if err := ledger.ValidateText("topic", req.Topic, ledger.MaxTopicLen); err != nil {
		return err
	}
	if len(req.Refs) > brief.MaxRefs {
		return &ledger.InputError{Field: "refs", Value: req.Refs[brief.MaxRefs].String(), Msg: fmt.Sprintf("is past the limit: a question names at most %d files", brief.MaxRefs)}
	}
	for i, o := range req.Options {
		if err := ledger.ValidateText(fmt.Sprintf("option %d", i+1), o, ledger.MaxTopicLen); err != nil {
			return err
		}
	}
	return ledger.ValidateMessage("question", req.Question)
}

// respond runs the target's responder for the current round, if it has
// one, once (see attempt: a failure schedules the one retry, for the
// monitor to make once it is due). A question to human runs the notify
// command instead. The lock is not held meanwhile.
func (h *Hub) respond(ctx context.Context, rec Record) (Record, error) {
	rec.Outcome = OutcomePending
	c := rec.Clarification
	if c.To == ledger.Human {
		h.notify(ctx, "question", rec)
		return rec, nil
	}
	r, ok := h.responder(c.To)
	if !ok {
		return rec, nil
	}
	delay := h.Rules().Config.Agents[c.To].RetryDelay.Duration
	if delay <= 0 {
		delay = workflow.DefaultRetryDelay
	}
	if h.Detach != nil {
		h.Detach(func(ctx context.Context) {
			out, err := h.attempt(ctx, rec, r, delay)
			if err != nil {
				if ctx.Err() == nil {
					h.Warn(fmt.Errorf("%s: responder for %s: %w", rec.ID, c.To, err))
				}
				return
			}
			if out.Outcome == OutcomeRetrying {
				h.retryLater(ctx, out)
			}
		})
		return rec, nil
	}
	out, err := h.attempt(ctx, rec, r, delay)
	var cut *CutOffError
	if errors.As(err, &cut) {
		err = cut.Err
	}
	if err != nil {
		return rec, &RecordedError{Record: rec, Err: err}
	}
	return out, nil
}
