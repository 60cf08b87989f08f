package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentx-cli/agentx/internal/words"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// topLevel are the commands, by name: a run builds only
// the one its command line names (see newRoot).
func topLevel() []topCmd {
	return []topCmd{
		{"init", newInitCmd}, {"workflow", newWorkflowCmd}, {"version", newVersionCmd},
		{"clarify", newClarifyCmd}, {"state", newStateCmd}, {"ready", newReadyCmd},
		{"events", newEventsCmd}, {"demo", newDemoCmd}, {"demo-responder", newDemoResponderCmd},
		{"inbox", newInboxCmd}, {"hook", newHookCmd}, {"monitor", newMonitorCmd},
		{"eval", newEvalCmd}, {"scope", newScopeCmd}, {"proposals", newProposalsCmd},
		{"remote", newRemoteCmd}, {"sync", newSyncCmd}, {"exit-codes", newExitCodesCmd},
		{"doctor", newDoctorCmd}, {"github", newGitHubCmd}, {"mcp", newMCPCmd},
		{"skills", newSkillsCmd}, {"slack", newSlackCmd}, {"wake-exec", newWakeExecCmd}, {"setup", newSetupCmd},
		{"watch", newWatchCmd}, {"todo", newTodoCmd}, {"desk", newDeskCmd}, {"trust", newTrustCmd},
		{"issue", newIssueCmd},
	}
}

type topCmd struct {
	name string
	make func(*App) *cobra.Command
}

// newRootCmd is the whole command tree.
func newRootCmd(a *App) *cobra.Command { return newRoot(a, "") }

// newRoot is the command tree for a command line whose first argument is
// first: only that command under the root when it names one of topLevel
// (building every command and its flags would cost each run more than
// some commands take), else the whole tree (help, completion, a flag
// before the command, a mistyped name).
func newRoot(a *App, first string) *cobra.Command {
	root := &cobra.Command{
		Use:   "agentx",
		Short: "Clarifying questions between AI coding agents, and humans, with every round recorded",
		Long: `agentx lets an AI coding agent that hits an ambiguity ask the agent upstream
of it (engineer → architect → product manager), or a human, a clarifying
question; wait for or come back to the answer; and carry on. Every round is
recorded in a per-issue ledger under .agentx/state/clarifications/.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return a.prepare(cmd)
		},
		Version: version(),
	}
	root.SetVersionTemplate("agentx {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{Err: err, hint: flagHint(c, err)} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.root, "root", "", "where to find the workspace: the nearest directory at or above it holding .agentx/ (default: $AGENTX_ROOT, else the working directory)")
	pf.BoolVar(&a.json, "json", false, "print JSON: {\"schema_version\":1,\"data\":...} on stdout, errors as JSON on stderr")
	pf.BoolVar(&a.noColor, "no-color", false, "never colour the output (also NO_COLOR=1 or CLICOLOR=0)")
	pf.BoolVar(&a.offline, "offline", false, "with a [remote]: read the local copy and keep changes in the outbox, never reaching the remote")

	for _, c := range topLevel() {
		if c.name == first {
			root.AddCommand(c.make(a))
			// nor cobra's completion command and its four scripts, which
			// only `agentx completion` runs
			root.CompletionOptions.DisableDefaultCmd = true
			return root
		}
	}
	for _, c := range topLevel() {
		root.AddCommand(c.make(a))
	}
	return root
}

func newExitCodesCmd(*App) *cobra.Command {
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes agentx returns, and the JSON error codes",
		Long:  exitCodesHelp(),
	}
}

// flagHint is the hint for a flag cmd does not have: the one of its flags
// that was meant, when one is close ("--isue": did you mean --issue?), as
// cobra suggests a mistyped command. "" for any other flag error.
func flagHint(cmd *cobra.Command, err error) string {
	var unknown *pflag.NotExistError
	if !errors.As(err, &unknown) || unknown.GetSpecifiedName() == "" || unknown.GetSpecifiedShortnames() != "" {
		return "" // a mistyped short flag (-s) is one letter: nothing to be near
	}
	typed := unknown.GetSpecifiedName()
	var names []string
	for _, fs := range []*pflag.FlagSet{cmd.Flags(), cmd.InheritedFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
	}
	c := words.Closest(typed, names)
	if c == "" {
		return ""
	}
	return fmt.Sprintf("did you mean --%s? (agentx %s --help lists the flags)", c, strings.TrimPrefix(cmd.CommandPath(), "agentx "))
}

// unknownCommand refuses a command line that names a group of commands
// (agentx, agentx clarify, agentx setup) and then a word that is none of
// them, before cobra parses a flag: `agentx setup claud --agent engineer`
// is told that claud is no command of setup and the one meant, not that
// setup has no --agent, and `agentx setup claud` is not shown setup's help
// with exit 0. A group that takes arguments of its own is left to them.
func unknownCommand(root *cobra.Command, args []string) error {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return nil // a shell asking for completions
	}
	c, rest, _ := root.Find(args) // the error is the root's own unknown command, worded here
	if c == nil || !c.HasSubCommands() {
		return nil
	}
	word := firstWord(c, rest)
	if word == "" || c.Runnable() && c.ValidateArgs([]string{word}) == nil {
		return nil
	}
	var names []string
	if !c.HasParent() {
		// cobra adds these two to the root when it runs
		names = append(names, "help")
		if !c.CompletionOptions.DisableDefaultCmd {
			names = append(names, "completion")
		}
		if slices.Contains(names, word) {
			return nil
		}
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	path := c.CommandPath()
	hint := path + " --help lists its commands"
	if dym := words.DidYouMean(word, names); dym != "" {
		hint = dym + " (" + hint + ")"
	}
	return &usageError{Err: fmt.Errorf("unknown command %q for %q", word, path), hint: hint}
}

// firstWord is the first argument of rest that is neither a flag of c nor
// a flag's value, as cobra finds a command's name among its flags: a flag
// c does not know is taken to have a value, unless written --flag=value.
// "" when there is none before "--".
func firstWord(c *cobra.Command, rest []string) string {
	// the flags cobra adds as it runs, and the parents' persistent ones
	c.InitDefaultHelpFlag()
	c.Root().InitDefaultVersionFlag()
	c.InheritedFlags()
	fs := c.Flags()
	for i := 0; i < len(rest); i++ {
		s := rest[i]
		var f *pflag.Flag
		switch {
		case s == "--":
			return ""
		case strings.HasPrefix(s, "--"):
			if strings.Contains(s, "=") {
				continue
			}
			f = fs.Lookup(s[2:])
		case strings.HasPrefix(s, "-") && len(s) == 2:
			f = fs.ShorthandLookup(s[1:])
		case strings.HasPrefix(s, "-") && len(s) > 2:
			continue // -abc, -n5: shorthands with nothing to take
		default:
			return s
		}
		if f == nil || f.NoOptDefVal == "" {
			i++ // the flag's value
		}
	}
	return ""
}
