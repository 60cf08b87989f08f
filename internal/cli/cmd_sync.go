package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
)

// syncOptions are `agentx sync`'s flags.
type syncOptions struct {
	status, republish bool
}

func newSyncCmd(a *App) *cobra.Command {
	o := &syncOptions{}
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "With a [remote]: fetch every issue's ref, deliver the outbox; --status shows what is pending",
		Long: `With a [remote] table in .agentx/config.toml, every change is published on the
remote as it is made; a change made while the remote could not be reached is
kept in the outbox (reported "unsynced") and delivered by the next command
that reaches it, or by agentx sync. sync fetches every issue's ref now
(regardless of the interval), makes it the local copy and delivers the
outbox. --status makes no call to the remote: it lists what the outbox holds,
and what became of queued changes another host had overtaken (renumbered,
superseded). --republish puts this host's chain back on every issue's ref
this host refuses (moved back by a restored backup or a force push, deleted
by git push --mirror, or given a commit that does not only append): what the
other chain added since is kept, renumbered if need be, and the push leases
the ref at what was found. See docs/remote.md.`,
		Example: `  agentx sync
  agentx sync --status --json
  agentx sync --republish`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().BoolVar(&o.status, "status", false, "show what the outbox holds, with no call to the remote")
	cmd.Flags().BoolVar(&o.republish, "republish", false, "put this host's chain back on the refs it refuses (moved back, deleted, rewritten)")
	cmd.MarkFlagsMutuallyExclusive("status", "republish")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *syncOptions) run(ctx context.Context, a *App) error {
	// The hub (without the refresh: sync fetches below, forced) lets
	// the lifecycle's last step wake an agent with an answer pulled.
	ws, _, err := a.openHub(false)
	if err != nil {
		return err
	}
	v := remoteView{Updated: []int{}, Sent: []int{}}
	g := gitRemote(ws)
	if g != nil {
		v.Enabled, v.Remote, v.Refs = true, g.Remote, g.Refs
		if !o.status {
			if err := o.fetch(ctx, a, ws, g, &v); err != nil {
				return err
			}
		}
	}
	if v.Pending, err = outbox(ws.Store); err != nil {
		return err
	}
	if err := a.emit(v, func() { o.text(a, v) }); err != nil {
		return err
	}
	return o.failure(a, ws, g, v)
}

// fetch fetches every issue's ref now, delivers the outbox and, with
// --republish, puts this host's chain back on the refs it refuses.
func (o *syncOptions) fetch(ctx context.Context, a *App, ws *workspace.Workspace, g *remote.Git, v *remoteView) error {
	rep := remote.Of(ws.Store)
	r, err := remote.Refresh(ctx, rep, g, true)
	if err != nil {
		return err
	}
	v.Offline, v.Updated, v.Sent = r.Offline, r.Updated, r.Delivered
	if rep.Offline() {
		v.Offline = "--offline"
	}
	for _, p := range r.Problems {
		a.warnf("remote: %s", p)
	}
	if o.republish && v.Offline == "" {
		if v.Republished, err = republishAll(ctx, ws.Store); err != nil {
			return err
		}
	}
	return nil
}

// failure is sync's failure, once printed: the remote out of reach, a
// ref this host refuses, or a queued change another host overtook.
func (o *syncOptions) failure(a *App, ws *workspace.Workspace, g *remote.Git, v remoteView) error {
	if !o.status && v.Offline != "" {
		return &codedError{Code: ExitFailure, Msg: "remote " + v.Remote + ": " + v.Offline + ": the outbox is kept", Quiet: !a.json,
			Todo: "agentx sync again once the remote can be reached"}
	}
	if !o.status && g != nil {
		// A ref this host refuses (moved back, deleted, rewritten)
		// and did not put back is sync's failure: exit 7.
		he, err := refused(ws.Store)
		if err != nil {
			return err
		}
		if he != nil {
			return he
		}
	}
	// Delivering is sync's work: a queued change another host
	// overtook is its failure (the stderr lines say which).
	for _, ov := range a.overtaken() {
		if ov.Outcome == remote.OutcomeSuperseded {
			return &codedError{Code: ExitSuperseded, Msg: fmt.Sprintf("%s was not delivered: another host changed %s first", ov.Message, ov.ID), Quiet: !a.json,
				Todo: fmt.Sprintf("agentx clarify show %s reads what the other host did", ov.ID)}
		}
	}
	return nil
}

// refused returns the first refusal an issue's sync state records (nil:
// none): a shared version this host does not adopt.
func refused(store *ledger.Store) (*remote.HistoryError, error) {
	_, first, err := refusedIssues(store)
	return first, err
}

// refusedIssues lists the issues whose sync state records a refusal,
// with the first of them.
func refusedIssues(store *ledger.Store) ([]int, *remote.HistoryError, error) {
	issues, err := store.IssuesWithFile(remote.SyncDir)
	if err != nil {
		return nil, nil, err
	}
	var out []int
	var first *remote.HistoryError
	for _, n := range issues {
		st, err := remote.ReadSync(store, n)
		if err != nil {
			return nil, nil, err
		}
		if st.Refused != nil {
			out = append(out, n)
			if first == nil {
				first = &st.Refused.HistoryError
			}
		}
	}
	return out, first, nil
}

// republishAll runs remote.Republish on every issue whose sync state
// records a refusal.
func republishAll(ctx context.Context, store *ledger.Store) ([]remote.Republished, error) {
	issues, _, err := refusedIssues(store)
	if err != nil {
		return nil, err
	}
	out := []remote.Republished{}
	for _, n := range issues {
		r, err := remote.Of(store).Republish(ctx, n)
		if errors.Is(err, remote.ErrNothingRefused) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("issue %d: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// text prints v for a person.
func (o *syncOptions) text(a *App, v remoteView) {
	if !v.Enabled {
		a.printf("no [remote] in .agentx/config.toml: the ledgers are this machine's alone (agentx remote enable origin shares them)\n")
		return
	}
	printRepublished(a.stdout, v.Republished)
	if !o.status {
		switch {
		case v.Offline != "":
			a.printf("remote %s: not reached (%s)\n", safetext.Line(v.Remote), safetext.Line(v.Offline))
		default:
			a.printf("remote %s: %s updated, %s delivered\n", safetext.Line(v.Remote), words.Count(len(v.Updated), "issue", "issues"), words.Count(len(v.Sent), "outbox", "outboxes"))
		}
	}
	printPending(a.stdout, v.Pending)
}

// printRepublished prints what sync --republish put back.
func printRepublished(w io.Writer, republished []remote.Republished) {
	for _, r := range republished {
		was := r.Was
		if was == "" {
			was = "a deleted ref"
		}
		fmt.Fprintf(w, "%s: republished %s over %s\n", words.IssueRef(r.Issue), r.Head, was)
		for _, n := range r.Renumbered {
			fmt.Fprintf(w, "  kept from the other chain: %s\n", safetext.Line(n))
		}
		for _, id := range r.Superseded {
			fmt.Fprintf(w, "  superseded on the other chain: %s (this host's copy had moved on)\n", safetext.Line(id))
		}
	}
}

// printPending prints what the outbox holds, and what became of queued
// changes delivered otherwise than made.
func printPending(w io.Writer, pending []pendingIssue) {
	n := 0
	for _, p := range pending {
		n += len(p.Changes)
	}
	if n == 0 {
		fmt.Fprintf(w, "outbox: empty\n")
	} else {
		fmt.Fprintf(w, "outbox: %s unsynced\n", words.Count(n, "change", "changes"))
	}
	for _, p := range pending {
		for _, c := range p.Changes {
			fmt.Fprintf(w, "  %s  %s  %s  (%s)\n", words.IssueRef(p.Issue), c.At.UTC().Format(time.RFC3339), safetext.Line(c.Message), safetext.Line(c.Why))
		}
	}
	for _, p := range pending {
		for _, out := range p.Outcomes {
			switch out.Outcome {
			case remote.OutcomeRenumbered:
				fmt.Fprintf(w, "  %s  %s: delivered as %s (another host had taken %s): %s\n", words.IssueRef(p.Issue), safetext.Line(out.ID), safetext.Line(out.As), safetext.Line(out.ID), safetext.Line(out.Message))
			default:
				fmt.Fprintf(w, "  %s  %s: superseded (another host changed it first): %s\n", words.IssueRef(p.Issue), safetext.Line(out.ID), safetext.Line(out.Message))
			}
		}
	}
}
