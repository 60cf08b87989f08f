package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/router"
)

// followupOptions are `agentx clarify followup`'s flags and argument.
type followupOptions struct {
	id                 string
	from, body, format string
	wait               bool
	timeout            time.Duration
	thread             bool // --format given: --wait prints the thread
}

func newFollowupCmd(a *App) *cobra.Command {
	o := &followupOptions{}
	cmd := &cobra.Command{
		Use:   "followup ID [--from A] [--body TEXT | stdin]",
		Short: "Ask the next round; at the round limit the clarification escalates instead",
		Args:  cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.id, o.thread = args[0], cmd.Flags().Changed("format")
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().StringVar(&o.from, "from", "", "the asking agent (default $AGENTX_AGENT, else the asker)")
	cmd.Flags().StringVar(&o.body, "body", "", "the follow-up question, at most 3000 bytes (default: read stdin)")
	cmd.Flags().BoolVar(&o.wait, "wait", false, "wait for the answer and print it alone (--format: the thread); exit 8 and the id when none comes")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long --wait waits")
	formatFlag(cmd, &o.format)
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *followupOptions) run(ctx context.Context, a *App) error {
	text, err := a.text("--body", o.body)
	if err != nil {
		return err
	}
	who, err := a.claim("from", o.from)
	if err != nil {
		return err
	}
	followup := func(h *router.Hub) (router.Record, error) {
		if err := a.named(ctx, h, o.id, true); err != nil {
			return router.Record{}, err
		}
		return h.Followup(ctx, o.id, who, text)
	}
	if o.wait {
		return actWait(ctx, a, o.format, o.thread, o.timeout, followup)
	}
	_, rec, err := action(a, o.format, followup)
	if err != nil {
		return err
	}
	return a.later(func(context.Context) error {
		rec := afterMonitor(a, rec)
		outcomeNote(a, rec)
		return printRecord(a, rec, o.format)
	})
}
