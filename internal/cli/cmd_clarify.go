package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/monitor"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/frontends/wake"
	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// hub opens the workspace and the hub over it.
func (a *App) hub() (*workspace.Workspace, *router.Hub, error) { return a.openHub(true) }

// writeHub is hub for a command that is about to write: in remote mode the
// settings its commit depends on are read meanwhile (remote.Replicator.Warm),
// so that the commit does not wait for them.
func (a *App) writeHub() (*workspace.Workspace, *router.Hub, error) {
	ws, h, err := a.hub()
	if err == nil {
		ctx := a.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		remote.Of(ws.Store).Warm(ctx)
	}
	return ws, h, err
}

// localHub is hub without the remote mode's refresh: for what needs no
// other host's changes and must not wait on a fetch, the scope check (run
// before every tool an agent uses) and shell completion.
func (a *App) localHub() (*workspace.Workspace, *router.Hub, error) {
	a.noWake = true // nor does it start an agent's resume command
	return a.openHub(false)
}

func (a *App) openHub(refresh bool) (*workspace.Workspace, *router.Hub, error) {
	ws, err := a.open()
	if err != nil {
		return nil, nil, err
	}
	if a.hb == nil {
		a.hb = router.New(ws.Store, ws.Rules, ws.Root)
		a.hb.Warn = func(err error) { a.warnf("%v", err) }
		a.hb.Trust = a.trustGate(ws.Root, ws.Rules)
	}
	if refresh && !a.refreshed {
		a.refreshed = true
		ctx := a.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		a.remoteSide(ctx, ws)
	}
	return ws, a.hb, nil
}

// text returns flag's value, or else stdin when it is not a terminal; no
// text either way is a usage error naming the flag, and so is text past
// one message's limit (ledger.MaxMessageLen), before anything is opened.
func (a *App) text(flagName, value string) (string, error) {
	if value != "" {
		return value, message(flagName, value)
	}
	missing := &usageError{Err: fmt.Errorf("%s is required: give %s TEXT, or pipe the text on stdin", flagName, flagName)}
	if f, ok := a.stdin.(interface{ Fd() uintptr }); ok && isatty.IsTerminal(f.Fd()) {
		return "", missing
	}
	b, err := io.ReadAll(io.LimitReader(a.stdin, ledger.MaxBodyLen+1))
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	if len(b) > ledger.MaxBodyLen {
		return "", &usageError{Err: fmt.Errorf("%s from stdin is more than %d bytes; the limit is %d bytes", flagName, ledger.MaxBodyLen, ledger.MaxMessageLen),
			hint: fmt.Sprintf("shorten it to %d bytes or fewer; put the detail in a file or the issue and name it; nothing was written", ledger.MaxMessageLen)}
	}
	text := strings.TrimSpace(string(b))
	if text == "" {
		return "", missing
	}
	return text, message(flagName+" (stdin)", text)
}

// message checks the text given for flag (a message: a question, answer,
// follow-up, decision, assumption or note) against one message's limit,
// naming the flag: an input error (exit 2) whose hint says what to do.
func message(flag, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil // the hub says what is missing
	}
	return ledger.ValidateMessage(flag, text)
}

// agentDefault returns an agent flag's value, else AGENTX_AGENT.
func (a *App) agentDefault(v string) string {
	if v == "" {
		return a.getenv("AGENTX_AGENT")
	}
	return v
}

// requireAgent is claim for a flag the command cannot do without: neither
// the flag nor AGENTX_AGENT is a usage error naming the flag.
func (a *App) requireAgent(flag, v string) (string, error) {
	v, err := a.claim(flag, v)
	if err != nil {
		return "", err
	}
	return required(flag, v)
}

// required refuses an empty agent flag as a usage error.
func required(flag, v string) (string, error) {
	if v == "" {
		return "", &usageError{Err: fmt.Errorf("--%s is required (or set AGENTX_AGENT)", flag)}
	}
	return v, nil
}

// issueFlag is an --issue flag that also reads AGENTX_ISSUE.
type issueFlag struct {
	raw string
}

func (f *issueFlag) register(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&f.raw, "issue", "", usage+" (default $AGENTX_ISSUE)")
}

// get returns the issue number, or nil when neither flag nor env gives one.
func (f *issueFlag) get(a *App) (*int, error) {
	raw, field := f.raw, "issue" // the flag (worded --issue)
	if raw == "" {
		raw, field = a.getenv("AGENTX_ISSUE"), "AGENTX_ISSUE"
	}
	if raw == "" {
		return nil, nil
	}
	n, err := ledger.ParseIssue(raw)
	if in := (*ledger.InputError)(nil); errors.As(err, &in) {
		in.Field = field
	}
	if err != nil {
		return nil, &usageError{Err: err}
	}
	return &n, nil
}

func (f *issueFlag) require(a *App) (int, error) {
	n, err := f.get(a)
	if err != nil {
		return 0, err
	}
	if n == nil {
		return 0, &usageError{Err: fmt.Errorf("--issue is required (or set AGENTX_ISSUE)")}
	}
	return *n, nil
}

// action checks --format, opens the hub and runs one action on a
// clarification, returning the record it returns.
func (a *App) action(format string, fn func(h *router.Hub) (router.Record, error)) (*router.Hub, router.Record, error) {
	if err := checkFormat(format); err != nil {
		return nil, router.Record{}, err // before acting: a bad flag changes nothing
	}
	_, h, err := a.writeHub()
	if err != nil {
		return nil, router.Record{}, err
	}
	rec, err := fn(h)
	return h, rec, err
}

// act runs one action (action) and, after the monitor, prints the record
// it returns as the monitor left it.
func (a *App) act(format string, fn func(h *router.Hub) (router.Record, error)) error {
	_, rec, err := a.action(format, fn)
	if err != nil {
		return err
	}
	return a.later(func(context.Context) error { return a.printRecord(rec, format) })
}

// printRecord prints one clarification in the chosen rendering, as it
// stands once the monitor has run.
func (a *App) printRecord(r router.Record, format string) error {
	r = a.afterMonitor(r)
	return a.emit(viewOf(r), func() {
		if format == formatMarkdown {
			renderMarkdown(a.stdout, r)
			return
		}
		a.renderThread(a.stdout, r, nil)
	})
}

// printDelivered is printRecord with the receipts of r's answers (see
// inbox.Receipts): what clarify show and wait print.
func (a *App) printDelivered(store *ledger.Store, r router.Record, format string) error {
	r = a.afterMonitor(r)
	s := a.withReceipts(store, r)
	return a.emit(s, func() {
		if format == formatMarkdown {
			renderMarkdown(a.stdout, r)
			return
		}
		a.renderThread(a.stdout, r, s.Delivery)
		a.renderCard(a.stdout, r)
	})
}

// recordView is a record as the clarify commands print it under --json:
// once resolved, with what was decided in short (decision: the summary
// given, else derived; see ledger.Clarification.Decision), and for show
// and wait the receipts of its answers (delivery).
type recordView struct {
	router.Record
	Decided  string          `json:"decision,omitempty"`
	Delivery []inbox.Receipt `json:"delivery,omitempty"`
}

// viewOf is r as printed, without receipts.
func viewOf(r router.Record) recordView {
	return recordView{Record: r, Decided: decision(r.Clarification)}
}

// decision is what was decided on c, in short, once it is resolved; ""
// before (an answer is not a decision until its asker settles on it) and
// for an abandoned one.
func decision(c *ledger.Clarification) string {
	if c == nil || c.Status != ledger.Resolved {
		return ""
	}
	return c.Decision()
}

// withReceipts returns r with its answers' receipts. Receipts that cannot be
// read are a warning: the record is still shown.
func (a *App) withReceipts(store *ledger.Store, r router.Record) recordView {
	rs, err := inbox.Receipts(store, r.Clarification)
	a.warnIf(err)
	v := viewOf(r)
	v.Delivery = rs
	return v
}

// afterMonitor returns r as it stands once the monitor ran: the monitor
// may have moved it (it escalates a question just asked that closes a
// deadlock).
func (a *App) afterMonitor(r router.Record) router.Record {
	if a.hb == nil || a.side == nil {
		return r
	}
	rep := a.side.report
	if rep == nil || !slices.ContainsFunc(rep.Acted(), func(f monitor.Finding) bool { return f.ID == r.ID && f.Result == monitor.Done }) {
		return r // the monitor did not touch it: no need to read the ledger again
	}
	cur, err := a.hb.Get(r.ID)
	if err != nil {
		return r
	}
	cur.DecidedBefore = r.DecidedBefore
	if r.Outcome != "" && r.Outcome != router.OutcomeSuperseded {
		// what came of the ask, as the monitor left it (a retry it made)
		cur = router.OutcomeOf(cur)
		if cur.Outcome == r.Outcome {
			cur.Detail = r.Detail
		}
	} else {
		cur.Outcome, cur.Detail = r.Outcome, r.Detail
	}
	return cur
}

// decidedNote tells the asker, in text on stderr (stdout stays the id or
// the answer, for a script), what was decided before on the question it
// just asked, and how to proceed on one of those decisions instead of
// waiting. Under --json the record's decidedBefore says it.
func (a *App) decidedNote(r router.Record) {
	if a.json || len(r.DecidedBefore) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("Decided before:\n")
	for _, d := range r.DecidedBefore {
		meta := fmt.Sprintf("#%d, %s", d.Issue, d.ResolvedAt.UTC().Format(time.DateOnly))
		if d.Commit != "" {
			meta += ", commit " + safetext.Line(shortCommit(d.Commit))
		}
		fmt.Fprintf(&b, "  %s (%s): %s\n", safetext.Line(d.ID), meta, safetext.Line(d.Summary))
		if d.Outdated {
			fmt.Fprintf(&b, "    may be outdated: %s changed since\n", safetext.Line(strings.Join(d.Changed, ", ")))
		}
	}
	fmt.Fprintf(&b, "To proceed on one instead of waiting: agentx clarify assume %s --reuse %s\n", safetext.Line(r.ID), safetext.Line(r.DecidedBefore[0].ID))
	fmt.Fprint(a.stderr, b.String())
}

// shortCommit is a commit as git abbreviates it: 12 hex digits.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// outcomeNote tells the asker what came of the responder, where the record
// alone does not say it: a failure to be retried (on stderr, in text: under
// --json the record says it), an answer that came too late (a warning).
func (a *App) outcomeNote(r router.Record) {
	switch r.Outcome {
	case router.OutcomeRetrying:
		if !a.json {
			fmt.Fprintf(a.stderr, "%s: %s.\nWait for the answer: agentx clarify wait %s\n", safetext.Line(r.ID), safetext.Line(r.Detail), safetext.Line(r.ID))
		}
	case router.OutcomeSuperseded:
		a.warnf("%s: %s", r.ID, r.Detail)
	}
}

// wait waits for rec's answer (outsideWait: also reading answers given on
// GitHub and in Slack), running the monitor when its next action on the clarification
// comes due (the retry of a failed responder), unless the side monitor is
// off; what the monitor changed is mirrored to GitHub and Slack as after
// any run.
func (a *App) wait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	ghWait := func(ctx context.Context, id string, d time.Duration) (router.Record, error) {
		return a.outsideWait(ctx, h, id, d)
	}
	if a.side == nil {
		return ghWait(ctx, id, timeout)
	}
	return newMonitor(h).Wait(ctx, id, timeout, ghWait, func(r *monitor.Report) {
		a.monitorDuring(r)
		a.outsideSide(ctx, h, false)
	})
}

// actWait is act for the commands that wait for an answer: fn's record,
// after the side monitor, is waited on for up to timeout and its answer
// printed (awaitAnswer).
func (a *App) actWait(ctx context.Context, format string, thread bool, timeout time.Duration, fn func(h *router.Hub) (router.Record, error)) error {
	a.waiting(timeout)
	h, rec, err := a.action(format, fn)
	if err != nil {
		return err
	}
	return a.later(func(ctx context.Context) error {
		rec := a.afterMonitor(rec)
		a.outcomeNote(rec)
		return a.awaitAnswer(ctx, h, rec, timeout, format, thread)
	})
}

// awaitAnswer waits up to timeout for rec to be answered, unless it is
// settled already, and prints what settled it: the answer (or a person's
// decision) alone on stdout, for a script to capture; the thread with
// --format (thread) or the record under --json. A wait that ends with no
// answer (timed out, or the question escalated to a human or abandoned) is
// exit 8 with the id alone on stdout, or under --json the record in the
// error document's data: the asker records its assumption on that id.
func (a *App) awaitAnswer(ctx context.Context, h *router.Hub, rec router.Record, timeout time.Duration, format string, thread bool) error {
	if !router.Settled(rec.Clarification) {
		got, err := a.wait(ctx, h, rec.ID, timeout)
		got.DecidedBefore = rec.DecidedBefore // what the ask was told, under --json too
		var te *router.WaitTimeoutError
		if errors.As(err, &te) {
			return a.noAnswer(got, te.Error(), waitAdvice(te.ID))
		}
		if err != nil {
			return err
		}
		rec = got
	}
	switch rec.Status {
	case ledger.Escalated:
		return a.noAnswer(rec, fmt.Sprintf("%s: escalated to a human (%s): no answer", rec.ID, router.EscalationReason(rec.Clarification)),
			router.Guidance+fmt.Sprintf(" (the person's decision comes later: `agentx clarify wait %s` picks it up)", rec.ID))
	case ledger.Abandoned:
		return a.noAnswer(rec, fmt.Sprintf("%s: abandoned: no answer will come", rec.ID), "proceed on your best judgment")
	}
	// Delivered here: the inbox does not deliver it again. The one waiting
	// is this process's agent, else (a shell) the asker.
	a.markSeen(ctx, h.Store, cmp.Or(a.getenv("AGENTX_AGENT"), rec.From), inbox.ViaWait, rec)
	if a.json || thread {
		return a.printDelivered(h.Store, rec, format)
	}
	a.printf("%s\n", answerOf(rec.Clarification))
	return nil
}

// answerOf is what settled an answered or resolved clarification for its
// asker: a person's decision, else the round's answer (every reply to it),
// else the resolution.
func answerOf(c *ledger.Clarification) string {
	res, ans := c.Current(ledger.Resolution), c.RoundAnswer()
	switch {
	case c.Status == ledger.Resolved && res != nil && (res.From == ledger.Human || ans == ""):
		return res.Body
	case ans != "":
		return ans
	}
	return ""
}

// noAnswer is the end of a wait with no answer: exit 8, the id alone on
// stdout (nothing under --json, where the error document carries rec).
func (a *App) noAnswer(rec router.Record, msg, hint string) error {
	if !a.json {
		a.printf("%s\n", rec.ID)
	}
	return &codedError{Code: ExitWaitTimeout, Msg: msg, Todo: hint, Data: rec}
}

func newClarifyCmd(a *App) *cobra.Command {
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
		Annotations: map[string]string{runsMonitor: "yes"},
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

func newAskCmd(a *App) *cobra.Command {
	var (
		issue                               issueFlag
		from, to, topic, question, wf, step string
		nonBlocking, wait                   bool
		timeout                             time.Duration
		format                              string
		options, refs                       []string
	)
	cmd := &cobra.Command{
		Use:   "ask --issue N --from A --to B --topic T [--question Q | stdin] [--ref PATH[:LINES]]...",
		Short: "Ask a clarifying question (checked against the workflow rules)",
		Long: `Ask agent B (or human) a question on issue N. The workflow decides whether
A may ask B (can_clarify) and whether A may block on the answer. If B has a
responder in config.toml it is run and its answer recorded at once; else the
question stays pending until someone runs "agentx clarify answer". A
responder that fails is retried once, its retry_delay later (default 30s),
by the next agentx command or the asker's wait: the ask prints the id and
says when (under --json, "outcome": "retrying" and "retryAt"), exit 0. A
responder answer that comes after someone else's is not recorded (outcome
superseded, with a warning).

With --wait, block until the answer comes and print it alone, for a script to
capture (the thread with --format text|markdown, the record with --json). No
answer (the --timeout passed, or the question went to a human or was
abandoned) is exit 8 with the id alone on stdout (under --json, the error's
data.id): proceed on your best judgment and record your assumption with
"agentx clarify assume ID".

The question carries its context to the one asked: each --ref PATH[:LINES]
(relative to the repository root; LINES a line, 12, or a range, 12-40, given
with a few lines either side), the asked agent's artifact (its workflow
step's output, when the file exists), the issue's text (agentx issue
describe), the decisions made on the issue so far and the commit you are
on, within [context] budget bytes of file text. A file outside the
repository, through a link leaving it, outside your step's scope, binary
or over 1 MiB is not read: a note says so, here and in the question's card,
and the ledger records what was given (agentx.context).

The ask is told what was decided before on the same question: up to three
resolved clarifications of the workspace with the same topic (as "clarify
stats" groups topics) or a question alike ([memory] similarity in
config.toml), newest first, under "Decided before:" on stderr (under
--json, decidedBefore), each "may be outdated" when a file it was decided
on has changed since. The question is asked all the same; to proceed on one
of them instead of waiting: "agentx clarify assume ID --reuse DECIDED-ID".`,
		Example: `  agentx clarify ask --issue 42 --from engineer --to architect \
    --topic "Database adapter" --question "PostgreSQL or SQLite for local dev?"
  agentx clarify ask --issue 42 --from engineer --to architect --topic "ADR-42 cache" \
    --ref docs/adr/ADR-42.md:10-20 --ref src/cache.go --question "Is the TTL per key?"
  echo "Ship behind a flag?" | agentx clarify ask --issue 42 --from engineer --to human --topic Rollout --wait --timeout 5m`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			n, err := issue.require(a)
			if err != nil {
				return err
			}
			asker, err := a.requireAgent("from", from)
			if err != nil {
				return err
			}
			given, err := brief.ParseRefs("--ref", refs)
			if err != nil {
				return usage(err)
			}
			q, err := a.text("--question", question)
			if err != nil {
				return err
			}
			_, h, err := a.writeHub()
			if err != nil {
				return err
			}
			if wait {
				a.waiting(timeout)
			}
			a.recordEnvSession(ctx, h.Store, asker, &n)
			rec, err := h.Ask(ctx, router.AskRequest{
				Issue: n, From: asker, To: to, Topic: topic, Question: q,
				NonBlocking: nonBlocking, Workflow: wf, Step: step, Options: options, Refs: given,
				Session: wake.SessionStarted(h.Store, asker, &n, strings.TrimSpace(a.getenv(envSession))),
			})
			if err != nil {
				return err
			}
			a.contextNotes(rec)
			return a.later(func(ctx context.Context) error {
				rec := a.afterMonitor(rec)
				a.outcomeNote(rec)
				a.decidedNote(rec)
				if wait {
					if !a.json && !router.Settled(rec.Clarification) {
						fmt.Fprintf(a.stderr, "%s asked; waiting up to %s for %s...\n", rec.ID, timeout, rec.To)
					}
					return a.awaitAnswer(ctx, h, rec, timeout, format, cmd.Flags().Changed("format"))
				}
				if a.json || format == formatMarkdown {
					return a.printRecord(rec, format)
				}
				a.printf("%s\n", rec.ID)
				if ans := rec.Current(ledger.Answer); rec.Status == ledger.Answered && ans != nil {
					a.printf("%s", safetext.Indent(ans.Body, safetext.Line(ans.From)+" answered: ", "  "))
					// the asker has the answer: its inbox does not deliver it again
					a.markSeen(ctx, h.Store, cmp.Or(a.getenv("AGENTX_AGENT"), rec.From), inbox.ViaAsk, rec)
				}
				return nil
			})
		}),
	}
	f := cmd.Flags()
	issue.register(cmd, "issue number (0 = no issue)")
	f.StringVar(&from, "from", "", "asking agent (default $AGENTX_AGENT)")
	f.StringVar(&to, "to", "", "agent to ask, or human")
	f.StringVar(&topic, "topic", "", "short subject")
	f.StringVar(&question, "question", "", "the question, at most 3000 bytes (default: read stdin)")
	f.BoolVar(&nonBlocking, "non-blocking", false, "keep working while the question is open")
	f.StringArrayVar(&options, "option", nil, "a choice offered (repeatable); end one with \"(default)\" to propose it; in Slack a person may answer with its number")
	f.StringArrayVar(&refs, "ref", nil, "a file the question is about, PATH or PATH:LINES (12 or 12-40), relative to the repository root (repeatable)")
	f.StringVar(&wf, "workflow", "", "workflow whose rules apply (default: config's default_workflow)")
	f.StringVar(&step, "step", "", "step id whose rules apply (default: the asker's step)")
	f.BoolVar(&wait, "wait", false, "wait for the answer and print it alone (--format: the thread); exit 8 and the id when none comes")
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "how long --wait waits")
	formatFlag(cmd, &format)
	_ = cmd.MarkFlagRequired("to")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

func newAnswerCmd(a *App) *cobra.Command {
	var from, as, body, format string
	var option int
	cmd := &cobra.Command{
		Use:   "answer ID [--from B | --from human [--as NAME]] [--body TEXT | stdin | --option N]",
		Short: "Answer the current round: the asked agent, or a person as human",
		Long: `Answer the current round of a clarification. An agent answers what it was
asked: a process launched as an agent (AGENTX_AGENT) answers only as that
agent. A person answers a question to human, or for the agent asked, as
human, at a terminal of their own, confirming there; the entry records the
person's name (--as NAME, else git config user.email or user.name, else $USER).

Who is recorded: without --from, the answer is the asked agent's (a person
typing it stands in for that agent, and the entry says so), except for a
question to human, which records the person. --from human or --as NAME
records the person by name.

A question asked with options (ask_human's multiple choice) is answered
with --option N: the answer recorded is option N's text, and the ledger
notes its number; --body with it adds a note. A number the question does
not offer is a usage error naming its options (exit 2).`,
		Example: `  agentx clarify answer CLR-42-001 --body "Repository pattern: SQLite in dev, PostgreSQL in prod."
  agentx clarify answer CLR-42-002 --from human --body "Yes, behind a flag, default off."
  agentx clarify answer CLR-42-004 --from human --option 2`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			r, err := a.reply(cmd, body, option)
			if err != nil {
				return err
			}
			return a.act(format, func(h *router.Hub) (router.Record, error) {
				who, err := a.claimAs(from, as)
				if err != nil {
					return router.Record{}, err
				}
				if err := a.named(ctx, h, args[0], true); err != nil {
					return router.Record{}, err
				}
				if who == "" {
					// a person answering a question to human: confirmed
					// now, not under the ledger's lock
					if rec, gerr := h.Get(args[0]); gerr == nil && rec.To == ledger.Human {
						if who, err = a.claim("from", ledger.Human); err != nil {
							return router.Record{}, err
						}
					}
				}
				return h.AnswerReply(ctx, args[0], who, r)
			})
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "who answers: the asked agent, or human (default $AGENTX_AGENT, else the asked agent)")
	cmd.Flags().StringVar(&as, "as", "", "the person answering as human (implies --from human; default: git user.email, user.name, $USER)")
	cmd.Flags().StringVar(&body, "body", "", "the answer, at most 3000 bytes (default: read stdin); with --option, a note after the option")
	cmd.Flags().IntVar(&option, "option", 0, "pick option N of the question's options (1-based)")
	formatFlag(cmd, &format)
	return cmd
}

// reply is the text or option given to answer or resolve: --option N
// (with --body as a note, stdin not read), else the body (--body or
// stdin; resolve needs none).
func (a *App) reply(cmd *cobra.Command, body string, option int) (router.Reply, error) {
	if cmd.Flags().Changed("option") {
		if option < 1 {
			return router.Reply{}, usage(fmt.Errorf("--option %d: options are numbered from 1", option))
		}
		return router.Reply{Body: body, Option: option}, message("--body", body)
	}
	if cmd.Name() == "resolve" {
		return router.Reply{Body: body}, message("--body", body)
	}
	text, err := a.text("--body", body)
	return router.Reply{Body: text}, err
}

func newFollowupCmd(a *App) *cobra.Command {
	var from, body, format string
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "followup ID [--from A] [--body TEXT | stdin]",
		Short: "Ask the next round; at the round limit the clarification escalates instead",
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			text, err := a.text("--body", body)
			if err != nil {
				return err
			}
			who, err := a.claim("from", from)
			if err != nil {
				return err
			}
			followup := func(h *router.Hub) (router.Record, error) {
				if err := a.named(ctx, h, args[0], true); err != nil {
					return router.Record{}, err
				}
				return h.Followup(ctx, args[0], who, text)
			}
			if wait {
				return a.actWait(ctx, format, cmd.Flags().Changed("format"), timeout, followup)
			}
			_, rec, err := a.action(format, followup)
			if err != nil {
				return err
			}
			return a.later(func(context.Context) error {
				rec := a.afterMonitor(rec)
				a.outcomeNote(rec)
				return a.printRecord(rec, format)
			})
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "the asking agent (default $AGENTX_AGENT, else the asker)")
	cmd.Flags().StringVar(&body, "body", "", "the follow-up question, at most 3000 bytes (default: read stdin)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the answer and print it alone (--format: the thread); exit 8 and the id when none comes")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long --wait waits")
	formatFlag(cmd, &format)
	return cmd
}

func newResolveCmd(a *App) *cobra.Command {
	var from, as, body, summary, format string
	var option int
	cmd := &cobra.Command{
		Use:   "resolve ID [--from A | --from human [--as NAME]] [--body TEXT | --option N] [--summary TEXT]",
		Short: "Close a clarification: the asker once answered, or a person (also after escalation)",
		Long: `Close a clarification. Its asker closes it once answered: a process launched
as an agent (AGENTX_AGENT) resolves only as that agent. A person closes any
open clarification, and only a person closes an escalated one: as human,
at a terminal of their own, confirming there (without --from, an escalated
one is closed as human); the entry records the person's name (--as NAME,
else git config user.email or user.name, else $USER).

An escalation lists numbered options (accept one side's position, or give
a new decision); --option N picks one: the resolution records the decision
it names, and the ledger notes its number. --body with it adds a note, and
is the decision itself for "Give a new decision". A question asked with
options is resolved with one the same way. A number it does not offer is
a usage error naming its options (exit 2).

--summary says what was decided in a sentence or two, on one line (at most
400 bytes): what the inbox, clarify show and clarify list --json give as
the decision, where the thread is too long to repeat. Without it, the
decision is the first sentence of the resolution (or of the last answer).
A summary too long, of more than two sentences or with a control character
is a usage error (exit 2), and nothing is written.`,
		Example: `  agentx clarify resolve CLR-42-001 --body "Proceeding with the repository pattern"
  agentx clarify resolve CLR-42-002 --summary "Dual adapter behind a repository interface."
  agentx clarify resolve CLR-42-003 --from human --body "decision: ship JSON only"
  agentx clarify resolve CLR-42-003 --as alice@example.com --body "decision: ship JSON only"
  agentx clarify resolve CLR-42-005 --from human --option 1`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			r, err := a.reply(cmd, body, option)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("summary") {
				r.Summary = strings.TrimSpace(summary)
				if err := ledger.ValidateSummary("--summary", r.Summary); err != nil {
					return err // before the lock: nothing is written
				}
			}
			return a.act(format, func(h *router.Hub) (router.Record, error) {
				if from == "" && as == "" && a.getenv(router.EnvAgent) == "" {
					// only a person closes an escalated one: a person's
					// shell closes it as human, confirmed before the lock
					if rec, gerr := h.Get(args[0]); gerr == nil && rec.Status == ledger.Escalated {
						from = ledger.Human
					}
				}
				who, err := a.claimAs(from, as)
				if err != nil {
					return router.Record{}, err
				}
				if err := a.named(ctx, h, args[0], true); err != nil {
					return router.Record{}, err
				}
				rec, err := h.ResolveReply(ctx, args[0], who, r)
				if err == nil {
					a.markResolved(ctx, h.Store, rec)
				}
				return rec, err
			})
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "the asker, or human (default $AGENTX_AGENT, else the asker)")
	cmd.Flags().StringVar(&as, "as", "", "the person resolving as human (implies --from human; default: git user.email, user.name, $USER)")
	cmd.Flags().StringVar(&body, "body", "", "the resolution or decision, at most 3000 bytes (default: the last answer); with --option, a note after the option")
	cmd.Flags().IntVar(&option, "option", 0, "pick option N of the escalation's (or the question's) options (1-based)")
	cmd.Flags().StringVar(&summary, "summary", "", "what was decided, in one or two sentences (at most 400 bytes; default: the first sentence of the resolution)")
	formatFlag(cmd, &format)
	return cmd
}

// newCloseCmd builds escalate and abandon, which differ only in the call.
func newCloseCmd(a *App, name, short string) *cobra.Command {
	var reason, format, as string
	cmd := &cobra.Command{
		Use:   name + " ID [--reason TEXT]",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return a.act(format, func(h *router.Hub) (router.Record, error) {
				if err := a.named(ctx, h, args[0], true); err != nil {
					return router.Record{}, err
				}
				if name == "escalate" {
					return h.Escalate(ctx, args[0], reason)
				}
				by, err := a.claimAs(a.personDefault(""), as)
				if err != nil {
					return router.Record{}, err
				}
				return h.Abandon(ctx, args[0], by, reason)
			})
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why")
	if name == "abandon" {
		cmd.Flags().StringVar(&as, "as", "", "the person abandoning it (default: git user.email, user.name, $USER)")
	}
	formatFlag(cmd, &format)
	return cmd
}

// personDefault is the --from of a command a person may take: as given;
// else, in a process launched as no agent, human (the person is recorded
// by name); else "" (the process's agent).
func (a *App) personDefault(from string) string {
	if from == "" && a.getenv(router.EnvAgent) == "" {
		return ledger.Human
	}
	return from
}

func newCancelCmd(a *App) *cobra.Command {
	var from, as string
	cmd := &cobra.Command{
		Use:   "cancel ID [--from A | --as NAME]",
		Short: "Withdraw a question (recorded as abandoned, reason cancelled): its asker, or a person",
		Long: `Withdraw a question: recorded as abandoned, reason cancelled. A process
launched as an agent (AGENTX_AGENT) withdraws only its own questions. From a
shell launched as no agent, the person withdraws it as human and is recorded
by name (--as NAME, else git config user.email or user.name, else $USER), as
for an answer; --from ASKER records the asker instead.`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return a.act(formatText, func(h *router.Hub) (router.Record, error) {
				who, err := a.claimAs(a.personDefault(from), as)
				if err != nil {
					return router.Record{}, err
				}
				if err := a.named(ctx, h, args[0], true); err != nil {
					return router.Record{}, err
				}
				return h.Cancel(ctx, args[0], who)
			})
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "the asker (default: $AGENTX_AGENT; from a shell launched as no agent, human)")
	cmd.Flags().StringVar(&as, "as", "", "the person withdrawing it as human (default: git user.email, user.name, $USER)")
	return cmd
}

func newShowCmd(a *App) *cobra.Command {
	var issue issueFlag
	var format string
	cmd := &cobra.Command{
		Use:   "show ID | show --issue N",
		Short: "Show a clarification's thread, or every thread of an issue",
		Args:  cobra.MaximumNArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			n, err := issue.get(a)
			if err != nil {
				return err
			}
			if (len(args) == 1) == (issue.raw != "") || (len(args) == 0 && n == nil) {
				return &usageError{Err: fmt.Errorf("give a clarification id or --issue N (not both)")}
			}
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				if err := a.named(ctx, h, args[0], false); err != nil {
					return err
				}
			} else {
				a.gateIssue(ctx, h, n)
			}
			return a.later(func(ctx context.Context) error { // show the state the monitor leaves
				if len(args) == 1 {
					rec, err := h.Get(args[0])
					if err != nil {
						return err
					}
					a.markSeen(ctx, h.Store, a.getenv("AGENTX_AGENT"), inbox.ViaShow, rec)
					return a.printDelivered(h.Store, rec, format)
				}
				recs, err := h.Issue(*n)
				if err != nil {
					return err
				}
				a.markSeen(ctx, h.Store, a.getenv("AGENTX_AGENT"), inbox.ViaShow, recs...)
				shown := make([]recordView, len(recs))
				for i, r := range recs {
					shown[i] = a.withReceipts(h.Store, r)
				}
				return a.emit(shown, func() {
					if len(recs) == 0 {
						a.printf("No clarifications %s.\n", words.OnIssue(*n))
					}
					for i, r := range recs {
						if i > 0 {
							a.printf("\n")
						}
						if format == formatMarkdown {
							renderMarkdown(a.stdout, r)
						} else {
							a.renderThread(a.stdout, r, shown[i].Delivery)
							a.renderCard(a.stdout, r)
						}
					}
				})
			})
		}),
	}
	issue.register(cmd, "show every thread of this issue")
	formatFlag(cmd, &format)
	return cmd
}

// emptyList says why a list of open clarifications is empty. On a
// terminal: "No clarifications to show."; then, when only open ones were
// asked for, on stderr (stdout stays empty for a script), how many closed
// ones there are (with --issue: that ledger is read once more) and the
// command that lists them.
func (a *App) emptyList(h *router.Hub, f router.Filter) {
	if a.isTTY {
		a.printf("No clarifications to show.\n")
	}
	if f.All || len(f.Statuses) > 0 {
		return
	}
	cmd, where := "agentx clarify list --all", ""
	if f.Issue != nil {
		cmd = fmt.Sprintf("agentx clarify list --issue %d --all", *f.Issue)
		where = " " + words.OnIssue(*f.Issue)
		closed := 0
		all := f
		all.All = true
		if _, err := h.Each(all, func(router.Record) error { closed++; return nil }); err != nil || closed == 0 {
			if err == nil {
				a.note("No clarifications%s.\n", where)
			}
			return
		}
		a.note("No open clarifications%s; %d closed (resolved or abandoned): %s\n", where, closed, cmd)
		return
	}
	a.note("No open clarifications; closed ones (resolved or abandoned): %s\n", cmd)
}

// note prints a line for the person at the terminal on stderr, where a
// script reading stdout does not see it.
func (a *App) note(format string, args ...any) {
	fmt.Fprintf(a.stderr, format, args...)
}

func newClarifyListCmd(a *App) *cobra.Command {
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
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			n, err := issue.get(a)
			if err != nil {
				return err
			}
			f := router.Filter{Issue: n, Agent: agent, All: all}
			for _, s := range statuses {
				st := ledger.Status(s)
				if !st.Valid() {
					return &usageError{Err: fmt.Errorf("--status %q: use one of pending, answered, stale, escalated, resolved, abandoned", s)}
				}
				f.Statuses = append(f.Statuses, st)
			}
			a.wide = true
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			return a.later(func(ctx context.Context) error { // list the state the monitor leaves
				// The records are printed as each ledger is read, one ledger
				// at a time (Hub.Each): a list of every ledger keeps at most
				// the table's cells, never the ledgers.
				var errs []error
				lw, rows := a.newListWriter(a.stdout, a.now()), 0
				err := emitEach(a, func(put func(recordView) error) error {
					var err error
					errs, err = h.Each(f, func(r router.Record) error {
						if err := ctx.Err(); err != nil {
							return err // interrupted, or the reader went away
						}
						return put(viewOf(r))
					})
					return err
				}, func(v recordView) error {
					rows++
					lw.add(v.Record)
					return nil
				}, func() {
					if rows == 0 {
						a.emptyList(h, f)
						return
					}
					_ = lw.flush()
				})
				for _, e := range errs {
					a.warnf("skipped %v", e)
				}
				return err
			})
		}),
	}
	issue.register(cmd, "only this issue")
	cmd.Flags().StringSliceVar(&statuses, "status", nil, "only these statuses (repeatable or comma-separated)")
	cmd.Flags().StringVar(&agent, "agent", "", "only where this agent asks or is asked")
	cmd.Flags().BoolVar(&all, "all", false, "include resolved and abandoned")
	return cmd
}

func newWaitCmd(a *App) *cobra.Command {
	var timeout time.Duration
	var format string
	cmd := &cobra.Command{
		Use:   "wait ID [--timeout D]",
		Short: "Wait for the answer and print it alone (exit 8 and the id when none comes)",
		Long: `Wait until the clarification is answered and print the answer alone on
stdout (a person's decision, if one resolved it), for a script to capture; the
thread with --format text|markdown, the record with --json. No answer (the
--timeout passed, or the question went to a human or was abandoned) is exit 8
with the id alone on stdout (under --json, the error's data).`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return a.actWait(ctx, format, cmd.Flags().Changed("format"), timeout, func(h *router.Hub) (router.Record, error) {
				if err := a.named(ctx, h, args[0], false); err != nil {
					return router.Record{}, err
				}
				return h.Get(args[0])
			})
		}),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait")
	formatFlag(cmd, &format)
	return cmd
}
