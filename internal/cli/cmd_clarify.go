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

	"github.com/agentx-cli/agentx/monitor"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
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
func action(a *App, format string, fn func(h *router.Hub) (router.Record, error)) (*router.Hub, router.Record, error) {
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
func act(a *App, format string, fn func(h *router.Hub) (router.Record, error)) error {
	_, rec, err := action(a, format, fn)
	if err != nil {
		return err
	}
	return a.later(func(context.Context) error { return printRecord(a, rec, format) })
}

// printRecord prints one clarification in the chosen rendering, as it
// stands once the monitor has run.
func printRecord(a *App, r router.Record, format string) error {
	r = afterMonitor(a, r)
	return a.emit(viewOf(r), func() {
		if format == formatMarkdown {
			renderMarkdown(a.stdout, r)
			return
		}
		renderThread(a.stdout, a.paint, r, nil)
	})
}

// printDelivered is printRecord with the receipts of r's answers (see
// inbox.Receipts): what clarify show and wait print.
func printDelivered(a *App, store *ledger.Store, r router.Record, format string) error {
	r = afterMonitor(a, r)
	s := withReceipts(store, r, a.warnIf)
	return a.emit(s, func() {
		if format == formatMarkdown {
			renderMarkdown(a.stdout, r)
			return
		}
		renderThread(a.stdout, a.paint, r, s.Delivery)
		renderCard(a.stdout, a.hb, r)
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
func withReceipts(store *ledger.Store, r router.Record, warn func(error)) recordView {
	rs, err := inbox.Receipts(store, r.Clarification)
	warn(err)
	v := viewOf(r)
	v.Delivery = rs
	return v
}

// afterMonitor returns r as it stands once the monitor ran: the monitor
// may have moved it (it escalates a question just asked that closes a
// deadlock).
func afterMonitor(a *App, r router.Record) router.Record {
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

// outcomeNote tells the asker what came of the responder, where the record
// alone does not say it: a failure to be retried (on stderr, in text: under
// --json the record says it), an answer that came too late (a warning).
func outcomeNote(a *App, r router.Record) {
	switch r.Outcome {
	case router.OutcomeRetrying:
		if !a.json {
			fmt.Fprintf(a.stderr, "%s: %s.\nWait for the answer: agentx clarify wait %s\n", safetext.Line(r.ID), safetext.Line(r.Detail), safetext.Line(r.ID))
		}
	case router.OutcomeSuperseded:
		a.warnf("%s: %s", r.ID, r.Detail)
	}
}

// waitAnswer waits for id's answer (outsideWait: also reading answers
// given on GitHub and in Slack), running the monitor when its next action
// on the clarification comes due (the retry of a failed responder), unless
// the side monitor is off; what the monitor changed is mirrored to GitHub
// and Slack as after any run.
func waitAnswer(ctx context.Context, a *App, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
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
func actWait(ctx context.Context, a *App, format string, thread bool, timeout time.Duration, fn func(h *router.Hub) (router.Record, error)) error {
	a.waiting(timeout)
	h, rec, err := action(a, format, fn)
	if err != nil {
		return err
	}
	return a.later(func(ctx context.Context) error {
		rec := afterMonitor(a, rec)
		outcomeNote(a, rec)
		return awaitAnswer(ctx, a, h, rec, timeout, format, thread)
	})
}

// awaitAnswer waits up to timeout for rec to be answered, unless it is
// settled already, and prints what settled it: the answer (or a person's
// decision) alone on stdout, for a script to capture; the thread with
// --format (thread) or the record under --json. A wait that ends with no
// answer (timed out, or the question escalated to a human or abandoned) is
// exit 8 with the id alone on stdout, or under --json the record in the
// error document's data: the asker records its assumption on that id.
func awaitAnswer(ctx context.Context, a *App, h *router.Hub, rec router.Record, timeout time.Duration, format string, thread bool) error {
	if !router.Settled(rec.Clarification) {
		got, err := waitAnswer(ctx, a, h, rec.ID, timeout)
		got.DecidedBefore = rec.DecidedBefore // what the ask was told, under --json too
		var te *router.WaitTimeoutError
		if errors.As(err, &te) {
			return noAnswer(a, got, te.Error(), waitAdvice(te.ID))
		}
		if err != nil {
			return err
		}
		rec = got
	}
	switch rec.Status {
	case ledger.Escalated:
		return noAnswer(a, rec, fmt.Sprintf("%s: escalated to a human (%s): no answer", rec.ID, router.EscalationReason(rec.Clarification)),
			router.Guidance+fmt.Sprintf(" (the person's decision comes later: `agentx clarify wait %s` picks it up)", rec.ID))
	case ledger.Abandoned:
		return noAnswer(a, rec, fmt.Sprintf("%s: abandoned: no answer will come", rec.ID), "proceed on your best judgment")
	}
	// Delivered here: the inbox does not deliver it again. The one waiting
	// is this process's agent, else (a shell) the asker.
	markSeen(ctx, a.warnIf, h.Store, cmp.Or(a.getenv("AGENTX_AGENT"), rec.From), inbox.ViaWait, rec)
	if a.json || thread {
		return printDelivered(a, h.Store, rec, format)
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
func noAnswer(a *App, rec router.Record, msg, hint string) error {
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

// reply is the text or option given to answer or resolve: --option N
// (with --body as a note, stdin not read), else the body (--body or
// stdin; resolve needs none).
func reply(a *App, cmd *cobra.Command, body string, option int) (router.Reply, error) {
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

// personDefault is the --from of a command a person may take: as given;
// else, in a process launched as no agent, human (the person is recorded
// by name); else "" (the process's agent).
func personDefault(getenv func(string) string, from string) string {
	if from == "" && getenv(router.EnvAgent) == "" {
		return ledger.Human
	}
	return from
}
