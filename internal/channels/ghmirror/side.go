package ghmirror

import (
	"context"
	"net/http"
	"time"

	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// Open returns GitHub mode over hub h, with the token Token finds in
// getenv: nil when [github] is not configured. warn receives the
// problems that do not stop the work (Mirror.Warn).
func Open(ctx context.Context, h *router.Hub, getenv func(string) string, warn func(error)) (*Mirror, error) {
	cfg := h.Rules().Config.GitHub
	if cfg == nil {
		return nil, nil
	}
	// a cloned repository's api_url gets no token before a person trusted it
	if err := h.Trust.SendToken("github", cfg.APIURL, workflow.DefaultGitHubAPI); err != nil {
		return nil, err
	}
	token, _, err := Token(ctx, getenv, cfg.APIURL)
	if err != nil {
		return nil, err
	}
	// Each call is bounded by its context (Side: the [github] timeout);
	// the client's own timeout is a backstop.
	c, err := NewClient(cfg.APIURL, cfg.Repo, token, &http.Client{Timeout: cfg.Timeout.Duration})
	if err != nil {
		return nil, err
	}
	return &Mirror{Hub: h, Config: cfg, Client: c, Warn: warn}, nil
}

// tokenTrusted is Open's check again, for a process that lives on: a
// trust revoked meanwhile stops the token at the next piece of work.
func (m *Mirror) tokenTrusted() error {
	return m.Hub.Trust.SendToken("github", m.Config.APIURL, workflow.DefaultGitHubAPI)
}

// Side is GitHub mode as a side effect of one piece of work on the hub:
// a command that runs the monitor (ready, clarify, hooks, monitor) or an
// MCP tool call. Before the work (Read), new comments are read, at most
// once per interval; after it (Push), what changed is mirrored. It is a
// relay.Mode (see there: the timeout, one warning per piece of work,
// Sides over one Mirror taking turns).
type Side struct {
	Mirror *Mirror     // nil: GitHub mode is off, or could not be opened (Err)
	Err    error       // why the Mirror could not be opened, if so
	Warn   func(error) // receives the failures
	mode   *relay.Mode
}

// Mode is the Side as a relay.Mode (nil for a nil Side).
func (s *Side) Mode() *relay.Mode {
	if s == nil {
		return nil
	}
	if s.mode == nil {
		s.mode = &relay.Mode{Name: "github", Err: s.Err, Warn: s.Warn}
		if m := s.Mirror; m != nil {
			s.mode.Interval, s.mode.Timeout, s.mode.Busy = m.Config.Interval.Duration, m.Config.Timeout.Duration, &m.busy
			s.mode.Read = func(ctx context.Context, force bool) error {
				if err := m.tokenTrusted(); err != nil {
					return err
				}
				_, err := m.Poll(ctx, force)
				return err
			}
			s.mode.Send = func(ctx context.Context, force bool) error {
				if err := m.tokenTrusted(); err != nil {
					return err
				}
				_, err := m.Push(ctx, force)
				return err
			}
		}
	}
	return s.mode
}

// Read reads new comments (Mirror.Poll), at most once per interval.
func (s *Side) Read(ctx context.Context) { s.Mode().Side(ctx, true) }

// Push mirrors what changed (Mirror.Push).
func (s *Side) Push(ctx context.Context) { s.Mode().Side(ctx, false) }

// Wait is hub.Wait for clarification id that, in GitHub mode, reads new
// comments (Read) every interval, at least a second apart, while it
// waits, so that an /answer on GitHub reaches the waiting asker.
func (s *Side) Wait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	return relay.Modes{s.Mode()}.Wait(ctx, h, id, timeout)
}
