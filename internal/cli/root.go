package cli

import (
	"github.com/spf13/cobra"
)

func newRootCmd(a *App) *cobra.Command {
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err: err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.root, "root", "", "where to find the workspace: the nearest directory at or above it holding .agentx/ (default: $AGENTX_ROOT, else the working directory)")
	pf.BoolVar(&a.json, "json", false, "print JSON: {\"schema_version\":1,\"data\":...} on stdout, errors as JSON on stderr")
	pf.BoolVar(&a.noColor, "no-color", false, "never colour the output (also NO_COLOR=1 or CLICOLOR=0)")
	pf.BoolVar(&a.offline, "offline", false, "with a [remote]: read the local copy and keep changes in the outbox, never reaching the remote")

	root.AddCommand(
		newInitCmd(a),
		newWorkflowCmd(a),
		newVersionCmd(a),
		newClarifyCmd(a),
		newStateCmd(a),
		newReadyCmd(a),
		newEventsCmd(a),
		newDemoCmd(a), newDemoResponderCmd(a),
		newInboxCmd(a),
		newHookCmd(a), newMonitorCmd(a),
		newEvalCmd(a), newScopeCmd(a), newProposalsCmd(a),
		newRemoteCmd(a), newSyncCmd(a),
		&cobra.Command{
			Use:   "exit-codes",
			Short: "The exit codes agentx returns, and the JSON error codes",
			Long:  exitCodesHelp(),
		},
	)
	if a.extra != nil {
		a.ext = a.extra(a)
		root.AddCommand(a.ext.Commands...)
	} else {
		root.AddCommand(a.fullStubs()...)
	}
	return root
}
