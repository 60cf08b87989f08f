package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/workflow"
)

// remoteEnableOptions are `agentx remote enable`'s flag and argument.
type remoteEnableOptions struct {
	name, branch string
}

func newRemoteEnableCmd(a *App) *cobra.Command {
	o := &remoteEnableOptions{}
	cmd := &cobra.Command{
		Use:     "enable NAME",
		Short:   "Share this workspace's ledgers on git remote NAME (checks it, fetches, publishes)",
		Example: `  agentx remote enable origin`,
		Args:    cobra.ExactArgs(1),
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().StringVar(&o.branch, "branch", "", "keep the ledgers on branches BRANCH/issue-N instead of custom refs (for hosts that refuse refs outside refs/heads)")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *remoteEnableOptions) run(ctx context.Context, a *App) error {
	if !workflow.ValidGitRemote(o.name) {
		return &usageError{Err: fmt.Errorf("%q is not a git remote: give a remote's name (git remote -v) or a URL", safetext.Line(o.name))}
	}
	ws, g, err := o.configure(ctx, a)
	if err != nil {
		return err
	}
	rep := remote.Of(ws.Store)
	r, err := remote.Refresh(ctx, rep, g, true)
	if err != nil {
		return err
	}
	v := remoteView{Enabled: true, Remote: g.Remote, Refs: g.Refs, Offline: r.Offline, Updated: r.Updated, Sent: []int{}}
	if v.Sent, err = publish(ctx, ws, g, rep); err != nil {
		return err
	}
	if v.Pending, err = outbox(ws.Store); err != nil {
		return err
	}
	return a.emit(v, func() {
		a.printf("remote %s: the ledgers are shared under %s (%s fetched, %d published)\n", safetext.Line(g.Remote), g.Refs, words.Count(len(v.Updated), "issue", "issues"), len(v.Sent))
	})
}

// configure checks that the remote answers and, unless config.toml has
// it already, adds the [remote] table and opens the workspace again with it.
func (o *remoteEnableOptions) configure(ctx context.Context, a *App) (*workspace.Workspace, *remote.Git, error) {
	ws, err := a.open()
	if err != nil {
		return nil, nil, err
	}
	if cur := ws.Rules.Config.Remote; cur != nil && (cur.Git != o.name || cur.Branch != o.branch) {
		return nil, nil, &codedError{Code: ExitUsage, Msg: fmt.Sprintf("%s already has [remote] git = %q: edit it there to change it", ws.Rules.Config.File, cur.Git)}
	}
	cfg := &workflow.RemoteConfig{Git: o.name, Branch: o.branch, Interval: workflow.Duration{Duration: workflow.DefaultRemoteInterval},
		Timeout: workflow.Duration{Duration: workflow.DefaultRemoteTimeout}, Attempts: workflow.DefaultRemoteAttempts}
	g := remote.New(ws.Root, cfg)
	if _, err := g.Check(ctx); err != nil {
		return nil, nil, err
	}
	if ws.Rules.Config.Remote != nil {
		return ws, g, nil
	}
	if err := appendRemote(ws, o.name, o.branch); err != nil {
		return nil, nil, err
	}
	a.ws = nil
	if ws, err = a.open(); err != nil {
		return nil, nil, err
	}
	if g = gitRemote(ws); g == nil {
		return nil, nil, errors.New("the [remote] table did not take")
	}
	return ws, g, nil
}

// publish publishes the ledgers the remote does not hold, and lists those
// it reached.
func publish(ctx context.Context, ws *workspace.Workspace, g *remote.Git, rep *remote.Replicator) ([]int, error) {
	sent := []int{}
	heads, err := g.Local(ctx)
	if err != nil {
		return sent, err
	}
	issues, err := ws.Store.Issues()
	if err != nil {
		return sent, err
	}
	for _, n := range issues {
		if heads[n] != "" {
			continue
		}
		reached, err := rep.Sync(ctx, n, nil)
		if err != nil {
			return sent, err
		}
		if reached {
			sent = append(sent, n)
		}
	}
	return sent, nil
}

// appendRemote adds the [remote] table to config.toml (creating it if
// need be), then checks the result loads.
func appendRemote(ws *workspace.Workspace, name, branch string) error {
	path := filepath.Join(ws.Dir, "config.toml")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var b strings.Builder
	b.Write(data)
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n# The ledgers are shared through git refs on this remote (docs/remote.md).\n[remote]\ngit = %q\n", name)
	if branch != "" {
		fmt.Fprintf(&b, "branch = %q\n", branch)
	}
	if _, err := workflow.ParseConfig(path, []byte(b.String())); err != nil {
		return err
	}
	return atomicfile.Write(path, []byte(b.String()), 0o644)
}
