package mcpserver

import (
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/router"
)

// personHint is how the server tells an agent what a person does: it names
// the way, never suggests the agent take it (nor how a person's command is
// run: a model reads that as the way round a refusal).
const personHint = "a person does it in a session of their own, at a terminal or the desk; to involve one, ask with ask_human"

// identityHint words the hint for a refusal of who acts: an identity the
// server does not have, or an action only another party may take. "" for
// other errors.
func identityHint(err error) string { return router.WhoHint(err, mcpWords) }

// mcpWords words every kind of identity refusal for a model calling the
// tools. The server never acts as a person, so the kinds about a person's
// name, account or terminal reach it only through a person's own front
// end's rules: they are worded as what a person does.
var mcpWords = router.WhoWords{
	Identity: func(e *router.IdentityError) string {
		switch e.Kind {
		case router.IdentityOtherAgent:
			return fmt.Sprintf("You act as %s, this server's agent: leave from out. What is another agent's to do, that agent does in its own session; %s.", e.Agent, personHint)
		case router.IdentityAgentAsPerson, router.IdentityAgentsOnly:
			return "Only a person acts as human: " + personHint + ". Meanwhile proceed on your best judgment and record your assumption with clarify_assume."
		case router.IdentityHub:
			return "The hub writes its own entries under its own name; leave from out."
		case router.IdentityNotAnAgent:
			return "The server was launched under a name that is not an agent's (human, or the hub's own): a person configures it with the agent's own name (engineer, architect, ...)."
		case router.IdentityNotAllowed, router.IdentityNoName, router.IdentityAccount:
			return "Only the people the workspace lists act as human, each under their own name: " + personHint + "."
		case router.IdentityNoTerminal, router.IdentityNotConfirmed:
			return "Nothing was done: a person confirms their own action where they act; " + personHint + "."
		}
		return ""
	},
	Agents: func(agents []string) string {
		return fmt.Sprintf("it is for %s to do, in its own session", strings.Join(agents, " or "))
	},
	Person: func(string, string, bool) string { return personHint },
}
