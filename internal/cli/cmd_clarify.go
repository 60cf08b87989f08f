package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/monitor"
	"github.com/agentx-cli/agentx/router"
)

// The clarify group, one file per subcommand (cmd_clarify_*.go, and
// assume, stale and stats in their own files), and what its subcommands
// share: acting on one clarification and printing it as the monitor left
// it, and waiting for its answer.

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
