package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// answerOptions are `agentx clarify answer`'s flags and argument.
type answerOptions struct {
	id           string
	from, as     string
	body, format string
	option       int
}

func newAnswerCmd(a *App) *cobra.Command {
	o := &answerOptions{}
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
			o.id = args[0]
			return o.run(ctx, a, cmd)
		}),
	}
	cmd.Flags().StringVar(&o.from, "from", "", "who answers: the asked agent, or human (default $AGENTX_AGENT, else the asked agent)")
	cmd.Flags().StringVar(&o.as, "as", "", "the person answering as human (implies --from human; default: git user.email, user.name, $USER)")
	cmd.Flags().StringVar(&o.body, "body", "", "the answer, at most 3000 bytes (default: read stdin); with --option, a note after the option")
	cmd.Flags().IntVar(&o.option, "option", 0, "pick option N of the question's options (1-based)")
	formatFlag(cmd, &o.format)
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *answerOptions) run(ctx context.Context, a *App, cmd *cobra.Command) error {
	r, err := reply(a, cmd, o.body, o.option)
	if err != nil {
		return err
	}
	return act(a, o.format, func(h *router.Hub) (router.Record, error) {
		who, err := o.who(ctx, a, h)
		if err != nil {
			return router.Record{}, err
		}
		return h.AnswerReply(ctx, o.id, who, r)
	})
}

// who is who answers: --from or --as as claimed, else, for a question to
// human, the person (confirmed now, not under the ledger's lock).
func (o *answerOptions) who(ctx context.Context, a *App, h *router.Hub) (string, error) {
	who, err := a.claimAs(o.from, o.as)
	if err != nil {
		return "", err
	}
	if err := a.named(ctx, h, o.id, true); err != nil {
		return "", err
	}
	if who == "" {
		if rec, gerr := h.Get(o.id); gerr == nil && rec.To == ledger.Human {
			return a.claim("from", ledger.Human)
		}
	}
	return who, nil
}
