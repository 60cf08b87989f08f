package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// hub opens the workspace and the hub over it.
func (a *app) hub() (*workspace.Workspace, *router.Hub, error) {
	ws, err := a.open()
	if err != nil {
		return nil, nil, err
	}
	if a.hb == nil {
		a.hb = router.New(ws.Store, ws.Rules, ws.Root)
		a.hb.Warn = func(err error) { fmt.Fprintf(a.stderr, "agentx: warning: %v\n", err) }
	}
	return ws, a.hb, nil
}

// text returns flag's value, or else stdin when it is not a terminal.
func (a *app) text(flagName, value string) (string, error) {
	if value != "" {
		return value, nil
	}
	if f, ok := a.stdin.(interface{ Fd() uintptr }); ok && isatty.IsTerminal(f.Fd()) {
		return "", &usageError{err: fmt.Errorf("give %s TEXT, or pipe the text on stdin", flagName)}
	}
	b, err := io.ReadAll(io.LimitReader(a.stdin, ledger.MaxBodyLen+1))
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// agentFlag registers --from (or another name) defaulting to AGENTX_AGENT.
func (a *app) agentDefault(v string) string {
	if v == "" {
		return a.getenv("AGENTX_AGENT")
	}
	return v
}

// issueFlag is an --issue flag that also reads AGENTX_ISSUE.
type issueFlag struct {
	raw string
}

func (f *issueFlag) register(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&f.raw, "issue", "", usage+" (default $AGENTX_ISSUE)")
}

// get returns the issue number, or nil when neither flag nor env gives one.
func (f *issueFlag) get(a *app) (*int, error) {
	raw := f.raw
	if raw == "" {
		raw = a.getenv("AGENTX_ISSUE")
	}
	if raw == "" {
		return nil, nil
	}
	n, err := ledger.ParseIssue(raw)
	if err != nil {
		return nil, &usageError{err: fmt.Errorf("--issue: %w", err)}
	}
	return &n, nil
}

func (f *issueFlag) require(a *app) (int, error) {
	n, err := f.get(a)
	if err != nil {
		return 0, err
	}
	if n == nil {
		return 0, &usageError{err: fmt.Errorf("--issue is required (or set AGENTX_ISSUE)")}
	}
	return *n, nil
}

// act opens the hub, runs one action on a clarification and prints the
// record it returns.
func (a *app) act(format string, fn func(h *router.Hub) (router.Record, error)) error {
	if err := checkFormat(format); err != nil {
		return err // before acting: a bad flag changes nothing
	}
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	rec, err := fn(h)
	if err != nil {
		return err
	}
	return a.printRecord(rec, format)
}

// printRecord prints one clarification in the chosen rendering.
func (a *app) printRecord(r router.Record, format string) error {
	return a.emit(r, func() {
		if format == formatMarkdown {
			renderMarkdown(a.stdout, r)
			return
		}
		a.renderThread(a.stdout, r)
	})
}

func newClarifyCmd(a *app) *cobra.Command {
	list := newClarifyListCmd(a)
	cmd := &cobra.Command{
		Use:   "clarify",
		Short: "Ask, answer, follow up, resolve and list clarifications (bare: list)",
		Long: `Clarifications are questions an agent asks another agent, or a human, while
working on an issue. Each lives in .agentx/state/clarifications/issue-N.json
as CLR-N-NNN and moves through pending → answered → resolved, with follow-up
rounds, and escalation to a human when the round limit is reached.

Bare "agentx clarify" lists the open clarifications (like "clarify list").`,
		Args: cobra.NoArgs,
		RunE: list.RunE,
		// Every clarify subcommand runs the monitor as a side effect.
		PersistentPreRunE: func(c *cobra.Command, args []string) error {
			if err := a.prepare(); err != nil {
				return err
			}
			a.armMonitor(c.Context())
			return nil
		},
	}
	cmd.Flags().AddFlagSet(list.Flags())
	cmd.AddCommand(
		newAskCmd(a),
		newAnswerCmd(a),
		newFollowupCmd(a),
		newResolveCmd(a),
		newCloseCmd(a, "escalate", "Hand a clarification to a human, with a summary to decide on"),
		newCloseCmd(a, "abandon", "Close a clarification nobody will finish"),
		newCancelCmd(a),
		newShowCmd(a),
		list,
		newWaitCmd(a),
		newStatsCmd(a),
		newAssumeCmd(a),
		newClarifyStaleCmd(a),
	)
	return cmd
}

func newAskCmd(a *app) *cobra.Command {
	var (
		issue                               issueFlag
		from, to, topic, question, wf, step string
		nonBlocking, wait                   bool
		timeout                             time.Duration
		format                              string
	)
	cmd := &cobra.Command{
		Use:   "ask --issue N --from A --to B --topic T [--question Q | stdin]",
		Short: "Ask a clarifying question (checked against the workflow rules)",
		Long: `Ask agent B (or human) a question on issue N. The workflow decides whether
A may ask B (can_clarify) and whether A may block on the answer. If B has a
responder in config.toml it is run and its answer recorded at once; else the
question stays pending until someone runs "agentx clarify answer".

With --wait, block until the answer comes (or --timeout, then exit 8: proceed
on your best judgment and record your assumption).`,
		Example: `  agentx clarify ask --issue 42 --from engineer --to architect \
    --topic "Database adapter" --question "PostgreSQL or SQLite for local dev?"
  echo "Ship behind a flag?" | agentx clarify ask --issue 42 --from engineer --to human --topic Rollout --wait --timeout 5m`,
		Args: cobra.NoArgs,
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			n, err := issue.require(a)
			if err != nil {
				return err
			}
			q, err := a.text("--question", question)
			if err != nil {
				return err
			}
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			rec, err := h.Ask(ctx, router.AskRequest{
				Issue: n, From: a.agentDefault(from), To: to, Topic: topic, Question: q,
				NonBlocking: nonBlocking, Workflow: wf, Step: step,
			})
			if err != nil {
				return err
			}
			if wait && !router.Settled(rec.Clarification) {
				if !a.json {
					fmt.Fprintf(a.stderr, "%s asked; waiting up to %s for %s...\n", rec.ID, timeout, rec.To)
				}
				if rec, err = h.Wait(ctx, rec.ID, timeout); err != nil {
					return err
				}
			}
			if wait || a.json || format == formatMarkdown {
				return a.printRecord(rec, format)
			}
			a.printf("%s\n", rec.ID)
			if rec.Status == ledger.Answered {
				a.printf("%s answered: %s\n", rec.To, rec.Current(ledger.Answer).Body)
			}
			return nil
		}),
	}
	f := cmd.Flags()
	issue.register(cmd, "issue number (0 = no issue)")
	f.StringVar(&from, "from", "", "asking agent (default $AGENTX_AGENT)")
	f.StringVar(&to, "to", "", "agent to ask, or human")
	f.StringVar(&topic, "topic", "", "short subject")
	f.StringVar(&question, "question", "", "the question (default: read stdin)")
	f.BoolVar(&nonBlocking, "non-blocking", false, "keep working while the question is open")
	f.StringVar(&wf, "workflow", "", "workflow whose rules apply (default: config's default_workflow)")
	f.StringVar(&step, "step", "", "step id whose rules apply (default: the asker's step)")
	f.BoolVar(&wait, "wait", false, "wait for the answer")
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "how long --wait waits")
	formatFlag(cmd, &format)
	_ = cmd.MarkFlagRequired("to")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

func newAnswerCmd(a *app) *cobra.Command {
	var from, body, format string
	cmd := &cobra.Command{
		Use:   "answer ID [--from B] [--body TEXT | stdin]",
		Short: "Answer the current round (the asked agent, or --from human)",
		Args:  cobra.ExactArgs(1),
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			text, err := a.text("--body", body)
			if err != nil {
				return err
			}
			return a.act(format, func(h *router.Hub) (router.Record, error) {
				return h.Answer(ctx, args[0], a.agentDefault(from), text)
			})
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "who answers: the asked agent or human (default $AGENTX_AGENT, else the asked agent)")
	cmd.Flags().StringVar(&body, "body", "", "the answer (default: read stdin)")
	formatFlag(cmd, &format)
	return cmd
}

func newFollowupCmd(a *app) *cobra.Command {
	var from, body, format string
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "followup ID [--from A] [--body TEXT | stdin]",
		Short: "Ask the next round; at the round limit the clarification escalates instead",
		Args:  cobra.ExactArgs(1),
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			text, err := a.text("--body", body)
			if err != nil {
				return err
			}
			return a.act(format, func(h *router.Hub) (router.Record, error) {
				rec, err := h.Followup(ctx, args[0], a.agentDefault(from), text)
				if err != nil || !wait || router.Settled(rec.Clarification) {
					return rec, err
				}
				return h.Wait(ctx, rec.ID, timeout)
			})
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "the asking agent (default $AGENTX_AGENT, else the asker)")
	cmd.Flags().StringVar(&body, "body", "", "the follow-up question (default: read stdin)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the answer")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long --wait waits")
	formatFlag(cmd, &format)
	return cmd
}

func newResolveCmd(a *app) *cobra.Command {
	var from, body, format string
	cmd := &cobra.Command{
		Use:   "resolve ID [--from A|human] [--body TEXT]",
		Short: "Close a clarification: the asker once answered, or a human (also after escalation)",
		Example: `  agentx clarify resolve CLR-42-001 --body "Proceeding with the repository pattern"
  agentx clarify resolve CLR-42-003 --from human --body "decision: ship JSON only"`,
		Args: cobra.ExactArgs(1),
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return a.act(format, func(h *router.Hub) (router.Record, error) {
				rec, err := h.Resolve(ctx, args[0], a.agentDefault(from), body)
				if err == nil {
					a.markResolved(ctx, h.Store, rec)
				}
				return rec, err
			})
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "the asker or human (default $AGENTX_AGENT, else the asker)")
	cmd.Flags().StringVar(&body, "body", "", "the resolution or decision (default: the last answer)")
	formatFlag(cmd, &format)
	return cmd
}

// newCloseCmd builds escalate and abandon, which differ only in the call.
func newCloseCmd(a *app, name, short string) *cobra.Command {
	var reason, format string
	cmd := &cobra.Command{
		Use:   name + " ID [--reason TEXT]",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return a.act(format, func(h *router.Hub) (router.Record, error) {
				if name == "escalate" {
					return h.Escalate(ctx, args[0], reason)
				}
				return h.Abandon(ctx, args[0], a.getenv("AGENTX_AGENT"), reason)
			})
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why")
	formatFlag(cmd, &format)
	return cmd
}

func newCancelCmd(a *app) *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "cancel ID [--from A]",
		Short: "Withdraw your own question (recorded as abandoned, reason cancelled)",
		Args:  cobra.ExactArgs(1),
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return a.act(formatText, func(h *router.Hub) (router.Record, error) {
				return h.Cancel(ctx, args[0], a.agentDefault(from))
			})
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "the asker (default $AGENTX_AGENT, else the asker)")
	return cmd
}

func newShowCmd(a *app) *cobra.Command {
	var issue issueFlag
	var format string
	cmd := &cobra.Command{
		Use:   "show ID | show --issue N",
		Short: "Show a clarification's thread, or every thread of an issue",
		Args:  cobra.MaximumNArgs(1),
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			n, err := issue.get(a)
			if err != nil {
				return err
			}
			if (len(args) == 1) == (issue.raw != "") || (len(args) == 0 && n == nil) {
				return &usageError{err: fmt.Errorf("give a clarification id or --issue N (not both)")}
			}
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			a.monitorNow(h) // show the state the monitor leaves
			if len(args) == 1 {
				rec, err := h.Get(args[0])
				if err != nil {
					return err
				}
				a.markSeen(ctx, h.Store, a.getenv("AGENTX_AGENT"), rec)
				return a.printRecord(rec, format)
			}
			recs, err := h.Issue(*n)
			if err != nil {
				return err
			}
			a.markSeen(ctx, h.Store, a.getenv("AGENTX_AGENT"), recs...)
			return a.emit(recs, func() {
				if len(recs) == 0 {
					a.printf("No clarifications on issue #%d.\n", *n)
				}
				for i, r := range recs {
					if i > 0 {
						a.printf("\n")
					}
					if format == formatMarkdown {
						renderMarkdown(a.stdout, r)
					} else {
						a.renderThread(a.stdout, r)
					}
				}
			})
		}),
	}
	issue.register(cmd, "show every thread of this issue")
	formatFlag(cmd, &format)
	return cmd
}

func newClarifyListCmd(a *app) *cobra.Command {
	var (
		issue    issueFlag
		statuses []string
		agent    string
		all      bool
	)
	cmd := &cobra.Command{
		Use:   "list [--issue N] [--status S]... [--agent A] [--all]",
		Short: "List clarifications (open ones unless --all or --status)",
		Args:  cobra.NoArgs,
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			n, err := issue.get(a)
			if err != nil {
				return err
			}
			f := router.Filter{Issue: n, Agent: agent, All: all}
			for _, s := range statuses {
				st := ledger.Status(s)
				if !st.Valid() {
					return &usageError{err: fmt.Errorf("--status %q: use one of pending, answered, stale, escalated, resolved, abandoned", s)}
				}
				f.Statuses = append(f.Statuses, st)
			}
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			a.monitorNow(h) // list the state the monitor leaves
			recs, errs, err := h.List(f)
			if err != nil {
				return err
			}
			for _, e := range errs {
				fmt.Fprintf(a.stderr, "agentx: warning: skipped %v\n", e)
			}
			if recs == nil {
				recs = []router.Record{}
			}
			return a.emit(recs, func() {
				if len(recs) == 0 && a.isTTY {
					a.printf("No clarifications to show.\n")
					return
				}
				a.renderList(a.stdout, recs, a.now())
			})
		}),
	}
	issue.register(cmd, "only this issue")
	cmd.Flags().StringSliceVar(&statuses, "status", nil, "only these statuses (repeatable or comma-separated)")
	cmd.Flags().StringVar(&agent, "agent", "", "only where this agent asks or is asked")
	cmd.Flags().BoolVar(&all, "all", false, "include resolved and abandoned")
	return cmd
}

func newWaitCmd(a *app) *cobra.Command {
	var timeout time.Duration
	var format string
	cmd := &cobra.Command{
		Use:   "wait ID [--timeout D]",
		Short: "Wait until a clarification is answered, escalated or closed (exit 8 on timeout)",
		Args:  cobra.ExactArgs(1),
		RunE: runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return a.act(format, func(h *router.Hub) (router.Record, error) {
				rec, err := h.Wait(ctx, args[0], timeout)
				if err == nil {
					a.markSeen(ctx, h.Store, a.getenv("AGENTX_AGENT"), rec)
				}
				return rec, err
			})
		}),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait")
	formatFlag(cmd, &format)
	return cmd
}
