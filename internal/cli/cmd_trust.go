package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// trustGate decides whether the commands the workspace at root names may
// run in this process: worked out when the first would run, told once per
// command that was not.
func (a *App) trustGate(root string, rules *workflow.Set) *trust.Gate {
	return &trust.Gate{Root: root, Rules: rules, Getenv: a.getenv, Warn: func(line string) { a.warnf("%s", line) }}
}

// untrustedResumes names, sorted, the agents whose [agents.NAME] resume
// (or queue) command is configured but not trusted on this machine: nothing wakes
// them that way until a person runs agentx trust.
func untrustedResumes(g *trust.Gate, rules *workflow.Set) []string {
	if g == nil || rules == nil || g.Status().Trusted() {
		return nil
	}
	var names []string
	for name, ag := range rules.Config.Agents {
		if len(ag.Resume) > 0 || len(ag.Queue) > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// untrustedResumeNote is what a person is told about agent's resume
// command when it is not trusted.
func untrustedResumeNote(agent string) string {
	return fmt.Sprintf("[agents.%s] resume is not trusted on this machine: %s is never woken by it (review the commands and run agentx trust)", agent, agent)
}

// checksTrusted reports whether the checks of step s of w may run (the
// workspace's commands are trusted on this machine); each one that may
// not is told once.
func checksTrusted(h *router.Hub, w *workflow.Workflow, s *workflow.Step) bool {
	ok := true
	for _, c := range s.Evaluate {
		if !h.Trust.Allow(trust.CheckCommand(w.Name, s.ID, c.Name, c.Command)) {
			ok = false
		}
	}
	return ok
}

// trustOptions are `agentx trust`'s flags.
type trustOptions struct {
	yes, revoke, status bool
}

func newTrustCmd(a *App) *cobra.Command {
	o := &trustOptions{}
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Review the commands this workspace runs, and trust them on this machine",
		Long: `agentx runs commands named by the workspace's files: [agents.NAME] command
(responders) and resume, [notify] command, and [[steps.evaluate]] command in
the workflows. Those files come with the repository, so agentx runs none of
them until a person on this machine has trusted that set of commands. Until
then each one is skipped with a line saying so, and a question to an agent
with a responder waits as if it had none. A [github] or [slack] api_url other
than the public API is part of the set too: until it is trusted, that
channel sends it no token.

agentx trust lists the commands and, once you confirm at the terminal, records
their hash for this workspace (by its absolute path) in your own configuration
directory, outside the repository: $XDG_CONFIG_HOME/agentx/trusted (~/.config
on Linux, ~/Library/Application Support on macOS, %AppData% on Windows). A
changed command set needs trust again. --yes records without asking, for a
script or a CI job that chose to run the commands of the tree it checked out.
AGENTX_TRUST=HASH[,HASH...] trusts the sets with those hashes without any
record: a CI job pins the commands it reviewed, and a pull request that
changes them runs none. --status shows the state and the hash; --revoke
forgets the trust. An agent (AGENTX_AGENT set) never trusts.`,
		Example: `  agentx trust --status
  agentx trust
  agentx trust --revoke`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().BoolVar(&o.yes, "yes", false, "trust without asking at the terminal (scripts, CI: you run whatever the checked-out files name)")
	cmd.Flags().BoolVar(&o.revoke, "revoke", false, "forget the trust of this workspace's commands on this machine")
	cmd.Flags().BoolVar(&o.status, "status", false, "show whether this workspace's commands are trusted here, their hash and what they are")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *trustOptions) run(ctx context.Context, a *App) error {
	if o.revoke && o.status {
		return &usageError{Err: fmt.Errorf("--revoke and --status: give one")}
	}
	ws, err := a.open()
	if err != nil {
		return err
	}
	root, err := trust.Canonical(ws.Root)
	if err != nil {
		return err
	}
	store, err := trust.DefaultStore(a.getenv)
	if err != nil && !o.status {
		return err
	}
	st := trust.Examine(store, root, ws.Rules, a.getenv)
	switch {
	case o.status:
		return a.emit(st, func() { printTrust(a.stdout, st) })
	case o.revoke:
		return o.revokeTrust(a, ws.Rules, store, root)
	}
	return o.trust(ctx, a, ws.Rules, store, root, st)
}

// trust records the trust of the workspace at root's commands, st, once a
// person confirmed it (or --yes).
func (o *trustOptions) trust(ctx context.Context, a *App, rules *workflow.Set, store trust.Store, root string, st trust.Status) error {
	if agent := a.getenv(router.EnvAgent); agent != "" {
		return agentMayNotTrust(agent)
	}
	if st.State == trust.StateInvalid {
		return fmt.Errorf("trust: %s", st.Err)
	}
	if st.State == trust.StateNone || (st.State == trust.StateTrusted && !st.Pinned) {
		return a.emit(st, func() { printTrust(a.stdout, st) })
	}
	if !o.yes {
		if err := o.confirm(ctx, a, st, root); err != nil {
			return err
		}
	}
	if _, err := store.Trust(root, st.Commands, a.now()); err != nil {
		return err
	}
	st = trust.Examine(store, root, rules, a.getenv)
	return a.emit(st, func() {
		a.printf("Trusted %s of %s on this machine (%s).\n", words.Count(len(st.Commands), "command", "commands"), safetext.Line(root), st.Hash)
	})
}

// revokeTrust forgets the trust of the workspace at root (--revoke).
func (o *trustOptions) revokeTrust(a *App, rules *workflow.Set, store trust.Store, root string) error {
	if agent := a.getenv(router.EnvAgent); agent != "" {
		return agentMayNotTrust(agent)
	}
	had, err := store.Revoke(root)
	if err != nil {
		return err
	}
	st := trust.Examine(store, root, rules, a.getenv)
	return a.emit(st, func() {
		if had {
			a.printf("Revoked: agentx runs none of this workspace's commands on this machine until they are trusted again.\n")
		} else {
			a.printf("Nothing to revoke: this workspace's commands were not trusted on this machine.\n")
		}
	})
}

// confirm shows the commands and asks the person at the terminal whether
// to trust them; no terminal, or no, refuses.
func (o *trustOptions) confirm(ctx context.Context, a *App, st trust.Status, root string) error {
	if !a.json {
		printTrust(a.stdout, st)
	}
	ok, err := confirmAtTerminal(ctx, trustQuestion(len(st.Commands), root))
	switch {
	case errors.Is(err, errNoTerminal):
		return &codedError{Code: ExitIdentity, Msg: "trust: no terminal to confirm at: a person trusts a workspace's commands at a terminal of their own",
			Todo: "run agentx trust at a terminal; a script or CI job that means to run the checked-out tree's commands passes --yes, or pins their hash with AGENTX_TRUST (see agentx trust --status)"}
	case err != nil:
		return err
	case !ok:
		return &codedError{Code: ExitIdentity, Msg: "trust: not confirmed: nothing recorded", Todo: "run agentx trust again and answer y to trust these commands"}
	}
	return nil
}

// agentMayNotTrust refuses trust to a process launched as an agent.
func agentMayNotTrust(agent string) error {
	return &codedError{Code: ExitIdentity,
		Msg:  fmt.Sprintf("trust: this process is agent %s (%s): an agent never decides which commands this machine runs", agent, router.EnvAgent),
		Todo: "a person decides that; " + askPerson}
}

// printTrust prints a trust status for a person.
func printTrust(w io.Writer, st trust.Status) {
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	switch st.State {
	case trust.StateNone:
		printf("This workspace names no command to run: nothing to trust.\n")
		return
	case trust.StateInvalid:
		printf("A workflow file does not parse, so what would run is unknown: %s\n", safetext.Line(st.Err))
		return
	case trust.StateTrusted:
		how := "trusted on this machine"
		if st.Pinned {
			how = "trusted by AGENTX_TRUST"
		}
		printf("%s: %s\n", how, st.Hash)
	case trust.StateChanged:
		printf("changed since trusted: agentx runs none of them until a person trusts them again (agentx trust): %s\n", st.Hash)
	default:
		printf("not trusted on this machine: agentx runs none of them until a person trusts them (agentx trust): %s\n", st.Hash)
	}
	for _, c := range st.Commands {
		mark := " "
		for _, d := range st.Changed {
			if d.Kind == c.Kind && d.Name == c.Name {
				mark = "*"
			}
		}
		printf("%s %s: %s\n", mark, safetext.Line(c.What()), safetext.Line(c.Line()))
	}
	if len(st.Changed) > 0 {
		printf("(* new or changed since trusted)\n")
	}
}

// trustQuestion is what agentx trust asks at the terminal before it trusts
// the workspace's n commands.
func trustQuestion(n int, root string) string {
	return fmt.Sprintf("agentx: run %s %s of %s on this machine?", words.Plural(n, "this", "these"), words.Count(n, "command", "commands"), safetext.Line(root))
}
