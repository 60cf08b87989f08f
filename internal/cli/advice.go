package cli

import (
	"errors"
	"fmt"

	"github.com/agentx-cli/agentx/router"
)

// advice words, for the command line, the hint of a core refusal whose
// advice is about how to ask or wait again: the core's errors carry the
// rule and its fields, and say nothing of flags or commands. "" for other
// errors (their own Hint stands).
func advice(err error) string {
	var (
		re *router.RuleError
		te *router.WaitTimeoutError
	)
	switch {
	case errors.As(err, &re) && re.Kind == router.RuleBlocking && re.Advice == "":
		return "ask with --non-blocking and keep working; pick the answer up with `agentx clarify wait` or the inbox"
	case errors.As(err, &te):
		return waitAdvice(te.ID)
	}
	return ""
}

// waitAdvice is what an asker whose wait ended unanswered is told.
func waitAdvice(id string) string {
	return router.Guidance + fmt.Sprintf(" (the question stays open: `agentx clarify wait %s` picks the answer up later)", id)
}
