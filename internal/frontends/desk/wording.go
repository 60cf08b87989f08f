package desk

import (
	"fmt"
	"strings"

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

// Hint is the hint the page shows under a refused action, for a person at
// a web page (what to do here, or who does it; never a command line's
// commands, flags or variables): a refusal of who acts (deskWho), else
// Wording's. "" when err offers no hint.
func Hint(err error) string {
	if h := router.WhoHint(err, deskWho); h != "" {
		return h
	}
	return Wording().Hint(err)
}

// deskWho words a refusal of who acts for the person at the page.
var deskWho = router.WhoWords{
	Identity: func(e *router.IdentityError) string {
		switch e.Kind {
		case router.IdentityNotAllowed, router.IdentityAccount:
			return "only the people the workspace's [humans] settings list act as human here; its owner adds you, or one of them answers"
		case router.IdentityNoName:
			return "the desk has no name to record you by: start it again under your own name"
		case router.IdentityNoTerminal, router.IdentityNotConfirmed:
			return "nothing was done: confirm the action where the desk was started, then try again"
		case router.IdentityHub:
			return "the hub writes its own entries: act as yourself"
		}
		return "the desk acts only as you, a person: an agent acts in its own session"
	},
	Agents: func(agents []string) string {
		return strings.Join(agents, " or ") + " does it in its own session"
	},
	Person: func(op, id string, only bool) string {
		if only {
			return fmt.Sprintf("only a person may %s %s", op, id)
		}
		return fmt.Sprintf("a person may %s %s", op, id)
	},
}

// Wording is the desk's wording table: every kind of error an action at
// the page may meet, worded for the person at it. Core errors carry their
// kind and fields; the command line and the MCP server word the same
// kinds in their own tables. Built when an error is worded, not at every
// start of agentx.
func Wording() words.Table {
	return words.Table{
		words.Word((*router.RuleError).Hint), // the rules (a party refusal: deskWho)
		words.Word((*router.WaitTimeoutError).Hint),
		words.Word((*router.OptionError).Hint), // the options, by number
		words.Word((*ledger.InputError).Hint),  // the text in the box
		words.Word(func(e *ledger.CorruptError) string {
			if e.Derived {
				return fmt.Sprintf("%s was left untouched: a workspace check with repairs moves it aside (its content kept) and the next write starts it afresh", e.Path)
			}
			return fmt.Sprintf("%s was left untouched: fix its JSON by hand, or move it aside to start that issue afresh", e.Path)
		}),
		words.Word(func(*workflow.BrokenError) string {
			return "fix that workflow's file; the other workflows work meanwhile"
		}),
		words.Word(func(e *remote.SupersededError) string {
			if len(e.Changed) == 0 {
				return ""
			}
			return fmt.Sprintf("the local copy is now the shared one: the page shows %s as the other host left it", e.Changed[0])
		}),
		words.Word(func(e *remote.RenumberedError) string {
			return fmt.Sprintf("act on %s instead; %s on this host stays refused, as it is another host's question", e.As, e.ID)
		}),
		words.Word(func(*remote.BusyError) string {
			return "nothing was written: try again ([remote] attempts in .agentx/config.toml tries more times)"
		}),
		words.Word(func(e *ledger.HandedLostError) string {
			if e.ID != "" {
				return fmt.Sprintf("%s may be on issue #%d's shared ledger already: the page shows %s as it is; make it again only if it is not there", e.What, e.Issue, e.ID)
			}
			return fmt.Sprintf("the question may be on issue #%d's shared ledger already: the page shows it if it is; ask again only if it is not", e.Issue)
		}),
		words.Word(func(e *remote.HistoryError) string {
			return fmt.Sprintf("nothing was written and this host's copy is kept: issue #%d's shared ledger needs repair first (docs/remote.md)", e.Issue)
		}),
		words.Word(func(*atomicfile.SymlinkError) string {
			return "find out who made the link (one in a cloned repository can point anywhere); delete it, or put a regular file in its place, and try again"
		}),
		words.Word(func(*workspace.NotFoundError) string {
			return "make a workspace in the repository's top directory, or start the desk there"
		}),
		words.Word(func(*workspace.ExistsError) string {
			return "the workspace is there already; its default files are replaced only on purpose (its state/ directory is kept)"
		}),
		words.Word(func(*setup.DataError) string {
			return "fix the file (or move it aside) and set the tools up again; nothing was written"
		}),
		words.Word(func(*setup.MergeError) string {
			return "remove the tool's entry from the file, or write it by hand; nothing was written"
		}),
		words.Word(draftWords),
		words.Word(func(*skills.ExistsError) string { return "draft under another name, or edit the skill that is there" }),
		words.Word(func(*skills.NameError) string {
			return "name the skill with lowercase letters, digits and hyphens, at most 64 characters"
		}),
	}
}

// draftWords says what comes of a proposal that cannot be drafted into a
// skill ("" when nothing does).
func draftWords(e *proposal.DraftError) string {
	switch e.Next() {
	case proposal.NextCarryOut:
		return "carry that proposal out, then mark it implemented; only a new_skill proposal is drafted"
	case proposal.NextEdit:
		return "edit that skill and check it before committing it"
	case proposal.NextDecide:
		return "approve or reject it first, on this page"
	}
	return ""
}
