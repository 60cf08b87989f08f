package router

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// RuleKind names the rule that refused a request (the MCP server's error
// "rule", the same names).
type RuleKind string

// The rules the hub enforces.
const (
	RuleScope    RuleKind = "scope"    // the target is not in can_clarify
	RuleBlocking RuleKind = "blocking" // blocking is not allowed for this step
	RuleCap      RuleKind = "cap"      // the asker has used its questions
	RuleParty    RuleKind = "party"    // the agent is not a party to the clarification
)

// RuleError is a request the workflow rules refuse: the rule's name and
// the fields a front end words its advice from. Its message and its Hint
// speak of the request and the rules, never of how a front end is used
// (flags, commands, tools): each front end words that itself.
type RuleError struct {
	Kind     RuleKind
	Msg      string
	From     string   // RuleScope, RuleBlocking, RuleCap: the asker
	To       string   // RuleScope, RuleBlocking: whom it asked
	Workflow string   // RuleScope, RuleBlocking: the workflow whose step refused
	Step     string   // RuleScope, RuleBlocking: the asker's step
	Issue    int      // RuleCap: the issue
	Asked    int      // RuleCap: the questions asked on it
	Max      int      // RuleCap: the limit (max_questions)
	Session  bool     // RuleCap: counted in the asker's session (a new session may ask again)
	Allowed  []string // RuleScope: whom the asker may ask; RuleParty: who may act (human: a person)
	ID       string   // RuleParty: the clarification
	Op       string   // RuleParty: what was refused (OpAnswer, OpResolve, ...)
	// Advice, when set, is the hint of a refusal a front end makes itself
	// (in its own words); the hub leaves it empty.
	Advice string
}

func (e *RuleError) Error() string { return e.Msg }

// Hint says what to do instead, in terms of the rules alone.
func (e *RuleError) Hint() string {
	if e.Advice != "" {
		return e.Advice
	}
	switch e.Kind {
	case RuleScope:
		return "ask one of the allowed agents or human, or add " + e.To + " to can_clarify of that step"
	case RuleBlocking:
		return "ask a non-blocking question and keep working; its answer can be picked up later"
	case RuleCap:
		if e.Session {
			return "proceed on your best judgment and record your assumption; a new session may ask again"
		}
		return "proceed on your best judgment and record your assumption; your next run on the issue may ask again"
	}
	return "" // RuleParty: see WhoHint
}

// WhoWords is how a front end words the hint of a refusal of who acts.
// Each says who may do it and how a person does it, never how to act as
// someone else.
type WhoWords struct {
	Identity func(e *IdentityError) string               // an identity refused
	Agents   func(agents []string) string                // the agents who may do what was refused
	Person   func(op, id string, onlyPerson bool) string // how a person does it
}

// WhoHint is the hint for err, worded by w, when err refuses who acts: an
// *IdentityError, or a RuleParty refusal (whose agents, and whether a
// person, may do it instead). "" for any other error.
func WhoHint(err error, w WhoWords) string {
	var ie *IdentityError
	if errors.As(err, &ie) {
		return w.Identity(ie)
	}
	var re *RuleError
	if !errors.As(err, &re) || re.Kind != RuleParty {
		return ""
	}
	var agents, parts []string
	person := false
	for _, a := range re.Allowed {
		if a == ledger.Human {
			person = true
		} else {
			agents = append(agents, a)
		}
	}
	if len(agents) > 0 {
		parts = append(parts, w.Agents(agents))
	}
	if person {
		parts = append(parts, w.Person(re.Op, re.ID, len(agents) == 0))
	}
	return strings.Join(parts, "; ")
}

// WaitTimeoutError means no answer came within the wait.
type WaitTimeoutError struct {
	ID     string
	Waited time.Duration
}

// Guidance is what an agent should do when its question goes unanswered.
const Guidance = "no answer; proceed on your best judgment and record your assumption"

func (e *WaitTimeoutError) Error() string {
	waited := e.Waited.Round(time.Second)
	if e.Waited < time.Second {
		waited = e.Waited.Round(time.Millisecond)
	}
	return fmt.Sprintf("%s: no answer after %s", e.ID, waited)
}

// Hint is the guidance for the asker; each front end says how to wait
// again.
func (e *WaitTimeoutError) Hint() string {
	return Guidance + " (the question stays open: a later wait picks the answer up)"
}

func scopeError(from, to string, allowed []string, workflow, step string) *RuleError {
	who := "nobody"
	if len(allowed) > 0 {
		who = strings.Join(allowed, ", ")
	}
	return &RuleError{
		Kind: RuleScope,
		Msg:  fmt.Sprintf("%s may not ask %s in step %q of workflow %q (may ask: %s)", from, to, step, workflow, who),
		From: from, To: to, Workflow: workflow, Step: step,
		Allowed: allowed,
	}
}

// KnownAgent refuses, as bad input, a name of an agent that nothing in the
// workspace names (no workflow step, no can_clarify, neither priority nor
// [agents] in config.toml): a typo (--to architekt) is told the agents
// there are and the one meant, not refused by the rules as if it were an
// agent. human is known where human is (a question may be put to one).
// field names the input as the data does (from, to, agent).
func KnownAgent(rules *workflow.Set, field, name string, human bool) *ledger.InputError {
	known := rules.Agents()
	if slices.Contains(known, name) || human && name == ledger.Human {
		return nil
	}
	if human {
		known = append(known, ledger.Human)
	}
	advice := words.DidYouMean(name, known)
	if advice == "" {
		advice = "name one of them; a new agent is named in a workflow step (or config.toml) first"
	}
	return &ledger.InputError{
		Field:  field,
		Value:  name,
		Msg:    fmt.Sprintf("is not an agent of this workspace (its agents: %s)", strings.Join(known, ", ")),
		Advice: advice,
	}
}
