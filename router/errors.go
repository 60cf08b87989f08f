package router

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// RuleKind says which rule refused a request.
type RuleKind string

// The rules the hub enforces.
const (
	RuleScope    RuleKind = "scope"    // the target is not in can_clarify
	RuleBlocking RuleKind = "blocking" // blocking is not allowed for this step
	RuleCap      RuleKind = "cap"      // the asker has used its questions
	RuleParty    RuleKind = "party"    // the agent is not a party to the clarification
)

// RuleError is a request the workflow rules refuse.
type RuleError struct {
	Kind    RuleKind
	Msg     string
	Advice  string
	Allowed []string // RuleScope: whom the asker may ask; RuleParty: who may act (human: a person)
	ID      string   // RuleParty: the clarification
	Op      string   // RuleParty: what was refused (OpAnswer, OpResolve, ...)
}

func (e *RuleError) Error() string { return e.Msg }

// Hint says what to do instead.
func (e *RuleError) Hint() string { return e.Advice }

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

// Hint is the guidance for the asker.
func (e *WaitTimeoutError) Hint() string {
	return Guidance + fmt.Sprintf(" (the question stays open: `agentx clarify wait %s` picks the answer up later)", e.ID)
}

func scopeError(from, to string, allowed []string, workflow, step string) *RuleError {
	who := "nobody"
	if len(allowed) > 0 {
		who = strings.Join(allowed, ", ")
	}
	return &RuleError{
		Kind:    RuleScope,
		Msg:     fmt.Sprintf("%s may not ask %s in step %q of workflow %q (may ask: %s)", from, to, step, workflow, who),
		Advice:  "ask one of the allowed agents or human, or add " + to + " to can_clarify of that step",
		Allowed: allowed,
	}
}
