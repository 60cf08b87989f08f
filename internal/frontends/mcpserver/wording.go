package mcpserver

import (
	"fmt"

	"github.com/agentx-cli/agentx/internal/atomicfile"
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

// Hint is the server's wording table: the hint of a tool error, in the
// server's terms (tools and their arguments; what a person does, never how
// a person's command is typed). Core errors carry their kind and fields;
// the command line and the desk word the same kinds in their own tables.
// "" when err offers no hint.
func Hint(err error) string {
	if h := identityHint(err); h != "" {
		return h
	}
	return words.Hint(err, toolWords)
}

// toolWords words one error of a chain for a model calling the tools;
// the kinds it does not name (bad input, an option not offered) keep their
// own hint, which speaks only of the input.
func toolWords(h words.Hinter) string {
	switch e := h.(type) {
	case *router.RuleError:
		return ruleWords(e)
	case *router.WaitTimeoutError:
		return fmt.Sprintf("%s (the question stays open: clarify_wait {\"id\":%q} picks the answer up later).", TimedOutGuidance, e.ID)
	case *ledger.CorruptError:
		if e.Derived {
			return fmt.Sprintf("%s was left untouched: a person's workspace check with repairs moves it aside (its content kept) and the next write starts it afresh.", e.Path)
		}
		return fmt.Sprintf("%s was left untouched: a person fixes its JSON, or moves it aside to start that issue afresh.", e.Path)
	case *workflow.BrokenError:
		return "A person fixes that workflow's file; the other workflows work meanwhile."
	case *remote.SupersededError:
		if len(e.Changed) == 0 {
			return ""
		}
		return fmt.Sprintf("The local copy is now the shared one: clarify_show {\"id\":%q} reads what the other host did.", e.Changed[0])
	case *remote.RenumberedError:
		return fmt.Sprintf("Use %s (clarify_show {\"id\":%q} reads it); %s on this host stays refused, as it is another host's question.", e.As, e.As, e.ID)
	case *remote.BusyError:
		return "Nothing was written: call the tool again ([remote] attempts in .agentx/config.toml tries more times)."
	case *remote.HistoryError:
		return fmt.Sprintf("Nothing was written and this host's copy is kept: a person repairs issue #%d's shared ledger (docs/remote.md); meanwhile go on with what does not need it.", e.Issue)
	case *atomicfile.SymlinkError:
		return "A person finds out who made the link (one in a cloned repository can point anywhere) and deletes it, or puts a regular file in its place; then call the tool again."
	case *workspace.NotFoundError:
		return "A person makes a workspace in the repository's top directory, or starts the server there."
	case *workspace.ExistsError:
		return "The workspace is there already; a person replaces its default files if need be (its state/ directory is kept)."
	case *setup.DataError:
		return "A person fixes the file (or moves it aside) and sets the tools up again; nothing was written."
	case *setup.MergeError:
		return "A person removes this server's entry from the file or writes it by hand; nothing was written."
	case *proposal.DraftError:
		return draftWords(e)
	case *skills.ExistsError:
		return "Draft under another name, or edit the skill that is there."
	case *skills.NameError:
		return "Name the skill with lowercase letters, digits and hyphens, at most 64 characters."
	}
	return h.Hint()
}

// ruleWords words a refusal of the workflow rules (a party refusal is
// identityHint's).
func ruleWords(e *router.RuleError) string {
	switch e.Kind {
	case router.RuleBlocking:
		return fmt.Sprintf("Step %s allows only non-blocking questions: call %s again with blocking false and keep working; the answer reaches you through the inbox or clarify_wait.", e.Step, askTool(e.To))
	case router.RuleCap:
		return "No more questions in this run on this issue (the next run may ask again): " + TimedOutGuidance + "."
	}
	return e.Hint()
}

// draftWords says what comes of a proposal that cannot be drafted into a
// skill: a person's decision or work ("" when nothing does).
func draftWords(e *proposal.DraftError) string {
	switch {
	case e.WrongType():
		return "A person carries out that proposal and marks it implemented; only a new_skill proposal is drafted."
	case e.Drafted != nil:
		return "Edit that skill; a person checks it before committing it."
	case e.Status == proposal.Pending:
		return "A person approves or rejects it first; proposal_show tells which."
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
