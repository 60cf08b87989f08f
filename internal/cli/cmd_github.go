package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/router"
)

// githubMirror is GitHub mode for this command: nil when [github] is not
// configured. Opened once per command.
func (a *App) githubMirror(ctx context.Context, h *router.Hub) (*ghmirror.Mirror, error) {
	s := a.githubSideOf(ctx, h)
	return s.Mirror, s.Err
}

// githubSideOf is GitHub mode for this command's own use (github sync),
// opened once; the side work opens its channels in one list (channels).
func (a *App) githubSideOf(ctx context.Context, h *router.Hub) *ghmirror.Side {
	if a.ghSide == nil {
		m, err := ghmirror.Open(ctx, h, a.getenv, a.githubWarn)
		a.ghSide = &ghmirror.Side{Mirror: m, Err: err, Warn: a.githubWarn}
	}
	return a.ghSide
}

func (a *App) githubWarn(err error) { a.warnf("github: %v", err) }

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

func newGitHubStatusCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "What the GitHub mirror has not sent yet, and why (no call to GitHub)",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
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
			return a.emit(v, func() { a.githubText(v) })
		}),
	}
}

func newGitHubSyncCmd(a *App) *cobra.Command {
	var issues []int
	cmd := &cobra.Command{
		Use:   "sync [--issue N]...",
		Short: "Read new comments and mirror what is behind now, whatever the interval and retry times",
		Args:  cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			v := GitHubView{}
			m, err := a.githubMirror(ctx, h)
			if err != nil {
				return &codedError{Code: ExitFailure, Msg: "github: " + err.Error(), Todo: "see docs/github.md: the token's scopes"}
			}
			if m == nil {
				return a.emit(v, func() { a.githubText(v) })
			}
			v.Enabled = true
			for _, n := range issues {
				if n <= 0 {
					return usage(fmt.Errorf("--issue %d: GitHub issues are numbered from 1", n))
				}
			}
			read, rerr := m.Poll(ctx, true)
			v.Read = &read
			pushed, perr := m.Push(ctx, true, issues...)
			v.Pushed = &pushed
			if err := errors.Join(rerr, perr); err != nil {
				return &codedError{Code: ExitFailure, Msg: "github: " + err.Error(), Data: v,
					Todo: "what is behind stays queued and is retried; agentx github status shows it"}
			}
			return a.emit(v, func() { a.githubText(v) })
		}),
	}
	cmd.Flags().IntSliceVar(&issues, "issue", nil, "also mirror this issue's whole thread (repeatable), whatever changed")
	return cmd
}

// githubText prints a GitHubView for a person.
func (a *App) githubText(v GitHubView) {
	if !v.Enabled {
		a.printf("GitHub mode is off: add a [github] table to .agentx/config.toml (see docs/github.md)\n")
		return
	}
	line := safetext.Line
	if r := v.Read; r != nil {
		switch {
		case r.NotModified:
			a.printf("comments: nothing new (304: no rate limit spent)\n")
		case r.Read:
			a.printf("comments: %d read\n", r.Comments)
		}
		for _, h := range r.Handled {
			a.printf("  #%d %s by %s: %s %s\n", h.Issue, line(h.ID), line(h.Login), h.Outcome, line(h.Reason))
		}
	}
	if p := v.Pushed; p != nil {
		for _, ir := range p.Issues {
			a.printf("issue #%d: %d posted, %d found, %d edited; labels %v%s\n", ir.Issue, ir.Posted, ir.Found, ir.Edited, ir.Labels, errSuffix(ir.Error))
		}
	}
	st := v.Status
	if st == nil {
		return
	}
	a.printf("repository: %s (%s)\n", line(st.Repo), line(st.APIURL))
	if st.LastRead != nil {
		a.printf("comments last read: %s%s\n", st.LastRead.UTC().Format(time.RFC3339), errSuffix(st.ReadError))
	}
	if st.WaitUntil != nil {
		a.printf("rate limited: no calls before %s\n", st.WaitUntil.UTC().Format(time.RFC3339))
	}
	if st.EventsBehind > 0 {
		a.printf("changes not yet seen by the mirror: %d bytes of the event log\n", st.EventsBehind)
	}
	if len(st.Behind) == 0 {
		a.printf("mirror: up to date\n")
		return
	}
	for _, b := range st.Behind {
		a.printf("behind: issue #%d: %s not mirrored, %s%s\n", b.Issue, words.Count(b.Unmirrored, "entry", "entries"), words.Count(b.Attempts, "attempt", "attempts"), errSuffix(b.Error))
	}
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (" + safetext.Line(e) + ")"
}
