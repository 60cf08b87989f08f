package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/channels/slackmode"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/router"
)

// slackSideOf is Slack mode for this command's own use (slack sync,
// status), opened once (a.sl is the mode: nil when [slack] is not
// configured); the side work opens its channels in one list (channels).
func (a *App) slackSideOf(h *router.Hub) *relay.Mode {
	if a.slSide == nil {
		warn := func(err error) { a.warnf("slack: %v", err) }
		m, err := slackmode.Open(h, a.getenv, warn)
		a.sl, a.slSide = m, slackmode.Side(m, err, warn)
	}
	return a.slSide
}

// SlackView is what agentx slack status and sync print.
type SlackView struct {
	Enabled bool                  `json:"enabled"` // [slack] is configured
	Status  *slackmode.Status     `json:"status,omitempty"`
	Read    *slackmode.PollReport `json:"read,omitempty"`
	Pushed  *slackmode.PushReport `json:"pushed,omitempty"`
}

func newSlackCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "slack",
		Short: "Slack mode: what is not posted yet, a sync by hand, and an optional listener",
		Long: `With a [slack] table in .agentx/config.toml, each question to a person and
each escalation is posted to the channel, one thread per clarification, and
what follows is posted in the thread. The first reply in the thread by one
of the answerers is the answer, later replies add to it, a reply naming an
option by number or label answers with it, and a reply to an escalation
settles it. ready, hooks, the monitor, clarify commands and clarify wait
do this as they run (threads read at most once per interval); Slack being
unreachable or rate-limited never fails them: the work is queued. A rate
limit's Retry-After holds every call to Slack, from every process, a sync
by hand included. The bot token comes from SLACK_BOT_TOKEN. See
docs/slack.md.`,
	}
	cmd.AddCommand(newSlackStatusCmd(a), newSlackSyncCmd(a), newSlackListenCmd(a))
	return cmd
}

// slackStatusOptions are `agentx slack status`'s (it has no flags).
type slackStatusOptions struct{}

func newSlackStatusCmd(a *App) *cobra.Command {
	o := &slackStatusOptions{}
	return &cobra.Command{
		Use:   "status",
		Short: "What Slack mode has not posted yet, and why (no call to Slack)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *slackStatusOptions) run(a *App) error {
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	v := SlackView{}
	if cfg := h.Rules().Config.Slack; cfg != nil {
		v.Enabled = true
		m := &slackmode.Mode{Hub: h, Config: cfg}
		st, err := m.Status()
		if err != nil {
			return err
		}
		v.Status = &st
	}
	return a.emit(v, func() { v.text(a.stdout) })
}

// slackOpen opens Slack mode for a command that needs it: nil when off; no
// token is exit 1 with how to give one.
func slackOpen(a *App) (*slackmode.Mode, error) {
	_, h, err := a.hub()
	if err != nil {
		return nil, err
	}
	if err := a.slackSideOf(h).Err; err != nil {
		return nil, &codedError{Code: ExitFailure, Msg: "slack: " + err.Error(), Todo: "see docs/slack.md: creating the app"}
	}
	return a.sl, nil
}

// slackSyncOptions are `agentx slack sync`'s flags.
type slackSyncOptions struct {
	issues []int
}

func newSlackSyncCmd(a *App) *cobra.Command {
	o := &slackSyncOptions{}
	cmd := &cobra.Command{
		Use:   "sync [--issue N]...",
		Short: "Read the open threads and post what is behind now, whatever the interval and retry times (not before a rate limit's Retry-After)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().IntSliceVar(&o.issues, "issue", nil, "also post this issue's threads (repeatable), whatever changed")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *slackSyncOptions) run(ctx context.Context, a *App) error {
	m, err := slackOpen(a)
	if err != nil {
		return err
	}
	v := SlackView{}
	if m == nil {
		return a.emit(v, func() { v.text(a.stdout) })
	}
	v.Enabled = true
	for _, n := range o.issues {
		if n < 0 {
			return usage(fmt.Errorf("--issue %d: issues are numbered from 0", n))
		}
	}
	pushed, perr := m.Push(ctx, true, o.issues...)
	v.Pushed = &pushed
	read, rerr := m.Poll(ctx, true)
	v.Read = &read
	if err := errors.Join(perr, rerr); err != nil {
		return &codedError{Code: ExitFailure, Msg: "slack: " + err.Error(), Data: v,
			Todo: "what is behind stays queued and is retried; agentx slack status shows it"}
	}
	return a.emit(v, func() { v.text(a.stdout) })
}

// slackListenOptions are `agentx slack listen`'s (it has no flags).
type slackListenOptions struct{}

func newSlackListenCmd(a *App) *cobra.Command {
	o := &slackListenOptions{}
	return &cobra.Command{
		Use:   "listen",
		Short: "Take replies as they are written, over Socket Mode (optional: until interrupted)",
		Long: `Connects to Slack over Socket Mode with the app-level token in
SLACK_APP_TOKEN (xapp-..., scope connections:write) and takes each reply in
a clarification's thread as it is written, instead of at the next command
that reads the threads. Every time it connects it re-reads every open
thread, since Socket Mode drops what is said while nobody listens; every
interval it posts what changed. It runs until interrupted (exit 130) or
until Slack refuses the token (exit 1). Without it, agentx reads the
threads from clarify wait, hooks, ready and the monitor.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *slackListenOptions) run(ctx context.Context, a *App) error {
	m, err := slackOpen(a)
	if err != nil {
		return err
	}
	if m == nil {
		return &codedError{Code: ExitFailure, Msg: "Slack mode is off: add a [slack] table to .agentx/config.toml", Todo: "see docs/slack.md"}
	}
	app := strings.TrimSpace(a.getenv(slackmode.EnvAppToken))
	if app == "" {
		return &codedError{Code: ExitFailure, Msg: "slack: no app-level token: set " + slackmode.EnvAppToken + " (xapp-..., scope connections:write)", Todo: "see docs/slack.md: Socket Mode"}
	}
	err = m.Listen(ctx, app, func(ev slackmode.ListenEvent) {
		if !a.json {
			o.event(a, ev)
		}
	})
	if err != nil {
		return &codedError{Code: ExitFailure, Msg: err.Error(), Todo: "check SLACK_APP_TOKEN and that Socket Mode is on for the app (docs/slack.md)"}
	}
	return ctx.Err()
}

// event prints, as it comes, what the listener did.
func (o *slackListenOptions) event(a *App, ev slackmode.ListenEvent) {
	now := time.Now().UTC().Format(time.TimeOnly)
	switch ev.What {
	case "connected":
		a.printf("%s connected: reading every open thread\n", now)
	case "read":
		for _, h := range ev.Read.Handled {
			a.printf("%s %s\n", now, handledLine(h))
		}
	case "pushed":
		for _, ir := range ev.Push.Issues {
			a.printf("%s %s: %d posted, %d found\n", now, words.Issue(ir.Issue), ir.Posted, ir.Found)
		}
	case "error":
		a.warnf("slack: %v", ev.Err)
	}
}

// handledLine is one reply a read acted on.
func handledLine(h slackmode.Handled) string {
	s := fmt.Sprintf("%s reply %s by %s: %s", safetext.Line(h.ID), safetext.Line(h.TS), safetext.Line(h.User), h.Outcome)
	if h.Verb != "" && h.Outcome == slackmode.Taken {
		s += " (" + h.Verb + ")"
	}
	return s + errSuffix(h.Reason)
}

// text prints v for a person.
func (v SlackView) text(w io.Writer) {
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	if !v.Enabled {
		printf("Slack mode is off: add a [slack] table to .agentx/config.toml (see docs/slack.md)\n")
		return
	}
	if p := v.Pushed; p != nil {
		for _, ir := range p.Issues {
			printf("%s: %d posted, %d found%s\n", words.Issue(ir.Issue), ir.Posted, ir.Found, errSuffix(ir.Error))
		}
	}
	if r := v.Read; r != nil && r.Read {
		printf("threads: %d read, %s\n", r.Threads, words.Count(r.Replies, "new reply", "new replies"))
		for _, h := range r.Handled {
			printf("  %s\n", handledLine(h))
		}
	}
	if v.Status != nil {
		slackStatusText(w, v.Status)
	}
}

// slackStatusText prints what Slack mode has not posted yet, and why.
func slackStatusText(w io.Writer, st *slackmode.Status) {
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	line := safetext.Line
	printf("channel: %s (%s)\n", line(st.Channel), line(st.APIURL))
	printf("open threads: %d\n", st.Threads)
	if st.LastRead != nil {
		printf("threads last read: %s%s\n", st.LastRead.UTC().Format(time.RFC3339), errSuffix(st.ReadError))
	}
	if st.WaitUntil != nil {
		printf("rate limited: no calls before %s\n", st.WaitUntil.UTC().Format(time.RFC3339))
	}
	if st.EventsBehind > 0 {
		printf("changes not yet seen: %d bytes of the event log\n", st.EventsBehind)
	}
	if len(st.Behind) == 0 {
		printf("threads: up to date\n")
		return
	}
	for _, b := range st.Behind {
		printf("behind: %s: %s not posted, %s%s\n", words.Issue(b.Issue), words.Count(b.Unmirrored, "entry", "entries"), words.Count(b.Attempts, "attempt", "attempts"), errSuffix(b.Error))
	}
}
