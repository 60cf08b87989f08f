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

func newRemoteLogCmd(a *App) *cobra.Command {
	var (
		issue issueFlag
		limit int
	)
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
			n, err := issue.require(a)
			if err != nil {
				return err
			}
			if limit < 1 || limit > maxLogLimit {
				return &usageError{Err: fmt.Errorf("--limit %d: give 1 to %d", limit, maxLogLimit)}
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
			var he *remote.HistoryError
			if remote.Of(ws.Store).Offline() {
				v.Offline = "--offline"
			} else if _, err := g.Fetch(ctx, n); errors.Is(err, remote.ErrOffline) {
				v.Offline = err.Error()
				a.warnf("remote: %s: reading the local copy of %s", safetext.Line(err.Error()), v.Ref)
			} else if err != nil {
				return err
			} else if _, err := remote.Of(ws.Store).Sync(ctx, n, nil); err != nil && !errors.As(err, &he) {
				a.warnf("remote: %v", err) // a refusal is marked below
			}
			if v.Changes, v.More, err = g.Log(ctx, n, limit); err != nil {
				return err
			}
			if st, err := remote.ReadSync(ws.Store, n); err == nil && st.Refused != nil {
				a.warnf("remote: %s", st.Refused.Error())
				for i, c := range v.Changes {
					switch {
					case c.Commit == st.Refused.Commit:
						v.Changes[i].Refused = st.Refused.Why
					case st.Refused.Commit == "" && c.Commit == st.Refused.Found:
						v.Changes[i].Refused = "the ref was moved back here, off this host's " + st.Refused.Settled
					}
				}
			}
			slices.Reverse(v.Changes)
			return a.emit(v, func() {
				if len(v.Changes) == 0 {
					a.printf("%s: no changes\n", safetext.Line(g.Name(n)))
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
			})
		}),
	}
	issue.register(cmd, "the issue whose chain to read")
	cmd.Flags().IntVar(&limit, "limit", 100, "keep the newest N commits")
	return cmd
}
