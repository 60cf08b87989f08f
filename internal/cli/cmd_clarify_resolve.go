package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// resolveOptions are `agentx clarify resolve`'s flags and argument.
type resolveOptions struct {
	id              string
	from, as, body  string
	summary, format string
	option          int
}

func newResolveCmd(a *App) *cobra.Command {
	o := &resolveOptions{}
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
			o.id = args[0]
			return o.run(ctx, a, cmd)
		}),
	}
	cmd.Flags().StringVar(&o.from, "from", "", "the asker, or human (default $AGENTX_AGENT, else the asker)")
	cmd.Flags().StringVar(&o.as, "as", "", "the person resolving as human (implies --from human; default: git user.email, user.name, $USER)")
	cmd.Flags().StringVar(&o.body, "body", "", "the resolution or decision, at most 3000 bytes (default: the last answer); with --option, a note after the option")
	cmd.Flags().IntVar(&o.option, "option", 0, "pick option N of the escalation's (or the question's) options (1-based)")
	cmd.Flags().StringVar(&o.summary, "summary", "", "what was decided, in one or two sentences (at most 400 bytes; default: the first sentence of the resolution)")
	formatFlag(cmd, &o.format)
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *resolveOptions) run(ctx context.Context, a *App, cmd *cobra.Command) error {
	r, err := reply(a, cmd, o.body, o.option)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("summary") {
		r.Summary = strings.TrimSpace(o.summary)
		if err := ledger.ValidateSummary("--summary", r.Summary); err != nil {
			return err // before the lock: nothing is written
		}
	}
	return act(a, o.format, func(h *router.Hub) (router.Record, error) {
		return o.resolve(ctx, a, h, r)
	})
}

// resolve closes the clarification as who resolves it, and marks it seen
// by them.
func (o *resolveOptions) resolve(ctx context.Context, a *App, h *router.Hub, r router.Reply) (router.Record, error) {
	from := o.from
	if from == "" && o.as == "" && a.getenv(router.EnvAgent) == "" {
		// only a person closes an escalated one: a person's
		// shell closes it as human, confirmed before the lock
		if rec, gerr := h.Get(o.id); gerr == nil && rec.Status == ledger.Escalated {
			from = ledger.Human
		}
	}
	who, err := a.claimAs(from, o.as)
	if err != nil {
		return router.Record{}, err
	}
	if err := a.named(ctx, h, o.id, true); err != nil {
		return router.Record{}, err
	}
	rec, err := h.ResolveReply(ctx, o.id, who, r)
	if err == nil {
		markResolved(ctx, a.warnIf, h.Store, rec)
	}
	return rec, err
}
