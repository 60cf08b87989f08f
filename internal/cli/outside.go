package cli

import (
	"context"
	"time"

	"github.com/agentx-cli/agentx/router"
)

// outsideSide is the channels (GitHub, Slack) in the middle of a command
// (a wait that ran the monitor, a rewake's sleep): read (in) what people
// wrote, at most once per interval, or push what changed. Each within its
// timeout; a failure is a warning, once per command and channel, and the
// work stays queued: it never changes the command's exit code (see
// relay.Mode).
func (a *App) outsideSide(ctx context.Context, h *router.Hub, in bool) {
	_, _ = a.sidePass().command().run(ctx, sideSteps{read: in, push: !in}, nil)
}

// outsideWait is h.Wait that reads each channel every interval while it
// waits, so that an answer given on GitHub or in Slack reaches the
// waiting asker, and with a [remote] watches the clarification's ref.
func (a *App) outsideWait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	return a.sidePass().command().Wait(ctx, h, id, timeout)
}
