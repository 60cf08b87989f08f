package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/router"
)

// assumeOptions are `agentx clarify assume`'s flags and argument.
type assumeOptions struct {
	id                      string
	byID                    bool // an id was given (else --issue)
	from, assumption, reuse string
	issue                   issueFlag
}

func newAssumeCmd(a *App) *cobra.Command {
	o := &assumeOptions{}
	cmd := &cobra.Command{
		Use:   "assume ID (--assumption TEXT | --reuse CLR-N-NNN) [--from A]",
		Short: "Record the assumption you proceed on while your question is unanswered, or the earlier decision you reuse",
		Long: `Record what you, the asker, proceed on while your question has no answer
(after "clarify wait" timed out, say). The question stays open. If an answer
comes later, "agentx inbox" delivers it marked late with this assumption
beside it, so you can check whether your work still holds.

--reuse CLR-N-NNN proceeds on an earlier decision instead: a resolved
clarification that asked the same thing, as "clarify ask" lists them under
"Decided before". The assumption cites it (its id and summary; --assumption
adds your own words). The question stays open, and "agentx todo" and the
desk show the reuse to a person, who overturns it by answering the question:
the answer reaches you late, beside the reuse, as any answer to an assumed
question does. Without ID, --issue N names your newest open question on
issue N.`,
		Example: `  agentx clarify assume CLR-42-001 --assumption "SQLite for local dev, as the README says"
  agentx clarify assume CLR-7-001 --reuse CLR-42-003
  agentx clarify assume --issue 7 --reuse CLR-42-003`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if o.byID = len(args) == 1; o.byID {
				o.id = args[0]
			}
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().StringVar(&o.from, "from", "", "the asker (default $AGENTX_AGENT, else the asker)")
	cmd.Flags().StringVar(&o.assumption, "assumption", "", "what you proceed on, at most 3000 bytes (default: read stdin); with --reuse, your own words beside the decision")
	cmd.Flags().StringVar(&o.reuse, "reuse", "", "proceed on the decision of this resolved clarification (clarify ask lists them under \"Decided before\")")
	o.issue.register(cmd, "with --reuse and no ID: your newest open question on this issue")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *assumeOptions) run(ctx context.Context, a *App) error {
	if !o.byID && o.reuse == "" {
		return &usageError{Err: fmt.Errorf("give the id of your open question (ID), or --reuse with --issue N")}
	}
	text := o.assumption
	if o.reuse == "" {
		var err error
		if text, err = a.text("--assumption", o.assumption); err != nil {
			return err
		}
	}
	who, err := a.claim("from", o.from)
	if err != nil {
		return err
	}
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	id, err := o.question(ctx, a, h, who)
	if err != nil {
		return err
	}
	var rec router.Record
	if o.reuse != "" {
		rec, err = h.Reuse(ctx, id, who, o.reuse, text)
	} else {
		rec, err = h.Assume(ctx, id, who, text)
	}
	if err != nil {
		return err
	}
	return a.emit(rec, func() { printAssumed(a, rec) })
}

// question is the id of the question assumed on: the one named, else
// who's newest open question on --issue N; checked to name it (named).
func (o *assumeOptions) question(ctx context.Context, a *App, h *router.Hub, who string) (string, error) {
	id := o.id
	if !o.byID {
		n, err := o.issue.require(a)
		if err != nil {
			return "", err
		}
		if id, err = newestOpen(h, n, who); err != nil {
			return "", err
		}
	}
	return id, a.named(ctx, h, id, true)
}

// printAssumed says what was recorded: the reuse of a decision, or the
// assumption.
func printAssumed(a *App, rec router.Record) {
	x := rec.Ext()
	last := x.Assumptions[len(x.Assumptions)-1]
	if last.Reuses != nil {
		a.printf("%s: %s reuses the decision of %s (round %d): %s\nThe question stays %s; a person sees the reuse in \"agentx todo\" and overturns it by answering %s.\n",
			rec.ID, safetext.Line(last.By), safetext.Line(last.Reuses.ID), last.Round, safetext.Line(last.Reuses.Summary), safetext.Line(string(rec.Status)), rec.ID)
		return
	}
	a.printf("%s: %s's assumption recorded (round %d); the question stays %s.\n", rec.ID, safetext.Line(last.By), last.Round, safetext.Line(string(rec.Status)))
}

// newestOpen is the id of asker's newest open question on issue n (any
// asker when asker is ""), from the index.
func newestOpen(h *router.Hub, n int, asker string) (string, error) {
	es, err := h.Store.OpenEntries(n)
	if err != nil {
		return "", err
	}
	for k := len(es) - 1; k >= 0; k-- {
		if asker == "" || es[k].From == asker {
			return es[k].ID, nil
		}
	}
	who := "you have"
	if asker != "" {
		who = asker + " has"
	}
	return "", &usageError{Err: fmt.Errorf("%s no open question on issue #%d: give the id of the question the decision stands in for", who, n)}
}
