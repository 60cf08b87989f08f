package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

const formatClaudeHook = "claude-hook"

func newInboxCmd(a *App) *cobra.Command {
	var (
		agent, format, hookEvent string
		issue                    issueFlag
		peek, all                bool
	)
	cmd := &cobra.Command{
		Use:   "inbox [--agent A] [--issue N] [--format text|claude-hook] [--peek] [--all]",
		Short: "What is new for an agent since it last looked: answers, questions for it, decisions",
		Long: `Print what is new for agent A since its last look: answers to its questions
(a late answer, one that came after it recorded an assumption, is marked LATE
with the assumption beside it), questions waiting for it to answer, and its
questions escalated to, or decided by, a human. What is printed is marked
delivered, so the next call shows only newer items; --peek shows without
marking. With --issue only that issue's items are shown (and marked); the
others wait for a later look.

Each item is delivered once, however the agent read it: what it took with
"clarify wait", saw with "clarify show" or resolved (or did the same through
the MCP tools) is not delivered again, and nothing closed comes with advice
to resolve it. An agent's first look delivers what concerns it now, not
the history: the closed clarifications it was party to are counted, with
the command that lists them.

Most important first: answers to its blocking questions, then escalations
of its questions, then questions waiting for it, newest first. The text
(and the hook output) keeps within 9,000 bytes, under Claude Code's limit
on what a hook may add; what does not fit is counted and waits for the next
look, or for --all, which shows everything. --json has no limit.

--format claude-hook prints the JSON a Claude Code hook returns to add the
items to the agent's next turn, or nothing when there is nothing new:
  {"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"..."}}
The event is the hook_event_name of the hook's JSON on stdin, which Claude
Code gives every hook; --hook-event names it when there is none (run by hand).
In that format a workspace that is missing prints nothing, so the hook can be
configured for every project. See docs/agents.md.`,
		Example: `  agentx inbox --agent engineer
  agentx inbox --agent engineer --format claude-hook --hook-event SessionStart`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			hook := format == formatClaudeHook
			if hook {
				// Claude Code names the event in the hook's JSON on stdin:
				// that is the event, whatever --hook-event says.
				p, err := a.readStopPayload()
				if err != nil {
					return &codedError{Code: ExitFailure, Msg: err.Error(), Todo: hintOf(err)}
				}
				if p.HookEventName != "" {
					hookEvent = p.HookEventName
				}
			}
			err := runInbox(ctx, a, inboxRun{agent: agent, issue: &issue, peek: peek, all: all, hook: hook, hookEvent: hookEvent, format: format})
			var noWS *workspace.NotFoundError
			if hook && errors.As(err, &noWS) {
				return nil // no workspace here: nothing to deliver
			}
			if hook && err != nil && errorExit(err) == ExitUsage {
				// Claude Code reads exit 2 from a hook as "block the prompt":
				// a misconfigured hook must not swallow the user's prompts.
				return &codedError{Code: ExitFailure, Msg: err.Error(), Todo: hintOf(err)}
			}
			return err
		}),
	}
	cmd.Flags().StringVar(&agent, "agent", "", "whose inbox (default $AGENTX_AGENT)")
	issue.register(cmd, "only this issue's items")
	cmd.Flags().StringVar(&format, "format", formatText, "text or claude-hook")
	cmd.Flags().StringVar(&hookEvent, "hook-event", inbox.HookUserPromptSubmit, "with --format claude-hook, when the hook's JSON on stdin names no hook_event_name: "+strings.Join(inbox.HookEvents, ", "))
	cmd.Flags().BoolVar(&peek, "peek", false, "show without marking the items delivered")
	cmd.Flags().BoolVar(&all, "all", false, "show every new item, with no limit on the output's size")
	return cmd
}

type inboxRun struct {
	agent     string
	issue     *issueFlag
	peek      bool
	all       bool // no limit on the size
	hook      bool
	hookEvent string
	format    string
}

func runInbox(ctx context.Context, a *App, r inboxRun) error {
	if r.format != formatText && !r.hook {
		return &usageError{Err: fmt.Errorf("--format %q: use text or %s (or --json)", r.format, formatClaudeHook)}
	}
	if r.hook && a.json {
		return &usageError{Err: fmt.Errorf("--format %s prints its own JSON: drop --json", formatClaudeHook)}
	}
	if r.hook && !inbox.ValidHookEvent(r.hookEvent) {
		return &usageError{Err: fmt.Errorf("hook event %q (--hook-event, or hook_event_name on stdin): use one of %s", safetext.Line(r.hookEvent), strings.Join(inbox.HookEvents, ", "))}
	}
	// Peeking changes nothing: any inbox may be read. Taking the items
	// marks them delivered: only the agent itself may.
	agent, err := required("agent", a.agentDefault(r.agent))
	if !r.peek {
		agent, err = a.requireAgent("agent", r.agent)
	}
	if err != nil {
		return err
	}
	n, err := r.issue.get(a)
	if err != nil {
		return err
	}
	// the hub, not only the workspace: what the refresh pulls for other
	// agents wakes them at the end of the command (lifecycle)
	ws, _, err := a.openHub(false)
	if err != nil {
		return err
	}
	a.remoteSide(ctx, ws) // in remote mode, what other hosts did (at most once per interval)
	opts := inbox.Options{Agent: agent, Issue: n, Peek: r.peek, Source: &brief.Source{Root: ws.Root, Rules: ws.Rules}}
	switch {
	case r.all || a.json:
	case r.hook:
		opts.Limit = inbox.HookTextLimit(r.hookEvent)
	default:
		opts.Limit = inbox.HookLimit
	}
	revisions, delivered, err := revisionItems(ctx, a, ws.Store, agent, n)
	if err != nil {
		return err
	}
	if opts.Limit > 0 && len(revisions) > 0 {
		opts.Limit = max(opts.Limit/2, opts.Limit-len(inbox.Text(inbox.Result{Agent: agent, Items: revisions})))
	}
	res, err := inbox.Check(ctx, ws.Store, opts)
	if err != nil {
		return err
	}
	if len(revisions) > 0 { // the gate's requests first: the agent's work waits on them
		res.Items = append(revisions, res.Items...)
		if !r.peek {
			delivered()
			res.Marked = true
		}
	}
	if r.hook {
		out, err := inbox.ClaudeHook(r.hookEvent, res)
		if err != nil {
			return err
		}
		_, err = a.stdout.Write(out)
		return err
	}
	return a.emit(res, func() {
		if len(res.Items) == 0 {
			if a.isTTY {
				a.printf("Nothing new for %s.\n", agent)
			}
			return
		}
		a.printf("%s", inbox.Text(res))
	})
}

// markSeen records that reader (an agent; "" for nobody) has read recs as
// they stand, by the way via (an inbox.Via constant), so that its inbox
// does not deliver them again. A failure is a warning: the read itself
// went through.
func (a *App) markSeen(ctx context.Context, store *ledger.Store, reader, via string, recs ...router.Record) {
	for _, r := range recs {
		a.warnIf(inbox.MarkSeen(ctx, store, reader, r.Clarification, via))
	}
}

// markResolved is markSeen for the one who resolved rec.
func (a *App) markResolved(ctx context.Context, store *ledger.Store, rec router.Record) {
	a.warnIf(inbox.MarkResolved(ctx, store, rec.Clarification))
}

// warnIf prints err, if any, as a warning.
func (a *App) warnIf(err error) {
	if err != nil {
		fmt.Fprintf(a.stderr, "agentx: warning: %v\n", err)
	}
}
