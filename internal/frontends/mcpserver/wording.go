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

// Hint is the hint of a tool error, in the server's terms (tools and
// their arguments; what a person does, never how a person's command is
// typed): a refusal of who acts (identityHint), else Wording's. "" when
// err offers no hint.
func Hint(err error) string {
	if h := identityHint(err); h != "" {
		return h
	}
	return Wording().Hint(err)
}

// Wording is the server's wording table: every kind of error a tool call
// may meet, worded for a model calling the tools. Core errors carry their
// kind and fields; the command line and the desk word the same kinds in
// their own tables. Built when an error is worded, not at every start of
// agentx.
func Wording() words.Table {
	return words.Table{
		words.Word(ruleWords),
		words.Word(func(e *router.WaitTimeoutError) string {
			return fmt.Sprintf("%s (the question stays open: clarify_wait {\"id\":%q} picks the answer up later).", TimedOutGuidance, e.ID)
		}),
		words.Word((*router.OptionError).Hint), // the options, by number
		words.Word((*ledger.InputError).Hint),  // the input, by the argument's name
		words.Word(func(e *ledger.CorruptError) string {
			if e.Derived {
				return fmt.Sprintf("%s was left untouched: a person's workspace check with repairs moves it aside (its content kept) and the next write starts it afresh.", e.Path)
			}
			return fmt.Sprintf("%s was left untouched: a person fixes its JSON, or moves it aside to start that issue afresh.", e.Path)
		}),
		words.Word(func(*workflow.BrokenError) string {
			return "A person fixes that workflow's file; the other workflows work meanwhile."
		}),
		words.Word(func(e *remote.SupersededError) string {
			if len(e.Changed) == 0 {
				return ""
			}
			return fmt.Sprintf("The local copy is now the shared one: clarify_show {\"id\":%q} reads what the other host did.", e.Changed[0])
		}),
		words.Word(func(e *remote.RenumberedError) string {
			return fmt.Sprintf("Use %s (clarify_show {\"id\":%q} reads it); %s on this host stays refused, as it is another host's question.", e.As, e.As, e.ID)
		}),
		words.Word(func(*remote.BusyError) string {
			return "Nothing was written: call the tool again ([remote] attempts in .agentx/config.toml tries more times)."
		}),
		words.Word(func(e *ledger.HandedLostError) string {
			if e.ID != "" {
				return fmt.Sprintf("It may be on the shared ledger already: clarify_show {\"id\":%q} shows whether %s is there; make it again only if it is not.", e.ID, e.What)
			}
			return fmt.Sprintf("The question may be on the shared ledger already: clarify_list {\"issue\":%d} shows it if it is; ask again only if it is not.", e.Issue)
		}),
		words.Word(func(e *remote.HistoryError) string {
			return fmt.Sprintf("Nothing was written and this host's copy is kept: a person repairs issue #%d's shared ledger (docs/remote.md); meanwhile go on with what does not need it.", e.Issue)
		}),
		words.Word(func(*atomicfile.SymlinkError) string {
			return "A person finds out who made the link (one in a cloned repository can point anywhere) and deletes it, or puts a regular file in its place; then call the tool again."
		}),
		words.Word(func(*workspace.NotFoundError) string {
			return "A person makes a workspace in the repository's top directory, or starts the server there."
		}),
		words.Word(func(*workspace.ExistsError) string {
			return "The workspace is there already; a person replaces its default files if need be (its state/ directory is kept)."
		}),
		words.Word(func(*setup.DataError) string {
			return "A person fixes the file (or moves it aside) and sets the tools up again; nothing was written."
		}),
		words.Word(func(*setup.MergeError) string {
			return "A person removes this server's entry from the file or writes it by hand; nothing was written."
		}),
		words.Word(draftWords),
		words.Word(func(*skills.ExistsError) string { return "Draft under another name, or edit the skill that is there." }),
		words.Word(func(*skills.NameError) string {
			return "Name the skill with lowercase letters, digits and hyphens, at most 64 characters."
		}),
	}
}

// ruleWords words a refusal of the workflow rules (a party refusal is
// identityHint's: "" here).
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
	switch e.Next() {
	case proposal.NextCarryOut:
		return "A person carries out that proposal and marks it implemented; only a new_skill proposal is drafted."
	case proposal.NextEdit:
		return "Edit that skill; a person checks it before committing it."
	case proposal.NextDecide:
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
