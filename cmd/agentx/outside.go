package main

import (
	"context"
	"errors"
	"time"

	"github.com/agentx-cli/agentx/internal/relay"
	"github.com/agentx-cli/agentx/router"
)

// outsideModes are the outside modes configured in this workspace (GitHub,
// Slack), opened once per command. One that cannot be opened (no token) is
// a warning, once, and left out.
func (a *app) outsideModes(ctx context.Context, h *router.Hub) []*relay.Mode {
	if a.modesOpen {
		return a.modes
	}
	a.modesOpen = true
	for _, open := range []struct {
		name string
		open func(context.Context, *router.Hub) (*relay.Mode, error)
	}{{"github", a.githubMode}, {"slack", a.slackMode}} {
		m, err := open.open(ctx, h)
		if err != nil {
			a.warnf("%s: %v", open.name, err)
		}
		if m != nil {
			a.modes = append(a.modes, m)
		}
	}
	return a.modes
}

// outsideSide is the outside modes as a side effect of a command that runs
// the monitor (ready, every clarify subcommand, hooks, monitor): before the
// monitor (in), what people wrote is read, at most once per interval;
// after it (out), what changed is mirrored. Each within its timeout; a
// failure is a warning and the work stays queued: it never changes the
// command's exit code.
func (a *app) outsideSide(ctx context.Context, h *router.Hub, in bool) {
	for _, m := range a.outsideModes(ctx, h) {
		m.Side(ctx, in)
	}
}

// outsideWait is h.Wait that reads each outside mode every interval while
// it waits, so that an answer given on GitHub or in Slack reaches the
// waiting asker.
func (a *app) outsideWait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	start := time.Now()
	rec, err := relay.Wait(ctx, a.outsideModes(ctx, h), timeout,
		func(d time.Duration) (router.Record, error) { return h.Wait(ctx, id, d) },
		func(err error) bool { var te *router.WaitTimeoutError; return errors.As(err, &te) })
	var te *router.WaitTimeoutError
	if errors.As(err, &te) {
		te.Waited = time.Since(start)
	}
	return rec, err
}
