package router

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentx-cli/agentx/ledger"
)

// Caller is who acts through a front end (the command line, the MCP
// server). A process has one identity, the agent it was launched as; it
// never acts as another agent, nor as a person. A person acts from a
// process launched as no agent, and is recorded by name.
//
// This is the one place that decides who may act as whom. A front end
// builds one Caller per process, checks each name a request gives with
// Claim, and puts the Caller in the context of the hub calls it makes
// (WithCaller), so that the hub can check an action that turns out to be a
// person's (an answer to a question addressed to human, say) and record
// the person's name.
type Caller struct {
	// Agent is the process's identity, set by whoever launched it
	// (AGENTX_AGENT); "" when it was launched as no agent.
	Agent string
	// AgentsOnly marks a front end that never acts as a person, whatever
	// its environment (the MCP server). Via names it in errors.
	AgentsOnly bool
	Via        string
	// Person returns the name of the person acting; it is called at most
	// once, and only for a person's action. Nil: no name can be found.
	Person func() (string, error)
	// Allow returns who may act as a person ([humans] allow in config.toml);
	// nil, or an empty list: anyone. Names compare case-insensitively. It is
	// called only for a person's action.
	Allow func() ([]string, error)
	// Confirm, when set, asks the person to confirm the action where only
	// a person can (the controlling terminal); it is called once, after
	// the name is known and allowed, and returns an *IdentityError
	// (IdentityNoTerminal, IdentityNotConfirmed) when the action may not
	// go on. Nil: no confirmation (a front end whose channel authenticated
	// the person).
	Confirm func(person string) error

	once      sync.Once
	person    string
	err       error
	confirmed sync.Once
	cerr      error
}

// Claim decides who acts when a request names name in field ("" when it
// names nobody). A process launched as an agent acts as that agent: naming
// no one or itself gives its name; naming another agent, or human, is an
// *IdentityError. A process launched as no agent may name any agent (a
// person at a shell stands in for one), or human if it may act as a person
// (see Human); "" then stays "", for the hub's default.
func (c *Caller) Claim(field, name string) (string, error) {
	if err := c.launchedAs(); err != nil {
		return "", err
	}
	switch {
	case name == HubAgent:
		return "", &IdentityError{Kind: IdentityHub, Field: field, Claimed: name}
	case c.Agent == "" && name == ledger.Human:
		if _, err := c.human(field); err != nil {
			return "", err
		}
		return name, nil
	case c.Agent == "" || name == "" || name == c.Agent:
		if name == "" {
			return c.Agent, nil
		}
		return name, nil
	case name == ledger.Human:
		return "", &IdentityError{Kind: IdentityAgentAsPerson, Field: field, Claimed: name, Agent: c.Agent}
	}
	return "", &IdentityError{Kind: IdentityOtherAgent, Field: field, Claimed: name, Agent: c.Agent}
}

// Human checks that the caller may act as a person and returns the
// person's name: the process was launched as no agent, the front end acts
// for people, a name is known and, if [humans] allow is set, listed there.
func (c *Caller) Human() (string, error) {
	if err := c.launchedAs(); err != nil {
		return "", err
	}
	return c.human("from")
}

func (c *Caller) human(field string) (string, error) {
	switch {
	case c.Agent != "":
		return "", &IdentityError{Kind: IdentityAgentAsPerson, Field: field, Claimed: ledger.Human, Agent: c.Agent}
	case c.AgentsOnly:
		return "", &IdentityError{Kind: IdentityAgentsOnly, Field: field, Claimed: ledger.Human, Via: c.Via}
	}
	c.once.Do(func() {
		if c.Person == nil {
			c.err = fmt.Errorf("no way to tell who is acting")
			return
		}
		c.person, c.err = c.Person()
		if c.err == nil {
			c.person = strings.TrimSpace(c.person)
			c.err = ledger.ValidatePerson(c.person)
		}
	})
	if c.err != nil {
		return "", &IdentityError{Kind: IdentityNoName, Field: field, Claimed: ledger.Human, Err: c.err}
	}
	var allow []string
	if c.Allow != nil {
		var err error
		if allow, err = c.Allow(); err != nil {
			return "", err
		}
	}
	if len(allow) > 0 && !containsFold(allow, c.person) {
		return "", &IdentityError{Kind: IdentityNotAllowed, Field: field, Claimed: ledger.Human, Person: c.person, Allow: allow}
	}
	if c.Confirm != nil {
		c.confirmed.Do(func() { c.cerr = c.Confirm(c.person) })
		if c.cerr != nil {
			var ie *IdentityError
			if errors.As(c.cerr, &ie) && ie.Field == "" {
				ie.Field, ie.Claimed, ie.Person = field, ledger.Human, c.person
			}
			return "", c.cerr
		}
	}
	return c.person, nil
}

// launchedAs refuses an identity no process may be launched with: human
// (a person is a process launched as no agent) or the hub's own name.
func (c *Caller) launchedAs() error {
	if c.Agent == ledger.Human || c.Agent == HubAgent {
		return &IdentityError{Kind: IdentityNotAnAgent, Field: EnvAgent, Claimed: c.Agent}
	}
	return nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// EnvAgent is the environment variable that gives a process its identity.
const EnvAgent = "AGENTX_AGENT"

type callerKey struct{}

// WithCaller returns ctx carrying c: the hub checks with it any action
// that turns out to be a person's, and records the person's name.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// person returns who acts as human when from is human: the person's name
// from ctx's Caller, checked. Without a Caller (the hub's own calls, tests)
// the action is trusted and no name is recorded.
func person(ctx context.Context, from string) (string, error) {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	if from != ledger.Human || c == nil {
		return "", nil
	}
	return c.Human()
}

// IdentityKind says why an identity was refused.
type IdentityKind string

// The refusals.
const (
	IdentityOtherAgent    IdentityKind = "other-agent"    // an agent process named another agent
	IdentityAgentAsPerson IdentityKind = "agent-as-human" // an agent process named human
	IdentityAgentsOnly    IdentityKind = "agents-only"    // a front end that never acts as a person named human
	IdentityNotAllowed    IdentityKind = "not-allowed"    // the person is not in [humans] allow
	IdentityNoName        IdentityKind = "no-name"        // no name for the person
	IdentityHub           IdentityKind = "hub"            // agentx, the hub's own name, was named
	IdentityNotAnAgent    IdentityKind = "not-an-agent"   // AGENTX_AGENT is human or agentx
	IdentityNoTerminal    IdentityKind = "no-terminal"    // a person's action with no terminal to confirm it at
	IdentityNotConfirmed  IdentityKind = "not-confirmed"  // the person at the terminal did not confirm
	IdentityAccount       IdentityKind = "account"        // [humans] accounts: not a listed OS account, or the list unguarded (Err)
)

// IdentityError is a request to act as someone the caller is not. Its
// message speaks of fields; each front end words its own hint.
type IdentityError struct {
	Kind    IdentityKind
	Field   string   // the request's field: from, agent, as, or AGENTX_AGENT
	Claimed string   // the name the request gave
	Agent   string   // the process's identity, if it has one
	Via     string   // IdentityAgentsOnly: the front end
	Person  string   // IdentityNotAllowed: the person's name
	Allow   []string // IdentityNotAllowed: who may act as a person
	Err     error    // IdentityNoName: why no name was found; IdentityAccount: the account check's refusal
}

func (e *IdentityError) Error() string {
	switch e.Kind {
	case IdentityOtherAgent:
		return fmt.Sprintf("%s %q: this process is agent %s (%s) and acts only as %s", e.Field, e.Claimed, e.Agent, EnvAgent, e.Agent)
	case IdentityAgentAsPerson:
		return fmt.Sprintf("%s %q: this process is agent %s (%s); an agent never acts as a person", e.Field, e.Claimed, e.Agent, EnvAgent)
	case IdentityAgentsOnly:
		via := e.Via
		if via == "" {
			via = "this front end"
		}
		return fmt.Sprintf("%s %q: %s acts for agents only, never as a person", e.Field, e.Claimed, via)
	case IdentityNotAllowed:
		return fmt.Sprintf("%s %q: %s may not act as a person here: [humans] allow lists only %s", e.Field, e.Claimed, e.Person, strings.Join(e.Allow, ", "))
	case IdentityNoName:
		return fmt.Sprintf("%s %q: no name for the person acting: %v", e.Field, e.Claimed, e.Err)
	case IdentityHub:
		return fmt.Sprintf("%s %q: %s is the hub's own name; nobody acts as it", e.Field, e.Claimed, HubAgent)
	case IdentityAccount:
		return fmt.Sprintf("%s %q: %v", e.Field, e.Claimed, e.Err)
	case IdentityNoTerminal:
		return fmt.Sprintf("%s %q: a person's action is confirmed at the terminal of the person taking it, and this process has none", e.Field, e.Claimed)
	case IdentityNotConfirmed:
		return fmt.Sprintf("%s %q: not confirmed at the terminal: nothing done", e.Field, e.Claimed)
	case IdentityNotAnAgent:
		return fmt.Sprintf("%s=%s: not an agent's name; a process is launched as an agent (engineer, architect, ...)", e.Field, e.Claimed)
	}
	return fmt.Sprintf("%s %q: refused", e.Field, e.Claimed)
}

func (e *IdentityError) Unwrap() error { return e.Err }
