package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/channels/ghmirror"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/channels/slackmode"
	"github.com/agentx-cli/agentx/internal/clock"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// App is one run of the command line. It is made of small parts, each with
// one job: the run's streams and environment (the fields below, which
// Main fills from the process and a test from buffers), the global flags,
// the command being run, the workspace it opened and the work the
// lifecycle does after the body (lifecycle.go).
type App struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	isTTY          bool
	// armSignals takes Ctrl-C, SIGTERM and SIGPIPE over (see
	// signalContext); nil in tests
	armSignals func()
	// wakeStep is this program as a resume command's starting step
	// (agentx wake-exec, see wake.Waker.Step); nil in an in-process run,
	// which starts resume commands itself
	wakeStep []string

	globalFlags
	command
	opened
	sideWork
}

// globalFlags are the flags every command takes.
type globalFlags struct {
	root    string
	json    bool
	noColor bool
	offline bool   // --offline: never reach the remote
	as      string // --as: the person acting as human
}

// command is the command being run, once its flags are parsed (prepare).
type command struct {
	cmd     *cobra.Command  // the command run
	ctx     context.Context // the command's, for work done on the side (the remote's refresh)
	now     clock.Clock
	args    []string       // the command line, as given (shown when a person confirms)
	started bool           // set once flags parsed and a command began to run
	who     *router.Caller // who this process acts as (caller)
}

// opened is what the command opened, once each: the workspace, the hub
// over it (shared with the monitor), and GitHub and Slack modes.
type opened struct {
	ws *workspace.Workspace
	hb *router.Hub
	// refreshed: the remote mode's refresh ran for this command (see hub)
	refreshed bool
	// fetchedAt: when the refresh found the refs fetched within the
	// [remote] interval, the time of that fetch (zero: fetched now, or no
	// remote); wide: the command reads the whole workspace (list, ready,
	// stats), so it says how old that copy is
	fetchedAt time.Time
	wide      bool

	ghSide *ghmirror.Side // nil: not yet opened
	sl     *slackmode.Mode
	slSide *relay.Mode // nil: not yet opened
}

// sideWork is the command's side work (sidework.go): the monitor's run,
// the view run after it, what was emitted before it, whether to push to
// the channels at the end, and this process's side pass.
type sideWork struct {
	side      *sideMonitor // nil: the command does not run the monitor
	then      func(ctx context.Context) error
	outs      []func() error
	pushAfter bool
	holdGiven bool // hook stop: --hold was given
	noWake    bool // the scope check and completion: never start anything
	// pulled is set when the remote brought changes: agent-status.json is
	// derived again (sidePass.status)
	pulled atomic.Bool
	pass   *sidePass // made on first use (App.sidePass)
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, a *App, args []string) int {
	first := ""
	if len(args) > 0 {
		first = args[0]
	}
	cmd := newRoot(a, first)
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		// wiring the completions walks every command's flags: only a
		// shell asking for completions pays for it
		registerCompletions(a, cmd)
	}
	a.args = args
	cmd.SetArgs(args)
	cmd.SetIn(a.stdin)
	cmd.SetOut(a.stdout)
	cmd.SetErr(a.stderr)
	err := unknownCommand(cmd, args)
	if err == nil {
		err = cmd.ExecuteContext(ctx)
	}
	defer func() {
		if !a.json {
			a.noteUnsynced(a.stderr, a.warnf)
		}
	}()
	if err == nil {
		return 0
	}
	if !a.started {
		// cobra failed before parsing flags (unknown command or flag): honour
		// --json all the same, so scripts always get JSON errors.
		a.json = a.json || slices.Contains(args, "--json")
		if _, ok := errors.AsType[*usageError](err); !ok {
			err = &usageError{Err: err}
		}
	}
	if ctx.Err() != nil {
		err = &interruptedError{err: err}
		if errors.Is(context.Cause(ctx), errOutputClosed) {
			// nobody reads the output any more: nothing to tell them
			err = &codedError{Code: ExitInterrupted, Msg: err.Error(), Quiet: true}
		}
	}
	code := a.fail(err)
	if code == ExitUsage.N && errorExit(err) != ExitRewake && clientHook(cmd, args) {
		code = ExitFailure.N // a client hook's usage error must not block (clientHookKey)
	}
	return code
}

// clientHook reports whether args run a command that a client runs as a
// hook (clientHookKey), or the inbox in a client hook's format: found
// even when its flags did not parse.
func clientHook(root *cobra.Command, args []string) bool {
	c, _, err := root.Find(args)
	if err != nil || c == nil {
		return false
	}
	if c.Annotations[clientHookKey] != "" {
		return true
	}
	return c.Name() == "inbox" && slices.ContainsFunc(args, func(s string) bool {
		return s == formatClaudeHook || s == "--format="+formatClaudeHook
	})
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
	if annotated(cmd, runsMonitor) && !a.monitorOff() {
		a.side = &sideMonitor{}
	}
	return nil
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
	if broken := ws.Rules.Broken(); len(broken) > 0 {
		if annotated(a.cmd, allRules) {
			return nil, broken
		}
		a.warnBroken(broken)
	}
	setOffline(ws, a.offline)
	nameHost(ws, a.getenv(envHost), a.warnf)
	logPulled(ws, &a.pulled, a.warnf)
	a.ws = ws
	return ws, nil
}

// allRules marks a command that answers for every workflow (ready, the
// gate, and workflow validate): a workflow file that does not load fails
// it (exit 7), where any other command goes on without that workflow.
const allRules = "agentx/all-rules"

// warnBroken tells of each workflow file the workspace's rules left out
// because it does not load: its first problem (file, line), once a
// command. What uses its workflow fails, naming the problems.
func (a *App) warnBroken(broken workflow.Errors) {
	for i := 0; i < len(broken); {
		j := i + 1
		for j < len(broken) && broken[j].File == broken[i].File {
			j++
		}
		more := ""
		if n := j - i - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more %s)", n, words.Plural(n, "problem", "problems"))
		}
		a.warnf("workflow file left out: %v%s; what uses its workflow fails until it is fixed (agentx workflow validate lists every problem)", broken[i], more)
		i = j
	}
}

// remoteRefresh brings the local copies up to the remote, at most once per
// [remote] interval (nothing without a remote).
func (a *App) remoteRefresh(ctx context.Context) {
	if ws, err := a.open(); err == nil {
		a.remoteSide(ctx, ws)
	}
}

// printf writes text output (never used under --json).
func (a *App) printf(format string, args ...any) {
	fmt.Fprintf(a.stdout, format, args...)
}

const (
	boldAttr  = color.Bold
	faintAttr = color.Faint
)
