package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/clock"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// Shell completion (agentx completion bash|zsh|fish|powershell) offers,
// from the workspace: clarification ids, open ones first, for the commands
// that take an ID and for --id; agent names (from config.toml and the
// workflows) for --from, --to and --agent; workflow names for --workflow
// and "workflow show". It reads the workspace and never changes it.

// completer completes from the workspace the session a opens.
type completer struct{ a *App }

// registerCompletions wires the dynamic completions into the command tree
// under root.
func registerCompletions(a *App, root *cobra.Command) {
	cp := completer{a}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if use := strings.Fields(c.Use); len(use) > 1 && use[1] == "ID" {
			c.ValidArgsFunction = firstArg(cp.ids)
		}
		if c.CommandPath() == "agentx workflow show" {
			c.ValidArgsFunction = firstArg(cp.workflows)
		}
		for name, fn := range map[string]cobra.CompletionFunc{
			"id":       cp.ids,
			"workflow": cp.workflows,
			"agent":    cp.agents(false),
			"from":     cp.agents(humanMayAct(c)),
			"to":       cp.agents(true),
		} {
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, fn)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// humanMayAct reports whether --from of c may name human: a person answers
// and resolves.
func humanMayAct(c *cobra.Command) bool {
	return c.Name() == "answer" || c.Name() == "resolve"
}

// firstArg completes the first positional argument with fn, and nothing
// after it.
func firstArg(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(cmd, args, toComplete)
	}
}

// hub opens the workspace for completing, quietly: no workspace
// (or a broken one) offers nothing.
func (cp completer) hub() *router.Hub {
	a := cp.a
	if a.now == nil {
		now, err := clock.FromEnv(a.getenv(clock.EnvVar))
		if err != nil {
			return nil
		}
		a.now = now
	}
	if a.root == "" {
		a.root = a.getenv("AGENTX_ROOT")
	}
	_, h, err := a.localHub() // a completion offers the local copy: no fetch
	if err != nil {
		return nil
	}
	return h
}

// ids offers the clarification ids that start with toComplete:
// open ones first, then the others, each by issue and number, described by
// status, agents and topic.
func (cp completer) ids(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	h := cp.hub()
	if h == nil {
		return nil, none
	}
	// One ledger at a time, keeping only the ids that match.
	type match struct {
		open         bool
		issue, seq   int
		id, describe string
	}
	var ms []match
	_, err := h.Each(router.Filter{All: true}, func(r router.Record) error {
		if strings.HasPrefix(r.ID, toComplete) {
			_, seq, _ := ledger.ParseID(r.ID)
			ms = append(ms, match{r.Status.Open(), r.IssueNumber, seq, r.ID,
				fmt.Sprintf("%s %s -> %s: %s", r.Status, r.From, r.To, strings.Join(strings.Fields(r.Topic), " "))})
		}
		return nil
	})
	if err != nil {
		return nil, none
	}
	slices.SortStableFunc(ms, func(x, y match) int {
		if x.open != y.open {
			if x.open {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(x.issue, y.issue), cmp.Compare(x.seq, y.seq))
	})
	var out []cobra.Completion
	for _, m := range ms {
		out = append(out, cobra.CompletionWithDesc(m.id, m.describe))
	}
	return out, none | cobra.ShellCompDirectiveKeepOrder
}

// agents offers the agent names the workspace knows, and human
// when withHuman.
func (cp completer) agents(withHuman bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var names []string
		if h := cp.hub(); h != nil {
			names = h.Rules().Agents()
		}
		if withHuman {
			names = append(names, ledger.Human)
		}
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// workflows offers the workflow names.
func (cp completer) workflows(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var names []string
	if h := cp.hub(); h != nil {
		names = h.Rules().Names()
	}
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// withPrefix keeps the names that start with prefix.
func withPrefix(names []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}
