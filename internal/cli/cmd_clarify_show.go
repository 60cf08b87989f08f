package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/router"
)

// showOptions are `agentx clarify show`'s flags and argument.
type showOptions struct {
	issue  issueFlag
	format string
	id     string
	byID   bool // an id was given (else --issue)
}

func newShowCmd(a *App) *cobra.Command {
	o := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show ID | show --issue N",
		Short: "Show a clarification's thread, or every thread of an issue",
		Args:  cobra.MaximumNArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if o.byID = len(args) == 1; o.byID {
				o.id = args[0]
			}
			return o.run(ctx, a)
		}),
	}
	o.issue.register(cmd, "show every thread of this issue")
	formatFlag(cmd, &o.format)
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *showOptions) run(ctx context.Context, a *App) error {
	if err := checkFormat(o.format); err != nil {
		return err
	}
	n, err := o.issue.get(a)
	if err != nil {
		return err
	}
	if o.byID == (o.issue.raw != "") || (!o.byID && n == nil) {
		return &usageError{Err: fmt.Errorf("give a clarification id or --issue N (not both)")}
	}
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	// show the state the monitor leaves
	if o.byID {
		if err := a.named(ctx, h, o.id, false); err != nil {
			return err
		}
		return a.later(func(ctx context.Context) error { return o.showOne(ctx, a, h) })
	}
	a.gateIssue(ctx, h, n)
	return a.later(func(ctx context.Context) error { return o.showIssue(ctx, a, h, *n) })
}

// showOne prints the clarification named, with its receipts, marked seen
// by this process's agent.
func (o *showOptions) showOne(ctx context.Context, a *App, h *router.Hub) error {
	rec, err := h.Get(o.id)
	if err != nil {
		return err
	}
	markSeen(ctx, a.warnIf, h.Store, a.getenv("AGENTX_AGENT"), inbox.ViaShow, rec)
	return printDelivered(a, h.Store, rec, o.format)
}

// showIssue prints every thread of issue n, with their receipts, marked
// seen by this process's agent.
func (o *showOptions) showIssue(ctx context.Context, a *App, h *router.Hub, n int) error {
	recs, err := h.Issue(n)
	if err != nil {
		return err
	}
	markSeen(ctx, a.warnIf, h.Store, a.getenv("AGENTX_AGENT"), inbox.ViaShow, recs...)
	shown := make([]recordView, len(recs))
	for i, r := range recs {
		shown[i] = withReceipts(h.Store, r, a.warnIf)
	}
	return a.emit(shown, func() {
		if len(recs) == 0 {
			a.printf("No clarifications %s.\n", words.OnIssue(n))
		}
		for i, r := range recs {
			if i > 0 {
				a.printf("\n")
			}
			if o.format == formatMarkdown {
				renderMarkdown(a.stdout, r)
			} else {
				renderThread(a.stdout, a.paint, r, shown[i].Delivery)
				renderCard(a.stdout, a.hb, r)
			}
		}
	})
}
