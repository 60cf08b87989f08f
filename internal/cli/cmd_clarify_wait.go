package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/router"
)

// waitOptions are `agentx clarify wait`'s flags and argument.
type waitOptions struct {
	id      string
	timeout time.Duration
	format  string
	thread  bool // --format given: print the thread
}

func newWaitCmd(a *App) *cobra.Command {
	o := &waitOptions{}
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
			o.id, o.thread = args[0], cmd.Flags().Changed("format")
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long to wait")
	formatFlag(cmd, &o.format)
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *waitOptions) run(ctx context.Context, a *App) error {
	return actWait(ctx, a, o.format, o.thread, o.timeout, func(h *router.Hub) (router.Record, error) {
		if err := a.named(ctx, h, o.id, false); err != nil {
			return router.Record{}, err
		}
		return h.Get(o.id)
	})
}
