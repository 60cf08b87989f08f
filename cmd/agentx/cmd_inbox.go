package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/inbox"
	"github.com/agentx-cli/agentx/internal/workspace"
)

const formatClaudeHook = "claude-hook"

func newInboxCmd(a *app) *cobra.Command {
	var (
		agent, format, hookEvent string
		issue                    issueFlag
		peek                     bool
	)
	cmd := &cobra.Command{
		Use:   "inbox [--agent A] [--issue N] [--format text|claude-hook] [--peek]",
		Short: "What is new for an agent since it last looked: answers, questions for it, decisions",
		Long: `Print what is new for agent A since its last look: answers to its questions
(a late answer, one that came after it recorded an assumption, is marked LATE
with the assumption beside it), questions waiting for it to answer, and its
questions escalated to, or decided by, a human. What is printed is marked
delivered, so the next call shows only newer items; --peek shows without
marking. With --issue only that issue's items are shown (and marked); the
others wait for a later look.

--format claude-hook prints the JSON a Claude Code hook returns to add the
items to the agent's next turn, or nothing when there is nothing new:
  {"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"..."}}
In that format a workspace that is missing prints nothing, so the hook can be
configured for every project. See docs/agents.md.`,
		Example: `  agentx inbox --agent engineer
  agentx inbox --agent engineer --format claude-hook --hook-event SessionStart`,
		Args: cobra.NoArgs,
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			hook := format == formatClaudeHook
			err := runInbox(ctx, a, inboxRun{agent: agent, issue: &issue, peek: peek, hook: hook, hookEvent: hookEvent, format: format})
			var noWS *workspace.NotFoundError
			if hook && errors.As(err, &noWS) {
				return nil // no workspace here: nothing to deliver
			}
			if hook && err != nil && errorExit(err) == exitUsage {
				// Claude Code reads exit 2 from a hook as "block the prompt":
				// a misconfigured hook must not swallow the user's prompts.
				return &codedError{code: exitFailure, msg: err.Error(), hint: hintOf(err)}
			}
			return err
		}),
	}
	cmd.Flags().StringVar(&agent, "agent", "", "whose inbox (default $AGENTX_AGENT)")
	issue.register(cmd, "only this issue's items")
	cmd.Flags().StringVar(&format, "format", formatText, "text or claude-hook")
	cmd.Flags().StringVar(&hookEvent, "hook-event", inbox.HookUserPromptSubmit, "with --format claude-hook: "+strings.Join(inbox.HookEvents, ", "))
	cmd.Flags().BoolVar(&peek, "peek", false, "show without marking the items delivered")
	return cmd
}

type inboxRun struct {
	agent     string
	issue     *issueFlag
	peek      bool
	hook      bool
	hookEvent string
	format    string
}

func runInbox(ctx context.Context, a *app, r inboxRun) error {
	if r.format != formatText && !r.hook {
		return &usageError{err: fmt.Errorf("--format %q: use text or %s (or --json)", r.format, formatClaudeHook)}
	}
	if r.hook && a.json {
		return &usageError{err: fmt.Errorf("--format %s prints its own JSON: drop --json", formatClaudeHook)}
	}
	if r.hook && !inbox.ValidHookEvent(r.hookEvent) {
		return &usageError{err: fmt.Errorf("--hook-event %q: use one of %s", r.hookEvent, strings.Join(inbox.HookEvents, ", "))}
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
	ws, err := a.open()
	if err != nil {
		return err
	}
	res, err := inbox.Check(ctx, ws.Store, inbox.Options{Agent: agent, Issue: n, Peek: r.peek})
	if err != nil {
		return err
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
