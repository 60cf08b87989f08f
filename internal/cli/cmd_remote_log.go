package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/workspace"
)

// remoteLogView is what agentx remote log prints: an issue's audit chain.
type remoteLogView struct {
	Issue   int             `json:"issue"`
	Remote  string          `json:"remote"`
	Ref     string          `json:"ref"`
	Offline string          `json:"offline,omitempty"` // why the ref could not be fetched: the local copy of it was read
	Changes []remote.Change `json:"changes"`           // oldest first
	More    bool            `json:"more"`              // older commits were left out (--limit)
}

// maxLogLimit bounds --limit.
const maxLogLimit = 10000

// remoteLogOptions are `agentx remote log`'s flags.
type remoteLogOptions struct {
	issue issueFlag
	limit int
}

func newRemoteLogCmd(a *App) *cobra.Command {
	o := &remoteLogOptions{}
	cmd := &cobra.Command{
		Use:   "log --issue N [--limit N]",
		Short: "Read an issue's shared audit chain: one line per commit of its ref (time, host, change), every host's changes",
		Long: `With a [remote], issue N's ledger is the commit chain of
refs/agentx/clarifications/issue-N on the remote, one commit per change made on
any host. remote log fetches that ref (not with --offline) and prints its
commits, oldest first: time, the host that made the change, and what it did.
--limit keeps the newest N (default 100). agentx events reads this machine's
event log instead. The commits come from the remote: what they say is printed
neutralised.`,
		Example: `  agentx remote log --issue 42
  agentx remote log --issue 42 --json`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	o.issue.register(cmd, "the issue whose chain to read")
	cmd.Flags().IntVar(&o.limit, "limit", 100, "keep the newest N commits")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *remoteLogOptions) run(ctx context.Context, a *App) error {
	n, err := o.issue.require(a)
	if err != nil {
		return err
	}
	if o.limit < 1 || o.limit > maxLogLimit {
		return &usageError{Err: fmt.Errorf("--limit %d: give 1 to %d", o.limit, maxLogLimit)}
	}
	ws, err := a.open()
	if err != nil {
		return err
	}
	g := gitRemote(ws)
	if g == nil {
		return &codedError{Code: ExitUsage, Msg: "no [remote] in .agentx/config.toml: there is no shared chain to read",
			Todo: "agentx remote enable origin shares the ledgers; agentx events reads this machine's event log"}
	}
	v := remoteLogView{Issue: n, Remote: g.Remote, Ref: g.Ref(n)}
	if err := fetchChain(ctx, a, ws, g, &v); err != nil {
		return err
	}
	if v.Changes, v.More, err = g.Log(ctx, n, o.limit); err != nil {
		return err
	}
	if st, err := remote.ReadSync(ws.Store, n); err == nil && st.Refused != nil {
		a.warnf("remote: %s", st.Refused.Error())
		markRefused(v.Changes, st.Refused)
	}
	slices.Reverse(v.Changes)
	return a.emit(v, func() { o.text(a, g.Name(n), v) })
}

// fetchChain fetches the issue's ref (not --offline) and brings its local
// copy up to it; the remote out of reach leaves the local copy, said in
// v.Offline.
func fetchChain(ctx context.Context, a *App, ws *workspace.Workspace, g *remote.Git, v *remoteLogView) error {
	var he *remote.HistoryError
	if remote.Of(ws.Store).Offline() {
		v.Offline = "--offline"
	} else if _, err := g.Fetch(ctx, v.Issue); errors.Is(err, remote.ErrOffline) {
		v.Offline = err.Error()
		a.warnf("remote: %s: reading the local copy of %s", safetext.Line(err.Error()), v.Ref)
	} else if err != nil {
		return err
	} else if _, err := remote.Of(ws.Store).Sync(ctx, v.Issue, nil); err != nil && !errors.As(err, &he) {
		a.warnf("remote: %v", err) // a refusal is marked below
	}
	return nil
}

// markRefused marks in changes the commit this host refuses.
func markRefused(changes []remote.Change, r *remote.Refusal) {
	for i, c := range changes {
		switch {
		case c.Commit == r.Commit:
			changes[i].Refused = r.Why
		case r.Commit == "" && c.Commit == r.Found:
			changes[i].Refused = "the ref was moved back here, off this host's " + r.Settled
		}
	}
}

// text prints the chain named name for a person.
func (o *remoteLogOptions) text(a *App, name string, v remoteLogView) {
	if len(v.Changes) == 0 {
		a.printf("%s: no changes\n", safetext.Line(name))
		return
	}
	if v.More {
		a.printf("(older changes left out: --limit)\n")
	}
	for _, c := range v.Changes {
		host := c.Host
		if host == "" {
			host = "-"
		}
		line := fmt.Sprintf("%s  %-20s %s", c.Time.UTC().Format(time.RFC3339), host, c.Message)
		if c.Refused != "" {
			line += "  [REFUSED: " + c.Refused + "]"
		}
		a.printf("%s\n", safetext.Line(line))
	}
}
