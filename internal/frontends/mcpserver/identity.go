package mcpserver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// personHint is how the server tells an agent what a person does: it names
// the way, never suggests the agent take it.
const personHint = "a person does it with the agentx command line, in a shell of their own; to involve one, ask with ask_human"

// identityHint words the hint for a refusal of who acts: an identity the
// server does not have, or an action only another party may take. "" for
// other errors.
func identityHint(err error) string { return router.WhoHint(err, mcpWords) }

var mcpWords = router.WhoWords{
	Identity: func(e *router.IdentityError) string {
		switch e.Kind {
		case router.IdentityOtherAgent:
			return fmt.Sprintf("You act as %s, this server's agent: leave from out. What is another agent's to do, that agent does in its own session; %s.", e.Agent, personHint)
		case router.IdentityAgentAsPerson, router.IdentityAgentsOnly:
			return "Only a person acts as human: " + personHint + ". Meanwhile proceed on your best judgment and record your assumption with clarify_assume."
		case router.IdentityHub:
			return "agentx writes its own entries; leave from out."
		case router.IdentityNotAnAgent:
			return "Launch the server with the agent's own name in AGENTX_AGENT (engineer, architect, ...)."
		}
		return ""
	},
	Agents: func(agents []string) string {
		return fmt.Sprintf("it is for %s to do, in its own session", strings.Join(agents, " or "))
	},
	Person: func(string, string, bool) string { return personHint },
}

// toolHint words, in the server's terms (tools and their arguments), the
// hint of a refusal the core leaves to its front ends: who acts (see
// identityHint), a blocking question a step does not allow, the question
// cap, a wait that ended unanswered. "" for other errors.
func toolHint(err error) string {
	if h := identityHint(err); h != "" {
		return h
	}
	var (
		re *router.RuleError
		te *router.WaitTimeoutError
	)
	switch {
	case errors.As(err, &re) && re.Kind == router.RuleBlocking:
		return fmt.Sprintf("Step %s allows only non-blocking questions: call %s again with blocking false and keep working; the answer reaches you through the inbox or clarify_wait.", re.Step, askTool(re.To))
	case errors.As(err, &re) && re.Kind == router.RuleCap:
		return "No more questions in this run on this issue (the next run may ask again): " + TimedOutGuidance + "."
	case errors.As(err, &te):
		return fmt.Sprintf("%s (the question stays open: clarify_wait {\"id\":%q} picks the answer up later).", TimedOutGuidance, te.ID)
	}
	return ""
}

// askTool is the tool that asks to.
func askTool(to string) string {
	if to == ledger.Human {
		return "ask_human"
	}
	return "clarify_ask"
}
