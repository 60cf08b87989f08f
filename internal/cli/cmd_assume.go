package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/safetext"
)

func newAssumeCmd(a *App) *cobra.Command {
	var from, assumption string
	cmd := &cobra.Command{
		Use:   "assume ID --assumption TEXT [--from A]",
		Short: "Record the assumption you proceed on while your question is unanswered",
		Long: `Record what you, the asker, proceed on while your question has no answer
(after "clarify wait" timed out, say). The question stays open. If an answer
comes later, "agentx inbox" delivers it marked late with this assumption
beside it, so you can check whether your work still holds.`,
		Example: `  agentx clarify assume CLR-42-001 --assumption "SQLite for local dev, as the README says"`,
		Args:    cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			text, err := a.text("--assumption", assumption)
			if err != nil {
				return err
			}
			who, err := a.claim("from", from)
			if err != nil {
				return err
			}
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			if err := a.named(ctx, h, args[0], true); err != nil {
				return err
			}
			rec, err := h.Assume(ctx, args[0], who, text)
			if err != nil {
				return err
			}
			return a.emit(rec, func() {
				x := rec.Ext()
				last := x.Assumptions[len(x.Assumptions)-1]
				a.printf("%s: %s's assumption recorded (round %d); the question stays %s.\n", rec.ID, safetext.Line(last.By), last.Round, safetext.Line(string(rec.Status)))
			})
		}),
	}
	cmd.Flags().StringVar(&from, "from", "", "the asker (default $AGENTX_AGENT, else the asker)")
	cmd.Flags().StringVar(&assumption, "assumption", "", "what you proceed on, at most 3000 bytes (default: read stdin)")
	return cmd
}
