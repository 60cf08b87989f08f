package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// What every command's run takes of the session beside its streams and
// output: the hub, opened once; text given by flag or on stdin; the agent
// a flag names; the --issue flag.

// hub opens the workspace and the hub over it.
func (a *App) hub() (*workspace.Workspace, *router.Hub, error) { return a.openHub(true) }

// writeHub is hub for a command that is about to write: in remote mode the
// settings its commit depends on are read meanwhile (remote.Replicator.Warm),
// so that the commit does not wait for them.
func (a *App) writeHub() (*workspace.Workspace, *router.Hub, error) {
	ws, h, err := a.hub()
	if err == nil {
		ctx := a.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		remote.Of(ws.Store).Warm(ctx)
	}
	return ws, h, err
}

// localHub is hub without the remote mode's refresh: for what needs no
// other host's changes and must not wait on a fetch, the scope check (run
// before every tool an agent uses) and shell completion.
func (a *App) localHub() (*workspace.Workspace, *router.Hub, error) {
	a.noWake = true // nor does it start an agent's resume command
	return a.openHub(false)
}

func (a *App) openHub(refresh bool) (*workspace.Workspace, *router.Hub, error) {
	ws, err := a.open()
	if err != nil {
		return nil, nil, err
	}
	if a.hb == nil {
		a.hb = router.New(ws.Store, ws.Rules, ws.Root)
		a.hb.Warn = func(err error) { a.warnf("%v", err) }
		a.hb.Trust = a.trustGate(ws.Root, ws.Rules)
	}
	if refresh && !a.refreshed {
		a.refreshed = true
		ctx := a.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		a.remoteSide(ctx, ws)
	}
	return ws, a.hb, nil
}

// text returns flag's value, or else stdin when it is not a terminal; no
// text either way is a usage error naming the flag, and so is text past
// one message's limit (ledger.MaxMessageLen), before anything is opened.
func (a *App) text(flagName, value string) (string, error) {
	if value != "" {
		return value, message(flagName, value)
	}
	missing := &usageError{Err: fmt.Errorf("%s is required: give %s TEXT, or pipe the text on stdin", flagName, flagName)}
	if f, ok := a.stdin.(interface{ Fd() uintptr }); ok && isatty.IsTerminal(f.Fd()) {
		return "", missing
	}
	b, err := io.ReadAll(io.LimitReader(a.stdin, ledger.MaxBodyLen+1))
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	if len(b) > ledger.MaxBodyLen {
		return "", &usageError{Err: fmt.Errorf("%s from stdin is more than %d bytes; the limit is %d bytes", flagName, ledger.MaxBodyLen, ledger.MaxMessageLen),
			hint: fmt.Sprintf("shorten it to %d bytes or fewer; put the detail in a file or the issue and name it; nothing was written", ledger.MaxMessageLen)}
	}
	text := strings.TrimSpace(string(b))
	if text == "" {
		return "", missing
	}
	return text, message(flagName+" (stdin)", text)
}

// message checks the text given for flag (a message: a question, answer,
// follow-up, decision, assumption or note) against one message's limit,
// naming the flag: an input error (exit 2) whose hint says what to do.
func message(flag, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil // the hub says what is missing
	}
	return ledger.ValidateMessage(flag, text)
}

// agentDefault returns an agent flag's value, else AGENTX_AGENT.
func (a *App) agentDefault(v string) string {
	if v == "" {
		return a.getenv("AGENTX_AGENT")
	}
	return v
}

// requireAgent is claim for a flag the command cannot do without: neither
// the flag nor AGENTX_AGENT is a usage error naming the flag.
func (a *App) requireAgent(flag, v string) (string, error) {
	v, err := a.claim(flag, v)
	if err != nil {
		return "", err
	}
	return required(flag, v)
}

// required refuses an empty agent flag as a usage error.
func required(flag, v string) (string, error) {
	if v == "" {
		return "", &usageError{Err: fmt.Errorf("--%s is required (or set AGENTX_AGENT)", flag)}
	}
	return v, nil
}

// issueFlag is an --issue flag that also reads AGENTX_ISSUE.
type issueFlag struct {
	raw string
}

func (f *issueFlag) register(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&f.raw, "issue", "", usage+" (default $AGENTX_ISSUE)")
}

// get returns the issue number, or nil when neither flag nor env gives one.
func (f *issueFlag) get(a *App) (*int, error) {
	raw, field := f.raw, "issue" // the flag (worded --issue)
	if raw == "" {
		raw, field = a.getenv("AGENTX_ISSUE"), "AGENTX_ISSUE"
	}
	if raw == "" {
		return nil, nil
	}
	n, err := ledger.ParseIssue(raw)
	if in := (*ledger.InputError)(nil); errors.As(err, &in) {
		in.Field = field
	}
	if err != nil {
		return nil, &usageError{Err: err}
	}
	return &n, nil
}

func (f *issueFlag) require(a *App) (int, error) {
	n, err := f.get(a)
	if err != nil {
		return 0, err
	}
	if n == nil {
		return 0, &usageError{Err: fmt.Errorf("--issue is required (or set AGENTX_ISSUE)")}
	}
	return *n, nil
}
