package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/cli/ext"
	"github.com/agentx-cli/agentx/internal/clock"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/router"
)

// App is what every command is built from: its streams, environment and
// global options. Tests build one with buffers and run commands in-process.
type App struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	isTTY          bool
	// armSignals takes Ctrl-C, SIGTERM and SIGPIPE over (see
	// signalContext); nil in tests
	armSignals func()

	// global flags
	root    string
	json    bool
	noColor bool

	now     clock.Clock
	started bool // set once flags parsed and a command began to run

	side *sideMonitor // the monitor run as a side effect, when armed

	who *router.Caller // who this process acts as (caller)
	as  string         // --as: the person acting as human

	// the workspace and hub, opened once per command and shared with the
	// side-effect monitor
	ws *workspace.Workspace
	hb *router.Hub
	// refreshed: the remote mode's refresh ran for this command (see hub)
	refreshed bool

	// what the full binary adds (nil: the lean binary), and its part of
	// this run
	extra ext.Extra
	ext   ext.Extension

	// exec replaces the process with another program (Main sets it; nil in
	// an in-process run); args is the command line run
	exec       func(path string, args, env []string) (int, error)
	handedOver bool // this lean process was run as agentx-full (envHandedOver)
	args       []string
	helpErr    error // a help that agentx-full was to give, and did not

	cmd     *cobra.Command  // the command run, once its flags are parsed
	ctx     context.Context // the command's, for work done on the side (the remote's refresh)
	offline bool            // --offline: never reach the remote
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, a *App, args []string) int {
	a.args = args
	first := ""
	if len(args) > 0 {
		first = args[0]
	}
	cmd := newRoot(a, first)
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		// wiring the completions walks every command's flags: only a
		// shell asking for completions pays for it
		a.registerCompletions(cmd)
	}
	cmd.SetArgs(args)
	cmd.SetIn(a.stdin)
	cmd.SetOut(a.stdout)
	cmd.SetErr(a.stderr)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		err = a.helpErr
	}
	if h := (*handedOver)(nil); errors.As(err, &h) {
		return h.code
	}
	defer a.noteUnsynced()
	if err == nil {
		a.flushMonitor(nil)
		return 0
	}
	if !a.started {
		// cobra failed before parsing flags (unknown command or flag): honour
		// --json all the same, so scripts always get JSON errors.
		a.json = a.json || slices.Contains(args, "--json")
		err = &usageError{Err: err}
	}
	if ctx.Err() != nil {
		err = &interruptedError{err: err}
		if errors.Is(context.Cause(ctx), errOutputClosed) {
			// nobody reads the output any more: nothing to tell them
			err = &codedError{Code: ext.ExitInterrupted, Msg: err.Error(), Quiet: true}
		}
	}
	a.flushMonitor(err)
	return a.fail(err)
}

// inertKey marks a command that touches no state: it takes no lock,
// writes nothing, starts nothing and waits for nothing. Such a command
// leaves Ctrl-C and a closed pipe to their defaults (see signalContext).
const inertKey = "agentx/inert"

// inert reports whether cmd is inert: marked so (version), cobra's help,
// or a completion script.
func inert(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[inertKey] != "" || c.HasParent() && (c.Name() == "help" || c.Name() == "completion") {
			return true
		}
	}
	return false
}

// errOutputClosed is the cause of a context cancelled because the reader
// of the output went away (SIGPIPE).
var errOutputClosed = errors.New("the output was closed")

// prepare resolves the global options, puts who acts in the command's
// context for every hub call it makes, and checks that cmd's required
// flags were given; it runs before every command.
func (a *App) prepare(cmd *cobra.Command) error {
	a.started = true
	a.cmd = cmd
	if a.armSignals != nil && !inert(cmd) {
		a.armSignals()
	}
	cmd.SetContext(router.WithCaller(cmd.Context(), a.caller()))
	a.ctx = cmd.Context()
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return &usageError{Err: err} // cobra's own check would make it exit 1
	}
	if a.root == "" {
		a.root = a.getenv("AGENTX_ROOT")
	}
	now, err := clock.FromEnv(a.getenv(clock.EnvVar))
	if err != nil {
		return &usageError{Err: err}
	}
	a.now = now
	return a.toFull(cmd)
}

// colorOn reports whether output may be coloured: a terminal, and none of
// --no-color, NO_COLOR or CLICOLOR=0.
func (a *App) colorOn() bool {
	return a.isTTY && !a.noColor && !a.json && a.getenv("NO_COLOR") == "" && a.getenv("CLICOLOR") != "0"
}

// paint returns a function that colours text when colour is on.
func (a *App) paint(attrs ...color.Attribute) func(string) string {
	c := color.New(attrs...)
	if a.colorOn() {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return func(s string) string { return c.Sprint(s) }
}

// startDir is where a workspace search begins: --root, AGENTX_ROOT or the
// working directory.
func (a *App) startDir() (string, error) {
	if a.root != "" {
		return filepath.Abs(a.root)
	}
	return os.Getwd()
}

// open finds the workspace and loads its configuration and workflows.
func (a *App) open() (*workspace.Workspace, error) {
	if a.ws != nil {
		return a.ws, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	ws, err := workspace.Open(a.root, cwd, a.now)
	if err != nil {
		return nil, err
	}
	a.setOffline(ws)
	a.logPulled(ws)
	a.ws = ws
	return ws, nil
}

// runE adapts a command body to cobra, with the context.
var runE = ext.RunE

// printf writes text output (never used under --json).
func (a *App) printf(format string, args ...any) {
	fmt.Fprintf(a.stdout, format, args...)
}

const (
	boldAttr  = color.Bold
	faintAttr = color.Faint
)
