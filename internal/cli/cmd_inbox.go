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

// inboxOptions are `agentx inbox`'s flags.
type inboxOptions struct {
	agent, format, hookEvent string
	issue                    issueFlag
	peek, all                bool // all: no limit on the size
}

func newInboxCmd(a *App) *cobra.Command {
	o := &inboxOptions{}
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
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().StringVar(&o.agent, "agent", "", "whose inbox (default $AGENTX_AGENT)")
	o.issue.register(cmd, "only this issue's items")
	cmd.Flags().StringVar(&o.format, "format", formatText, "text or claude-hook")
	cmd.Flags().StringVar(&o.hookEvent, "hook-event", inbox.HookUserPromptSubmit, "with --format claude-hook, when the hook's JSON on stdin names no hook_event_name: "+strings.Join(inbox.HookEvents, ", "))
	cmd.Flags().BoolVar(&o.peek, "peek", false, "show without marking the items delivered")
	cmd.Flags().BoolVar(&o.all, "all", false, "show every new item, with no limit on the output's size")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *inboxOptions) run(ctx context.Context, a *App) error {
	if o.hook() {
		// Claude Code names the event in the hook's JSON on stdin:
		// that is the event, whatever --hook-event says.
		p, err := readHookPayload(a.stdin)
		if err != nil {
			return &codedError{Code: ExitFailure, Msg: err.Error(), Todo: hintOf(err)}
		}
		if p.HookEventName != "" {
			o.hookEvent = p.HookEventName
		}
	}
	err := o.deliver(ctx, a)
	var noWS *workspace.NotFoundError
	if o.hook() && errors.As(err, &noWS) {
		return nil // no workspace here: nothing to deliver
	}
	if o.hook() && err != nil && errorExit(err) == ExitUsage {
		// Claude Code reads exit 2 from a hook as "block the prompt":
		// a misconfigured hook must not swallow the user's prompts.
		return &codedError{Code: ExitFailure, Msg: err.Error(), Todo: hintOf(err)}
	}
	return err
}

// hook reports whether the output is a Claude Code hook's JSON.
func (o *inboxOptions) hook() bool { return o.format == formatClaudeHook }

// deliver prints what is new for the agent, marking it delivered unless
// --peek.
func (o *inboxOptions) deliver(ctx context.Context, a *App) error {
	if err := o.check(a); err != nil {
		return err
	}
	agent, err := o.reader(a)
	if err != nil {
		return err
	}
	n, err := o.issue.get(a)
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
	res, err := o.items(ctx, a, ws, agent, n)
	if err != nil {
		return err
	}
	return o.print(a, agent, res)
}

// check refuses the flags that do not go together, before anything is
// read.
func (o *inboxOptions) check(a *App) error {
	if o.format != formatText && !o.hook() {
		return &usageError{Err: fmt.Errorf("--format %q: use text or %s (or --json)", o.format, formatClaudeHook)}
	}
	if o.hook() && a.json {
		return &usageError{Err: fmt.Errorf("--format %s prints its own JSON: drop --json", formatClaudeHook)}
	}
	if o.hook() && !inbox.ValidHookEvent(o.hookEvent) {
		return &usageError{Err: fmt.Errorf("hook event %q (--hook-event, or hook_event_name on stdin): use one of %s", safetext.Line(o.hookEvent), strings.Join(inbox.HookEvents, ", "))}
	}
	return nil
}

// reader is whose inbox is read. Peeking changes nothing: any inbox may
// be read. Taking the items marks them delivered: only the agent itself
// may.
func (o *inboxOptions) reader(a *App) (string, error) {
	if o.peek {
		return required("agent", a.agentDefault(o.agent))
	}
	return a.requireAgent("agent", o.agent)
}

// limit is how many bytes of text the items may take: no limit with
// --all or --json, a hook's own limit in a hook's output.
func (o *inboxOptions) limit(a *App) int {
	switch {
	case o.all || a.json:
		return 0
	case o.hook():
		return inbox.HookTextLimit(o.hookEvent)
	}
	return inbox.HookLimit
}

// items are what is new for agent: the gate's revision requests first
// (the agent's work waits on them), then the inbox's, marked delivered
// unless --peek.
func (o *inboxOptions) items(ctx context.Context, a *App, ws *workspace.Workspace, agent string, n *int) (inbox.Result, error) {
	opts := inbox.Options{Agent: agent, Issue: n, Peek: o.peek, Source: &brief.Source{Root: ws.Root, Rules: ws.Rules}, Limit: o.limit(a)}
	revisions, delivered, err := revisionItems(ctx, a, ws.Store, agent, n)
	if err != nil {
		return inbox.Result{}, err
	}
	if opts.Limit > 0 && len(revisions) > 0 {
		opts.Limit = max(opts.Limit/2, opts.Limit-len(inbox.Text(inbox.Result{Agent: agent, Items: revisions})))
	}
	res, err := inbox.Check(ctx, ws.Store, opts)
	if err != nil {
		return inbox.Result{}, err
	}
	if len(revisions) > 0 {
		res.Items = append(revisions, res.Items...)
		if !o.peek {
			delivered()
			res.Marked = true
		}
	}
	return res, nil
}

// print writes res: a hook's JSON, the document under --json, else the
// text.
func (o *inboxOptions) print(a *App, agent string, res inbox.Result) error {
	if o.hook() {
		out, err := inbox.ClaudeHook(o.hookEvent, res)
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
func markSeen(ctx context.Context, warn func(error), store *ledger.Store, reader, via string, recs ...router.Record) {
	for _, r := range recs {
		warn(inbox.MarkSeen(ctx, store, reader, r.Clarification, via))
	}
}

// markResolved is markSeen for the one who resolved rec.
func markResolved(ctx context.Context, warn func(error), store *ledger.Store, rec router.Record) {
	warn(inbox.MarkResolved(ctx, store, rec.Clarification))
}

// warnIf prints err, if any, as a warning.
func (a *App) warnIf(err error) {
	if err != nil {
		fmt.Fprintf(a.stderr, "agentx: warning: %v\n", err)
	}
}
