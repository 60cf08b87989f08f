package ext

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/clock"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/router"
)

// Extra is what the full binary adds to a run of the command line: it is
// called once per run, with the run's App. The lean agentx binary has none
// (nil): it runs agentx-full instead for the commands in FullCommands, and
// for every command that reaches GitHub or Slack in a workspace that
// configures them. So the packages those need (an HTTP and TLS stack, the
// MCP SDK, a JSON Schema validator, a YAML parser) are not linked into, nor
// initialised by, the binary that agents run many times a second.
type Extra func(a App) Extension

// Extension is the full binary's part of one run.
type Extension struct {
	// Commands builds the commands added to the root command, one per name
	// in FullCommands: called only for a run that may need them (help, or
	// one of them), not for a command the lean binary handed over.
	Commands func() []*cobra.Command
	// Outside opens the outside modes (GitHub, Slack) of a command that
	// runs the monitor or waits; it opens each mode once per run and returns it again after.
	Outside func(ctx context.Context, h *router.Hub) relay.Modes
}

// App is one run of the command line, as the full binary's commands see
// it.
type App interface {
	// Printf writes text output (never used under --json).
	Printf(format string, args ...any)
	// Warnf prints a warning on stderr, neutralised to one line (under
	// --json too: stdout holds only the document).
	Warnf(format string, args ...any)
	// Emit prints data under --json, else runs text.
	Emit(data any, text func()) error
	// JSON reports whether --json was given.
	JSON() bool
	// Getenv reads the run's environment.
	Getenv(key string) string
	// Streams are the run's stdin, stdout and stderr.
	Streams() (stdin io.Reader, stdout, stderr io.Writer)
	// Now is the run's clock (AGENTX_NOW in tests).
	Now() clock.Clock
	// Open finds the workspace and loads its configuration and
	// workflows, once per run.
	Open() (*workspace.Workspace, error)
	// Hub opens the workspace and its hub, once per run.
	Hub() (*workspace.Workspace, *router.Hub, error)
	// RemoteRefresh brings the local copies up to the remote, at most once
	// per [remote] interval (nothing without a remote, or --offline).
	RemoteRefresh(ctx context.Context)
	// RemoteWait is h.Wait that, with a remote, watches the clarification's
	// ref while it waits, so that an answer made on another host reaches
	// the waiter.
	RemoteWait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error)
	// Issue is AGENTX_ISSUE, checked; nil when it is not set.
	Issue() (*int, error)
	// MonitorOff reports whether AGENTX_NO_MONITOR turns the monitor (and
	// the outside modes around it) off.
	MonitorOff() bool
	// Actor is who acts: --as for a person, else the caller.
	Actor(as string) (string, error)
	// Classify is the CLI's error mapping: exit code, code name and hint,
	// for a front end that words its own failures (the MCP server).
	Classify(err error) (code int, name, hint string)
	// Version is agentx's version.
	Version() string
	// WriteTable writes rows under header as aligned plain columns.
	WriteTable(w io.Writer, header []string, rows [][]string)
}

// FullCommands are the commands only agentx-full has, with their one-line
// descriptions (the lean binary lists them in its help all the same).
var FullCommands = []struct{ Name, Short string }{
	{"doctor", "Check the workspace's state: ledgers, schema, locks, temp files, index, statuses, inbox marks, event log (--fix repairs)"},
	{"github", "GitHub mode: what the mirror has not sent yet, and a sync by hand"},
	{"mcp", "Serve the clarification tools to an AI agent over MCP (stdio)"},
	{"skills", "Skills drafted from approved proposals: draft, validate, list"},
	{"slack", "Slack mode: what is not posted yet, a sync by hand, and an optional listener"},
}

// Short is the one-line description of the full binary's command name.
func Short(name string) string {
	for _, c := range FullCommands {
		if c.Name == name {
			return c.Short
		}
	}
	panic("ext: no full command " + name)
}

// RunE adapts a command body to cobra, with the command's context.
func RunE(fn func(ctx context.Context, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		return fn(cmd.Context(), cmd, args)
	}
}

// UsageError is a bad command line (exit 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }
func (e *UsageError) Hint() string  { return "run the command with --help to see its usage" }

// Usage is a bad command line (exit 2).
func Usage(err error) error { return &UsageError{Err: err} }
