package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/mcpserver"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/router"
)

// envMCPMaxWait overrides --max-wait's default.
const envMCPMaxWait = "AGENTX_MCP_MAX_WAIT"

func newMCPCmd(a *App) *cobra.Command {
	var (
		maxWait time.Duration
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "mcp [--max-wait 45s]",
		Short: "Serve the clarification tools to an AI agent over MCP (stdio)",
		Long: `Run an MCP server on stdin/stdout for an AI coding agent's client (Claude Code,
Cursor, VS Code, Codex...). Tools: clarify_ask, ask_human, clarify_wait,
clarify_answer, clarify_followup, clarify_resolve, clarify_assume, clarify_show
and clarify_list; proposal_create, proposal_list and proposal_show (no tool
approves or rejects a proposal: only a person does).

The agent's identity is AGENTX_AGENT in the server's environment: every call
acts as it, and a call's "from" naming another agent, or human, is refused
(the server never acts as a person). The workspace is --root, AGENTX_ROOT or
the nearest .agentx above the working directory. No call waits longer than --max-wait
(default 45s, or AGENTX_MCP_MAX_WAIT), under the time clients allow a tool
call: asking returns at once and the answer comes later (clarify_wait, or
"agentx inbox" in a hook). In GitHub mode (a [github] table) each call reads
new comments before it and mirrors what it changed after it, and
clarify_wait reads comments while it waits; GitHub failing is a warning in
the log, never a failed call (docs/github.md). Only protocol goes to stdout;
logs go to stderr.
The server stops at the end of its input or on SIGINT/SIGTERM.

See docs/agents.md for client configuration.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("max-wait") {
				if v := a.getenv(envMCPMaxWait); v != "" {
					d, err := parseWait(v)
					if err != nil {
						return usage(fmt.Errorf("%s=%q: %w", envMCPMaxWait, v, err))
					}
					maxWait = d
				}
			}
			if maxWait <= 0 {
				return usage(fmt.Errorf("--max-wait %s: must be positive", maxWait))
			}
			issue, err := (&issueFlag{}).get(a)
			if err != nil {
				return err
			}
			ws, h, err := a.hub()
			if err != nil {
				return err
			}
			pass := a.sidePass()
			pass.goLive(ws, h) // a long-lived process: trust and rules are looked at again before each call
			a.recordEnvSession(ctx, h.Store, a.getenv("AGENTX_AGENT"), issue)
			level := slog.LevelWarn
			if verbose {
				level = slog.LevelInfo
			}
			stdin, stdout, stderr := a.stdin, a.stdout, a.stderr
			log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
			started := h.Store.Now()
			opts := mcpserver.Options{
				Session:  &started, // the client's session began with this server
				Agent:    a.getenv("AGENTX_AGENT"),
				Issue:    issue,
				MaxWait:  maxWait,
				Classify: classify, // a tool error carries the CLI's code name, exit code and hint
				Version:  version(),
				Logger:   log,
				Side:     mcpSide(ctx, pass, h, log, !a.monitorOff()),
			}
			transport := &mcpserver.StdioTransport{In: stdin, Out: stdout}
			done := make(chan error, 1)
			go func() { done <- mcpserver.Run(ctx, h, opts, transport) }()
			select {
			case err := <-done:
				if err != nil && ctx.Err() == nil {
					return fmt.Errorf("mcp server: %w", err)
				}
			case <-ctx.Done():
				// A signal is how clients stop a server: a clean stop. Calls in
				// flight are cancelled and end at once; a read blocked on stdin
				// may never return, so it is not waited for past a moment.
				select {
				case <-done:
				case <-time.After(2 * time.Second):
				}
			}
			return nil
		}),
	}
	cmd.Flags().DurationVar(&maxWait, "max-wait", mcpserver.DefaultMaxWait, "longest any tool call waits for an answer (also "+envMCPMaxWait+")")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "log each question and tool error to stderr")
	return cmd
}

// parseWait reads a duration ("45s", "2m") or a number of seconds ("45").
func parseWait(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("not a duration (example: 45s)")
	}
	return d, nil
}

// mcpSide is the side pass around the MCP server's tool calls. Each call
// first reads the rules again when their files changed, brings the local
// copies up to the remote and reads new comments and replies (each at most
// once per its interval); after it, agent-status.json is derived when the
// call changed something (the server lives as long as the agent's session:
// not at its exit), what changed is mirrored, and the agents are woken
// when one has a resume command. clarify_wait watches the clarification's
// ref and reads the channels while it waits. A channel's failure is a
// warning in the server's log (stderr), at most one per call and channel;
// with AGENTX_NO_MONITOR (channelsOn false) the channels are left alone, and
// one that cannot be opened (no token) is said once, here.
func mcpSide(ctx context.Context, p *sidePass, h *router.Hub, log *slog.Logger, channelsOn bool) func() mcpserver.Side {
	p.warnAs = func(name string) func(error) {
		return func(err error) { log.Warn(name, "error", safetext.Line(err.Error())) }
	}
	p.channelsOff = !channelsOn
	p.openChannels(ctx, h)
	shared := h.Store.Replicator() != nil
	return func() mcpserver.Side {
		t := p.turn() // the rules as they are now, for this call
		t.steps = sideSteps{remote: shared, read: channelsOn, status: true, push: channelsOn, wake: resumes(h)}
		return t
	}
}
