package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// listOptions are `agentx clarify list`'s flags (bare `agentx clarify`
// takes them too).
type listOptions struct {
	issue    issueFlag
	statuses []string
	agent    string
	all      bool
}

func newClarifyListCmd(a *App) *cobra.Command {
	o := &listOptions{}
	cmd := &cobra.Command{
		Use:   "list [--issue N] [--status S]... [--agent A] [--all]",
		Short: "List clarifications (open ones unless --all or --status)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	o.issue.register(cmd, "only this issue")
	cmd.Flags().StringSliceVar(&o.statuses, "status", nil, "only these statuses (repeatable or comma-separated)")
	cmd.Flags().StringVar(&o.agent, "agent", "", "only where this agent asks or is asked")
	cmd.Flags().BoolVar(&o.all, "all", false, "include resolved and abandoned")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *listOptions) run(ctx context.Context, a *App) error {
	f, err := o.filter(a)
	if err != nil {
		return err
	}
	a.wide = true
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	// list the state the monitor leaves
	return a.later(func(ctx context.Context) error { return listClarifications(ctx, a, h, f) })
}

// filter is the filter the flags ask for.
func (o *listOptions) filter(a *App) (router.Filter, error) {
	n, err := o.issue.get(a)
	if err != nil {
		return router.Filter{}, err
	}
	f := router.Filter{Issue: n, Agent: o.agent, All: o.all}
	for _, s := range o.statuses {
		st := ledger.Status(s)
		if !st.Valid() {
			return router.Filter{}, &usageError{Err: fmt.Errorf("--status %q: use one of pending, answered, stale, escalated, resolved, abandoned", s)}
		}
		f.Statuses = append(f.Statuses, st)
	}
	return f, nil
}

// listClarifications prints the records f selects as each ledger is read, one ledger at
// a time (Hub.Each): a list of every ledger keeps at most the table's
// cells, never the ledgers.
func listClarifications(ctx context.Context, a *App, h *router.Hub, f router.Filter) error {
	var errs []error
	lw, rows := newListWriter(a.stdout, a.now(), a.isTTY, a.paint), 0
	err := emitEach(a, func(put func(recordView) error) error {
		var err error
		errs, err = h.Each(f, func(r router.Record) error {
			if err := ctx.Err(); err != nil {
				return err // interrupted, or the reader went away
			}
			return put(viewOf(r))
		})
		return err
	}, func(v recordView) error {
		rows++
		lw.add(v.Record)
		return nil
	}, func() {
		if rows == 0 {
			emptyList(a, h, f)
			return
		}
		_ = lw.flush()
	})
	for _, e := range errs {
		a.warnf("skipped %v", e)
	}
	return err
}

// emptyList says why a list of open clarifications is empty. On a
// terminal: "No clarifications to show."; then, when only open ones were
// asked for, on stderr (stdout stays empty for a script: a line for the
// person at the terminal), how many closed ones there are (with --issue:
// that ledger is read once more) and the command that lists them.
func emptyList(a *App, h *router.Hub, f router.Filter) {
	if a.isTTY {
		a.printf("No clarifications to show.\n")
	}
	if f.All || len(f.Statuses) > 0 {
		return
	}
	if f.Issue == nil {
		fmt.Fprintln(a.stderr, "No open clarifications; closed ones (resolved or abandoned): agentx clarify list --all")
		return
	}
	cmd := fmt.Sprintf("agentx clarify list --issue %d --all", *f.Issue)
	where := " " + words.OnIssue(*f.Issue)
	closed := 0
	all := f
	all.All = true
	if _, err := h.Each(all, func(router.Record) error { closed++; return nil }); err != nil || closed == 0 {
		if err == nil {
			fmt.Fprintf(a.stderr, "No clarifications%s.\n", where)
		}
		return
	}
	fmt.Fprintf(a.stderr, "No open clarifications%s; %d closed (resolved or abandoned): %s\n", where, closed, cmd)
}
