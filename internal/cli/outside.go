package cli

import (
	"context"
	"time"

	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/router"
)

// outsideModes are the outside modes of this command (GitHub, Slack), each
// opened once; one that cannot be opened (no token) says so once, when
// first used.
func (a *App) outsideModes(ctx context.Context, h *router.Hub) relay.Modes {
	if c := h.Rules().Config; c.GitHub == nil && c.Slack == nil {
		return nil // neither configured: nothing to open
	}
	return relay.Modes{a.githubSideOf(ctx, h).Mode(), a.slackSideOf(h)}
}

// outsideSide is the outside modes as a side effect of a command that runs
// the monitor (ready, every clarify subcommand, hooks, monitor): before the
// monitor (in), what people wrote is read, at most once per interval;
// after it (out), what changed is mirrored. Each within its timeout; a
// failure is a warning, once per command and mode, and the work stays
// queued: it never changes the command's exit code (see relay.Mode).
func (a *App) outsideSide(ctx context.Context, h *router.Hub, in bool) {
	ms := a.outsideModes(ctx, h)
	if in {
		ms.Read(ctx)
	} else {
		ms.Push(ctx)
	}
}

// outsideWait is h.Wait that reads each outside mode every interval while
// it waits, so that an answer given on GitHub or in Slack reaches the
// waiting asker, and with a [remote] watches the clarification's ref.
func (a *App) outsideWait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	return a.outsideModes(ctx, h).WaitWith(ctx, func(ctx context.Context, id string, d time.Duration) (router.Record, error) {
		return a.remoteWait(ctx, h, id, d)
	}, id, timeout)
}
