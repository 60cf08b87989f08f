package slackmode

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// The environment variables Slack mode's tokens come from: never a file.
const (
	EnvBotToken = "SLACK_BOT_TOKEN"
	EnvAppToken = "SLACK_APP_TOKEN"
)

// ErrNoToken is Slack mode configured with no bot token.
var ErrNoToken = errors.New("no Slack token: set " + EnvBotToken + " to the app's bot token (xoxb-...)")

// Open returns Slack mode over hub h, with the bot token from getenv: nil
// when [slack] is not configured. warn receives the problems that do not
// stop the work (Mode.Warn).
func Open(h *router.Hub, getenv func(string) string, warn func(error)) (*Mode, error) {
	cfg := h.Rules().Config.Slack
	if cfg == nil {
		return nil, nil
	}
	// a cloned repository's api_url gets no token before a person trusted it
	if err := h.Trust.SendToken("slack", cfg.APIURL, workflow.DefaultSlackAPI); err != nil {
		return nil, err
	}
	token := strings.TrimSpace(getenv(EnvBotToken))
	if token == "" {
		return nil, ErrNoToken
	}
	// Each call is bounded by its context (the [slack] timeout); the
	// client's own timeout is a backstop.
	c := NewClient(cfg.APIURL, token, &http.Client{Timeout: cfg.Timeout.Duration})
	m := &Mode{Hub: h, Config: cfg, Client: c, Warn: warn}
	c.Now, c.Warn, c.Hold = h.Store.Now, warn, m.hold()
	return m, nil
}

// Side is Slack mode as a side effect of one piece of work on the hub
// (relay.Mode): the open threads read before it, at most once per
// interval; what changed posted after it. m nil: off, or not opened (err,
// said once).
func Side(m *Mode, err error, warn func(error)) *relay.Mode {
	s := &relay.Mode{Name: "slack", Err: err, Warn: warn}
	if m != nil {
		s.Interval, s.Timeout, s.Busy = m.Config.Interval.Duration, m.Config.Timeout.Duration, &m.busy
		// a trust revoked since Open stops the token at the next piece of work
		trusted := func() error { return m.Hub.Trust.SendToken("slack", m.Config.APIURL, workflow.DefaultSlackAPI) }
		s.Read = func(ctx context.Context, force bool) error {
			if err := trusted(); err != nil {
				return err
			}
			_, err := m.Poll(ctx, force)
			return err
		}
		s.Send = func(ctx context.Context, force bool) error {
			if err := trusted(); err != nil {
				return err
			}
			_, err := m.Push(ctx, force)
			return err
		}
	}
	return s
}
