package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/setup"
	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

func newSetupCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Wire a coding agent to this workspace in one command: its MCP server, hooks and instructions",
	}
	cmd.AddCommand(newSetupClaudeCmd(a), newSetupCodexCmd(a))
	return cmd
}

// setupView is what setup wrote, or would write.
type setupView struct {
	Client string      `json:"client"` // claude or codex
	Agent  string      `json:"agent"`
	Issue  int         `json:"issue,omitempty"`
	Root   string      `json:"root"`
	DryRun bool        `json:"dry_run"`
	Files  []setupFile `json:"files"`
	Hooks  []setupHook `json:"hooks,omitempty"`
	// MaxQuestions is the cap on the agent's questions per session on an
	// issue (max_questions; 0: none).
	MaxQuestions int `json:"max_questions"`
	// Wake says how an answer that lands after the agent's turn ended
	// reaches it; Resume is the state of its resume command: none, trusted
	// or untrusted.
	Wake         string `json:"wake"`
	Resume       string `json:"resume"`
	Instructions string `json:"instructions"`
}

type setupFile struct {
	Path   string `json:"path"`   // relative to the root
	Status string `json:"status"` // created, changed or unchanged
}

type setupHook struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

// setupFlags are the flags both clients take.
type setupFlags struct {
	agent    string
	issue    int
	dryRun   bool
	newAgent bool
}

func (f *setupFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.agent, "agent", "", "the agent the client plays, as the workflow names it (default $AGENTX_AGENT)")
	cmd.Flags().IntVar(&f.issue, "issue", 0, "the issue the agent works on: AGENTX_ISSUE in the server's environment (default: none, every issue)")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "print what would change, as a diff per file, and write nothing")
	cmd.Flags().BoolVar(&f.newAgent, "new-agent", false, "wire an agent that no workflow nor config.toml names yet (without it such a name is refused as a typo, nothing written)")
}

// start checks the flags and opens the workspace: the agent, its
// issue, the workspace and its default workflow.
func (f *setupFlags) start(a *App) (string, *workspace.Workspace, *workflow.Workflow, error) {
	who, err := required("agent", a.agentDefault(f.agent))
	if err != nil {
		return "", nil, nil, err
	}
	if err := ledger.ValidateAgent("agent", who); err != nil {
		return "", nil, nil, &usageError{Err: err}
	}
	if who == ledger.Human {
		return "", nil, nil, &usageError{Err: errors.New("--agent human: a person answers from a shell of their own; setup wires an agent")}
	}
	if err := ledger.ValidateIssue(f.issue); err != nil {
		return "", nil, nil, &usageError{Err: err}
	}
	ws, err := a.open()
	if err != nil {
		return "", nil, nil, err
	}
	if typo := router.KnownAgent(ws.Rules, "agent", who, false); typo != nil && !f.newAgent {
		return "", nil, nil, &usageError{Err: typo, hint: typo.Advice + " (to wire an agent no workflow names yet: --new-agent)"}
	}
	w, err := ws.Rules.Workflow("")
	if err != nil {
		return "", nil, nil, err
	}
	if !slices.ContainsFunc(w.Steps, func(s workflow.Step) bool { return s.Agent == who }) {
		a.warnf("%s has no step in workflow %s, the default: the questions it asks are refused until a step names it", who, w.Name)
	}
	return who, ws, w, nil
}

// setupFinish plans the merges, writes them unless it is a dry run, and
// prints what changed and the instructions.
func setupFinish(a *App, ws *workspace.Workspace, v setupView, merges []setup.Merge) error {
	files, err := setup.Plan(ws.Root, merges)
	if err != nil {
		return err
	}
	if !v.DryRun {
		if err := setup.Apply(ws.Root, files); err != nil {
			return err
		}
	}
	v.Root, v.Instructions, v.Files = ws.Root, setup.Instructions, []setupFile{}
	v.MaxQuestions = ws.Rules.Config.MaxQuestions
	v.Resume, v.Wake = setupWake(a.trustGate(ws.Root, ws.Rules), ws, v.Client, v.Agent)
	for _, f := range files {
		v.Files = append(v.Files, setupFile{Path: f.Rel, Status: f.Status()})
	}
	return a.emit(v, func() { v.text(a.stdout, files) })
}

// text prints, for a person, what setup changed (or, in a dry run, the
// diff of files) and the instructions.
func (v setupView) text(w io.Writer, files []*setup.File) {
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	name, note := clientAbout(v.Client)
	if v.DryRun {
		for _, f := range files {
			if d := f.Diff(); d != "" {
				printf("%s", safetext.Block(d))
			} else {
				printf("%-10s %s\n", setup.Unchanged, f.Rel)
			}
		}
		printf("Dry run: nothing written.\n")
	} else {
		printf("Wired %s for %s in %s:\n", name, v.Agent, safetext.Line(v.Root))
		for _, f := range v.Files {
			printf("  %-10s %s\n", f.Status, f.Path)
		}
	}
	if len(v.Hooks) > 0 {
		printf("Hooks: %s.\n", hookSummary(v.Hooks))
	}
	if v.MaxQuestions > 0 {
		printf("Questions: at most %d per session on an issue (max_questions); a new session, or the next hook start, may ask again.\n", v.MaxQuestions)
	} else {
		printf("Questions: no cap (max_questions = 0).\n")
	}
	printf("Wake: %s\n", v.Wake)
	if !v.DryRun {
		printf("%s\n", note)
	}
	printf("\nAdd this to CLAUDE.md or AGENTS.md (or the agent's system prompt):\n\n%s", v.Instructions)
}

// setupWake says how an answer that lands after agent's turn ended
// reaches it in client, and the state of its resume command: none,
// trusted or untrusted.
func setupWake(gate *trust.Gate, ws *workspace.Workspace, client, agent string) (resume, how string) {
	resume = "none"
	if ag := ws.Rules.Config.Agents[agent]; len(ag.Resume) > 0 || len(ag.Queue) > 0 {
		resume = "trusted"
		if slices.Contains(untrustedResumes(gate, ws.Rules), agent) {
			resume = "untrusted"
		}
	}
	open, closed := "in place (agentx hook rewake) while the session is open", "once it is closed, with its next start (inbox hook)"
	if client == "codex" {
		open, closed = "with the session's next turn (its hooks) while it runs", "once it has exited, with its next start (inbox hook)"
	}
	switch resume {
	case "none":
		return resume, fmt.Sprintf("%s; %s: no [agents.%s] resume is configured.", open, closed, agent)
	case "trusted":
		return resume, fmt.Sprintf("%s; once it is closed, by [agents.%s] resume (trusted).", open, agent)
	}
	return resume, fmt.Sprintf("%s; %s. %s.", open, closed, untrustedResumeNote(agent))
}

// clientAbout is a client setup wires, as its maker names it, and what to
// know about its reading of the files.
func clientAbout(client string) (name, note string) {
	if client == "codex" {
		return "Codex", "Codex reads .codex/config.toml and .codex/hooks.json only in a project it trusts, and runs the hooks once you have reviewed and trusted them in Codex."
	}
	return "Claude Code", "Claude Code asks to approve the project's MCP server (agentx) the first time it starts here."
}

// hookSummary says in a line which hooks run what.
func hookSummary(hooks []setupHook) string {
	var parts []string
	for _, h := range hooks {
		what := strings.Join(strings.Fields(h.Command)[:2], " ")
		if what == "agentx hook" || what == "agentx scope" {
			what = strings.Join(strings.Fields(h.Command)[:3], " ")
		}
		s := what + " on " + h.Event
		if h.Timeout > 0 {
			s += fmt.Sprintf(" (timeout %d s)", h.Timeout)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// setupClaudeOptions are `agentx setup claude`'s flags.
type setupClaudeOptions struct {
	setupFlags
	local bool
	hold  time.Duration
}

func newSetupClaudeCmd(a *App) *cobra.Command {
	o := &setupClaudeOptions{}
	cmd := &cobra.Command{
		Use:   "claude --agent NAME [--issue N] [--local] [--hold 5m] [--dry-run] [--new-agent]",
		Short: "Wire Claude Code: agentx's MCP server in .mcp.json, the inbox, stop and scope hooks in .claude/settings.json",
		Long: `Wire Claude Code, in the workspace root (the directory holding .agentx/), for
agent NAME:

  .mcp.json              the MCP server agentx: agentx mcp, with AGENTX_AGENT
                         (and AGENTX_ISSUE with --issue) in its environment
  .claude/settings.json  (.claude/settings.local.json with --local) the hooks:
                         agentx inbox on UserPromptSubmit and SessionStart;
                         agentx hook stop on Stop, with a timeout a minute
                         above the longer of --hold and the step's checks;
                         agentx scope check on PreToolUse (Write, Edit,
                         MultiEdit, NotebookEdit) when the agent's step in the
                         default workflow has a write scope

NAME is an agent the workspace names (a workflow step or its can_clarify,
or priority or [agents] in config.toml): another name is refused as a typo,
with the agents there are and the one meant (exit 2), and nothing is
written. --new-agent wires an agent that nothing names yet.

Everything else in the files stays as it was, in its order. agentx's own
entries (the server named agentx; hooks whose command is the same agentx
subcommand) are updated where they are, never added twice: running it again
changes nothing, and a hook timeout you raised is kept. --dry-run prints
the change as a diff and writes nothing. A file that is not valid JSON is
never overwritten (exit 7, naming the file, line and column), and no file
is written through a symbolic link. Then it prints the instructions to put
in CLAUDE.md. See docs/agents.md.`,
		Example: `  agentx setup claude --agent engineer
  agentx setup claude --agent engineer --issue 42 --local --dry-run`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a, cmd)
		}),
	}
	o.register(cmd)
	cmd.Flags().BoolVar(&o.local, "local", false, "write the hooks to .claude/settings.local.json (yours alone) instead of .claude/settings.json (shared)")
	cmd.Flags().DurationVar(&o.hold, "hold", defaultHold, "hook stop's --hold: how long the Stop hook holds a turn for the answer to an open blocking question")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *setupClaudeOptions) run(a *App, cmd *cobra.Command) error {
	if o.hold < 0 {
		return &usageError{Err: fmt.Errorf("--hold %s: must not be negative", o.hold)}
	}
	who, ws, w, err := o.start(a)
	if err != nil {
		return err
	}
	scoped, err := w.Scoped(who, "")
	if err != nil {
		return err
	}
	gated, err := w.Gated(who, "")
	if err != nil {
		return err
	}
	var checks time.Duration
	if gated != nil {
		for _, c := range gated.Evaluate {
			checks += c.Timeout.Duration
		}
	}
	c := setup.Claude{
		Server:      setup.Server{Agent: who, Issue: o.issue},
		Hold:        o.hold,
		HoldSet:     cmd.Flags().Changed("hold"),
		StopTimeout: setup.StopTimeout(o.hold, checks),
		Scope:       scoped != nil,
	}
	settings := ".claude/settings.json"
	if o.local {
		settings = ".claude/settings.local.json"
	}
	v := setupView{Client: "claude", Agent: who, Issue: o.issue, DryRun: o.dryRun, Hooks: setupHooks(c.Hooks())}
	return setupFinish(a, ws, v, []setup.Merge{
		{Rel: ".mcp.json", Merge: func(data []byte) ([]byte, error) { return setup.MergeMCPJSON(data, c.Server) }},
		{Rel: settings, Merge: func(data []byte) ([]byte, error) { return setup.MergeClaudeSettings(data, c) }},
	})
}

// setupCodexOptions are `agentx setup codex`'s flags.
type setupCodexOptions struct {
	setupFlags
	hold time.Duration
}

func newSetupCodexCmd(a *App) *cobra.Command {
	o := &setupCodexOptions{}
	cmd := &cobra.Command{
		Use:   "codex --agent NAME [--issue N] [--hold 5m] [--dry-run] [--new-agent]",
		Short: "Wire Codex: agentx's MCP server in .codex/config.toml, the inbox and stop hooks in .codex/hooks.json",
		Long: `Wire Codex, in the workspace root (the directory holding .agentx/), for agent
NAME:

  .codex/config.toml  the table [mcp_servers.agentx]: agentx mcp, with
                      AGENTX_AGENT (and AGENTX_ISSUE with --issue) in its
                      environment
  .codex/hooks.json   the hooks: agentx inbox on SessionStart and
                      UserPromptSubmit; agentx hook stop on Stop, with a
                      timeout a minute above --hold

NAME is an agent the workspace names (a workflow step or its can_clarify,
or priority or [agents] in config.toml): another name is refused as a typo,
with the agents there are and the one meant (exit 2), and nothing is
written. --new-agent wires an agent that nothing names yet.

Codex reads both only in a project it trusts, and runs a project's hooks
only once a person has reviewed and trusted them in Codex.

The TOML file's text is edited, not rewritten: an existing [mcp_servers.agentx]
table's lines are replaced (keeping its other keys, such as
tool_timeout_sec), or the table is added at the end; every other line,
comments included, stays. In hooks.json, agentx's own entries are updated
where they are and everything else stays. Running it again changes nothing.
A file that does not parse is never overwritten (exit 7, naming the file and
line). Then it prints the instructions to put in AGENTS.md. See
docs/agents.md.`,
		Example: `  agentx setup codex --agent engineer
  agentx setup codex --agent engineer --issue 42 --dry-run`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a, cmd)
		}),
	}
	o.register(cmd)
	cmd.Flags().DurationVar(&o.hold, "hold", defaultHold, "hook stop's --hold: how long the Stop hook holds a turn for the answer to an open blocking question")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *setupCodexOptions) run(a *App, cmd *cobra.Command) error {
	if o.hold < 0 {
		return &usageError{Err: fmt.Errorf("--hold %s: must not be negative", o.hold)}
	}
	who, ws, _, err := o.start(a)
	if err != nil {
		return err
	}
	c := setup.Codex{
		Server:      setup.Server{Agent: who, Issue: o.issue},
		Hold:        o.hold,
		HoldSet:     cmd.Flags().Changed("hold"),
		StopTimeout: setup.StopTimeout(o.hold, 0),
	}
	v := setupView{Client: "codex", Agent: who, Issue: o.issue, DryRun: o.dryRun, Hooks: setupHooks(c.Hooks())}
	return setupFinish(a, ws, v, []setup.Merge{
		{Rel: ".codex/config.toml", Merge: func(data []byte) ([]byte, error) { return setup.MergeCodexConfig(data, c.Server) }},
		{Rel: ".codex/hooks.json", Merge: func(data []byte) ([]byte, error) { return setup.MergeCodexHooks(data, c) }},
	})
}

// setupHooks are the hooks a setup writes, as it reports them.
func setupHooks(hooks []setup.Hook) []setupHook {
	var out []setupHook
	for _, h := range hooks {
		if h.Command != "" {
			out = append(out, setupHook{Event: h.Event, Matcher: h.Matcher, Command: h.Command, Timeout: h.Timeout})
		}
	}
	return out
}
