package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/router"
)

// githubSideOf is GitHub mode for this command's own use (github sync),
// opened once; the side work opens its channels in one list (channels).
func (a *App) githubSideOf(ctx context.Context, h *router.Hub) *ghmirror.Side {
	if a.ghSide == nil {
		warn := func(err error) { a.warnf("github: %v", err) }
		m, err := ghmirror.Open(ctx, h, a.getenv, warn)
		a.ghSide = &ghmirror.Side{Mirror: m, Err: err, Warn: warn}
	}
	return a.ghSide
}

// GitHubView is what agentx github status and sync print.
type GitHubView struct {
	Enabled bool                 `json:"enabled"` // [github] is configured
	Status  *ghmirror.Status     `json:"status,omitempty"`
	Read    *ghmirror.PollReport `json:"read,omitempty"`
	Pushed  *ghmirror.PushReport `json:"pushed,omitempty"`
}

func newGitHubCmd(a *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "github",
		Short: "GitHub mode: what the mirror has not sent yet, and a sync by hand",
		Long: `With a [github] table in .agentx/config.toml, each question, answer,
follow-up, resolution and escalation of issue N is mirrored as a comment on
GitHub issue N, labels follow the status, and allowed people answer with
"/answer CLR-N-NNN text" and settle escalations with "/resolve CLR-N-NNN
decision". ready, hooks, the monitor, clarify commands, clarify wait and the
MCP server's tool calls do this as they run (comments read at most once per
interval); GitHub being unreachable or rate-limited never fails them: the
work is queued. See docs/github.md.`,
	}
	cmd.AddCommand(newGitHubStatusCmd(a), newGitHubSyncCmd(a))
	return cmd
}

// githubStatusOptions are `agentx github status`'s (it has no flags).
type githubStatusOptions struct{}

func newGitHubStatusCmd(a *App) *cobra.Command {
	o := &githubStatusOptions{}
	return &cobra.Command{
		Use:   "status",
		Short: "What the GitHub mirror has not sent yet, and why (no call to GitHub)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *githubStatusOptions) run(a *App) error {
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	v := GitHubView{}
	if cfg := h.Rules().Config.GitHub; cfg != nil {
		v.Enabled = true
		m := &ghmirror.Mirror{Hub: h, Config: cfg}
		st, err := m.Status()
		if err != nil {
			return err
		}
		v.Status = &st
	}
	return a.emit(v, func() { v.text(a.stdout) })
}

// githubSyncOptions are `agentx github sync`'s flags.
type githubSyncOptions struct {
	issues []int
}

func newGitHubSyncCmd(a *App) *cobra.Command {
	o := &githubSyncOptions{}
	cmd := &cobra.Command{
		Use:   "sync [--issue N]...",
		Short: "Read new comments and mirror what is behind now, whatever the interval and retry times",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(ctx, a)
		}),
	}
	cmd.Flags().IntSliceVar(&o.issues, "issue", nil, "also mirror this issue's whole thread (repeatable), whatever changed")
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *githubSyncOptions) run(ctx context.Context, a *App) error {
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	v := GitHubView{}
	side := a.githubSideOf(ctx, h) // GitHub mode: nil when [github] is not configured
	m := side.Mirror
	if side.Err != nil {
		return &codedError{Code: ExitFailure, Msg: "github: " + side.Err.Error(), Todo: "see docs/github.md: the token's scopes"}
	}
	if m == nil {
		return a.emit(v, func() { v.text(a.stdout) })
	}
	v.Enabled = true
	for _, n := range o.issues {
		if n <= 0 {
			return usage(fmt.Errorf("--issue %d: GitHub issues are numbered from 1", n))
		}
	}
	read, rerr := m.Poll(ctx, true)
	v.Read = &read
	pushed, perr := m.Push(ctx, true, o.issues...)
	v.Pushed = &pushed
	if err := errors.Join(rerr, perr); err != nil {
		return &codedError{Code: ExitFailure, Msg: "github: " + err.Error(), Data: v,
			Todo: "what is behind stays queued and is retried; agentx github status shows it"}
	}
	return a.emit(v, func() { v.text(a.stdout) })
}

// text prints v for a person.
func (v GitHubView) text(w io.Writer) {
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	if !v.Enabled {
		printf("GitHub mode is off: add a [github] table to .agentx/config.toml (see docs/github.md)\n")
		return
	}
	line := safetext.Line
	if r := v.Read; r != nil {
		switch {
		case r.NotModified:
			printf("comments: nothing new (304: no rate limit spent)\n")
		case r.Read:
			printf("comments: %d read\n", r.Comments)
		}
		for _, h := range r.Handled {
			printf("  #%d %s by %s: %s %s\n", h.Issue, line(h.ID), line(h.Login), h.Outcome, line(h.Reason))
		}
	}
	if p := v.Pushed; p != nil {
		for _, ir := range p.Issues {
			printf("issue #%d: %d posted, %d found, %d edited; labels %v%s\n", ir.Issue, ir.Posted, ir.Found, ir.Edited, ir.Labels, errSuffix(ir.Error))
		}
	}
	if v.Status != nil {
		githubStatusText(w, v.Status)
	}
}

// githubStatusText prints what the mirror has not sent yet, and why.
func githubStatusText(w io.Writer, st *ghmirror.Status) {
	printf := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	line := safetext.Line
	printf("repository: %s (%s)\n", line(st.Repo), line(st.APIURL))
	if st.LastRead != nil {
		printf("comments last read: %s%s\n", st.LastRead.UTC().Format(time.RFC3339), errSuffix(st.ReadError))
	}
	if st.WaitUntil != nil {
		printf("rate limited: no calls before %s\n", st.WaitUntil.UTC().Format(time.RFC3339))
	}
	if st.EventsBehind > 0 {
		printf("changes not yet seen by the mirror: %d bytes of the event log\n", st.EventsBehind)
	}
	if len(st.Behind) == 0 {
		printf("mirror: up to date\n")
		return
	}
	for _, b := range st.Behind {
		printf("behind: issue #%d: %s not mirrored, %s%s\n", b.Issue, words.Count(b.Unmirrored, "entry", "entries"), words.Count(b.Attempts, "attempt", "attempts"), errSuffix(b.Error))
	}
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (" + safetext.Line(e) + ")"
}
