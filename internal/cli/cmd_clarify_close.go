package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/router"
)

// closeOptions are `agentx clarify escalate` and `abandon`'s flags and
// argument: the two differ only in the call.
type closeOptions struct {
	name                   string // escalate or abandon
	id, reason, format, as string
}

// newCloseCmd builds escalate and abandon, which differ only in the call.
func newCloseCmd(a *App, name, short string) *cobra.Command {
	o := &closeOptions{name: name}
	cmd := &cobra.Command{
		Use:   name + " ID [--reason TEXT]",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.id = args[0]
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().StringVar(&o.reason, "reason", "", "why")
	if name == "abandon" {
		cmd.Flags().StringVar(&o.as, "as", "", "the person abandoning it (default: git user.email, user.name, $USER)")
	}
	formatFlag(cmd, &o.format)
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *closeOptions) run(ctx context.Context, a *App) error {
	return act(a, o.format, func(h *router.Hub) (router.Record, error) {
		if err := a.named(ctx, h, o.id, true); err != nil {
			return router.Record{}, err
		}
		if o.name == "escalate" {
			return h.Escalate(ctx, o.id, o.reason)
		}
		by, err := a.claimAs(personDefault(a.getenv, ""), o.as)
		if err != nil {
			return router.Record{}, err
		}
		return h.Abandon(ctx, o.id, by, o.reason)
	})
}
