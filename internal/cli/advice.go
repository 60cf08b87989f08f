package cli

import (
	"errors"
	"fmt"

	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// advice words, for the command line, the hint of a core refusal whose
// advice is about how to ask or wait again: the core's errors carry the
// rule and its fields, and say nothing of flags or commands. "" for other
// errors (their own Hint stands).
func advice(err error) string {
	var (
		re *router.RuleError
		te *router.WaitTimeoutError
		ce *ledger.CorruptError
		se *remote.SupersededError
		be *workflow.BrokenError
	)
	switch {
	case errors.As(err, &ce) && ce.Derived:
		return fmt.Sprintf("agentx left %s untouched. Run agentx doctor --fix: it moves the file aside (its content kept) and the next write starts it afresh.", ce.Path)
	case errors.As(err, &se) && len(se.Changed) > 0:
		return fmt.Sprintf("the local copy is now the shared one: agentx clarify show %s reads what the other host did", se.Changed[0])
	case errors.As(err, &re) && re.Kind == router.RuleBlocking && re.Advice == "":
		return "ask with --non-blocking and keep working; pick the answer up with `agentx clarify wait` or the inbox"
	case errors.As(err, &te):
		return waitAdvice(te.ID)
	case errors.As(err, &be):
		return "fix the workflow file (agentx workflow validate lists every problem); the other workflows work meanwhile"
	}
	return ""
}

// waitAdvice is what an asker whose wait ended unanswered is told.
func waitAdvice(id string) string {
	return router.Guidance + fmt.Sprintf(" (the question stays open: `agentx clarify wait %s` picks the answer up later)", id)
}
