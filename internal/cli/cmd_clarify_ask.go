package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/frontends/wake"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// askOptions are `agentx clarify ask`'s flags.
type askOptions struct {
	issue                               issueFlag
	from, to, topic, question, wf, step string
	nonBlocking, wait                   bool
	timeout                             time.Duration
	format                              string
	options, refs                       []string
	thread                              bool // --format given: --wait prints the thread
}

func newAskCmd(a *App) *cobra.Command {
	o := &askOptions{}
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
			o.thread = cmd.Flags().Changed("format")
			return o.run(ctx, a)
		}),
	}
	f := cmd.Flags()
	o.issue.register(cmd, "issue number (0 = no issue)")
	f.StringVar(&o.from, "from", "", "asking agent (default $AGENTX_AGENT)")
	f.StringVar(&o.to, "to", "", "agent to ask, or human")
	f.StringVar(&o.topic, "topic", "", "short subject")
	f.StringVar(&o.question, "question", "", "the question, at most 3000 bytes (default: read stdin)")
	f.BoolVar(&o.nonBlocking, "non-blocking", false, "keep working while the question is open")
	f.StringArrayVar(&o.options, "option", nil, "a choice offered (repeatable); end one with \"(default)\" to propose it; in Slack a person may answer with its number")
	f.StringArrayVar(&o.refs, "ref", nil, "a file the question is about, PATH or PATH:LINES (12 or 12-40), relative to the repository root (repeatable)")
	f.StringVar(&o.wf, "workflow", "", "workflow whose rules apply (default: config's default_workflow)")
	f.StringVar(&o.step, "step", "", "step id whose rules apply (default: the asker's step)")
	f.BoolVar(&o.wait, "wait", false, "wait for the answer and print it alone (--format: the thread); exit 8 and the id when none comes")
	f.DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long --wait waits")
	formatFlag(cmd, &o.format)
	_ = cmd.MarkFlagRequired("to")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *askOptions) run(ctx context.Context, a *App) error {
	req, err := o.request(a)
	if err != nil {
		return err
	}
	_, h, err := a.writeHub()
	if err != nil {
		return err
	}
	if o.wait {
		a.waiting(o.timeout)
	}
	a.recordEnvSession(ctx, h.Store, req.From, &req.Issue)
	req.Session = wake.SessionStarted(h.Store, req.From, &req.Issue, strings.TrimSpace(a.getenv(envSession)))
	rec, err := h.Ask(ctx, req)
	if err != nil {
		return err
	}
	if !a.json {
		contextNotes(a.stderr, rec)
	}
	return a.later(func(ctx context.Context) error { return o.view(ctx, a, h, rec) })
}

// request checks the flags and reads the question, before anything is
// opened: a bad flag changes nothing.
func (o *askOptions) request(a *App) (router.AskRequest, error) {
	if err := checkFormat(o.format); err != nil {
		return router.AskRequest{}, err
	}
	n, err := o.issue.require(a)
	if err != nil {
		return router.AskRequest{}, err
	}
	asker, err := a.requireAgent("from", o.from)
	if err != nil {
		return router.AskRequest{}, err
	}
	given, err := brief.ParseRefs("--ref", o.refs)
	if err != nil {
		return router.AskRequest{}, usage(err)
	}
	q, err := a.text("--question", o.question)
	if err != nil {
		return router.AskRequest{}, err
	}
	return router.AskRequest{
		Issue: n, From: asker, To: o.to, Topic: o.topic, Question: q,
		NonBlocking: o.nonBlocking, Workflow: o.wf, Step: o.step, Options: o.options, Refs: given,
	}, nil
}

// view prints what came of the ask once the monitor ran: with --wait the
// answer (awaitAnswer); else the id, and an answer a responder gave at
// once (the record with --json or --format markdown).
func (o *askOptions) view(ctx context.Context, a *App, h *router.Hub, rec router.Record) error {
	rec = afterMonitor(a, rec)
	outcomeNote(a, rec)
	if !a.json {
		decidedNote(a.stderr, rec)
	}
	if o.wait {
		if !a.json && !router.Settled(rec.Clarification) {
			fmt.Fprintf(a.stderr, "%s asked; waiting up to %s for %s...\n", rec.ID, o.timeout, rec.To)
		}
		return awaitAnswer(ctx, a, h, rec, o.timeout, o.format, o.thread)
	}
	if a.json || o.format == formatMarkdown {
		return printRecord(a, rec, o.format)
	}
	a.printf("%s\n", rec.ID)
	if ans := rec.Current(ledger.Answer); rec.Status == ledger.Answered && ans != nil {
		a.printf("%s", safetext.Indent(ans.Body, safetext.Line(ans.From)+" answered: ", "  "))
		// the asker has the answer: its inbox does not deliver it again
		markSeen(ctx, a.warnIf, h.Store, cmp.Or(a.getenv("AGENTX_AGENT"), rec.From), inbox.ViaAsk, rec)
	}
	return nil
}

// contextNotes tells the asker, on stderr, what its question's context
// left out and why (a file refused, lines past the budget): the record
// says it under --json instead.
func contextNotes(w io.Writer, r router.Record) {
	if r.X == nil || r.X.Context == nil {
		return
	}
	for _, n := range r.X.Context.Omitted {
		fmt.Fprintf(w, "agentx: context: %s\n", safetext.Line(n))
	}
}

// decidedNote tells the asker, in text on stderr (stdout stays the id or
// the answer, for a script), what was decided before on the question it
// just asked, and how to proceed on one of those decisions instead of
// waiting. Under --json the record's decidedBefore says it instead.
func decidedNote(w io.Writer, r router.Record) {
	if len(r.DecidedBefore) == 0 {
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
	fmt.Fprint(w, b.String())
}

// shortCommit is a commit as git abbreviates it: 12 hex digits.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
