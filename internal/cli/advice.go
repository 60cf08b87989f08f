package cli

import (
	"errors"
	"fmt"

	"github.com/agentx-cli/agentx/internal/doctor"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/gate/skills"
	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/setup"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// The command line's wording. Core errors carry their kind and fields, and
// hints that name no command, flag or variable; the command line words the
// rest here (and who acts in identity.go's cliWords), as the MCP server
// and the desk each word it in their own tables. hintOf asks whoHint, then
// advice, then cliWording for each error of the chain in turn: the order
// the hints had when the core worded them.

// advice words, for the command line, the hint of a core refusal whose
// advice is about how to ask or wait again, or how to repair a file: the
// core's errors carry the rule and its fields, and say nothing of flags or
// commands. "" for other errors (see cliWording).
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
		return corruptAdvice(ce)
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

// cliWording is the command line's wording table: its commands and flags
// for the kinds whose core hint leaves them out; the other kinds keep the
// core's hint, which is the command line's too. Built when an error is
// worded, not at every start.
func cliWording() words.Table {
	return words.Table{
		words.Word(corruptAdvice),
		words.Word(func(*workspace.NotFoundError) string {
			return "run `agentx init` in the repository's top directory, or point --root (or AGENTX_ROOT) at it"
		}),
		words.Word(func(*workspace.ExistsError) string {
			return "pass --force to replace the default files (your state/ directory is kept)"
		}),
		words.Word(func(e *ledger.HandedLostError) string {
			if e.ID != "" {
				return fmt.Sprintf("`agentx clarify show %s` shows whether %s is there; make it again only if it is not", e.ID, e.What)
			}
			return fmt.Sprintf("`agentx clarify list --issue %d` shows the question if it is there; ask again only if it is not", e.Issue)
		}),
		words.Word(func(e *remote.RenumberedError) string {
			return fmt.Sprintf("run the command on %s; %s on this host stays refused, as it is another host's question (read it with agentx clarify show --issue %d)", e.As, e.ID, e.Issue)
		}),
		words.Word(doctor.RefusalAdvice), // doctor's action for a kept refusal says the same
		words.Word(func(*setup.DataError) string {
			return "fix the file (or move it aside) and run agentx setup again; nothing was written"
		}),
		words.Word(func(*skills.ExistsError) string {
			return "draft under another name with --name NAME, or edit the skill that is there"
		}),
		words.Word(func(*skills.NameError) string {
			return "give one with --name: lowercase letters, digits and hyphens, at most 64 characters"
		}),
		words.Word(draftAdvice),
	}
}

// draftAdvice is what to do about a proposal a draft refused.
func draftAdvice(e *proposal.DraftError) string {
	switch e.Next() {
	case proposal.NextCarryOut:
		return "a person carries out other proposals, then marks them: agentx proposals implemented " + e.ID
	case proposal.NextEdit:
		return "edit that skill; agentx skills validate checks it"
	case proposal.NextDecide:
		return "a person decides first, at a terminal of their own: agentx proposals approve " + e.ID
	}
	return ""
}

// corruptAdvice is what to do about a state file that does not parse: a
// derived one doctor moves aside; a ledger is for a person to fix or move.
func corruptAdvice(e *ledger.CorruptError) string {
	if e.Derived {
		return fmt.Sprintf("agentx left %s untouched. Run agentx doctor --fix: it moves the file aside (its content kept) and the next write starts it afresh.", e.Path)
	}
	return fmt.Sprintf("agentx left %s untouched. Fix the JSON by hand, or move it aside (mv %s %s.corrupt) to start that issue afresh.", e.Path, e.Path, e.Path)
}

// waitAdvice is what an asker whose wait ended unanswered is told.
func waitAdvice(id string) string {
	return router.Guidance + fmt.Sprintf(" (the question stays open: `agentx clarify wait %s` picks the answer up later)", id)
}
