package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/router"
)

// cancelOptions are `agentx clarify cancel`'s flags and argument.
type cancelOptions struct {
	id, from, as string
}

func newCancelCmd(a *App) *cobra.Command {
	o := &cancelOptions{}
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
			o.id = args[0]
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().StringVar(&o.from, "from", "", "the asker (default: $AGENTX_AGENT; from a shell launched as no agent, human)")
	cmd.Flags().StringVar(&o.as, "as", "", "the person withdrawing it as human (default: git user.email, user.name, $USER)")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *cancelOptions) run(ctx context.Context, a *App) error {
	return act(a, formatText, func(h *router.Hub) (router.Record, error) {
		who, err := a.claimAs(personDefault(a.getenv, o.from), o.as)
		if err != nil {
			return router.Record{}, err
		}
		if err := a.named(ctx, h, o.id, true); err != nil {
			return router.Record{}, err
		}
		return h.Cancel(ctx, o.id, who)
	})
}
