package full

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/channels/slackmode"
	"github.com/agentx-cli/agentx/internal/cli/ext"
	"github.com/agentx-cli/agentx/router"
)

// run is the full binary's part of one run of the command line: the run's
// App, and GitHub and Slack modes, each opened once.
type run struct {
	ext.App

	ghSide *ghmirror.Side // nil: not yet opened
	sl     *slackmode.Mode
	slSide *relay.Mode // nil: not yet opened
}

// Extra adds the full binary's commands and outside modes to a run.
func Extra(a ext.App) ext.Extension {
	r := &run{App: a}
	return ext.Extension{
		Commands: func() []*cobra.Command {
			return []*cobra.Command{newDoctorCmd(r), newGitHubCmd(r), newMCPCmd(r), newSkillsCmd(r), newSlackCmd(r)}
		},
		Outside: r.outsideModes,
	}
}

// outsideModes are GitHub and Slack modes for a command that runs the
// monitor or waits.
func (a *run) outsideModes(ctx context.Context, h *router.Hub) relay.Modes {
	return relay.Modes{a.githubSideOf(ctx, h).Mode(), a.slackSideOf(h)}
}
