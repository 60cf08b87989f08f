package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/cli/ext"
	"github.com/agentx-cli/agentx/internal/clock"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/router"
)

// EnvFull names the agentx-full binary to run, in place of the one beside
// agentx or on PATH.
const EnvFull = "AGENTX_FULL"

// envHandedOver marks the environment of a process agentx handed a command
// to: a lean agentx that finds it was run in agentx-full's place (a wrong
// $AGENTX_FULL) says so instead of handing the command on again.
const envHandedOver = "AGENTX_HANDED_OVER"

// fullName is the full binary's file name.
func fullName() string {
	if runtime.GOOS == "windows" {
		return "agentx-full.exe"
	}
	return "agentx-full"
}

// fullPath finds agentx-full: $AGENTX_FULL, else beside this executable,
// else on PATH.
func (a *App) fullPath() (string, error) {
	if p := a.getenv(EnvFull); p != "" {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return "", &codedError{Code: ext.ExitNoFull, Msg: fmt.Sprintf("%s=%s: not a file: this needs agentx-full", EnvFull, safetext.Line(p)),
				Todo: "point " + EnvFull + " at the agentx-full binary, or unset it to use the one beside agentx"}
		}
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), fullName())
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(fullName()); err == nil {
		return p, nil
	}
	return "", &codedError{Code: ext.ExitNoFull, Msg: "this needs agentx-full (the MCP server, GitHub and Slack modes, doctor and skills), which is not beside agentx, on PATH or at $" + EnvFull,
		Todo: "install both binaries: go install github.com/agentx-cli/agentx/cmd/...@latest"}
}

// runFull hands the whole command line to agentx-full: the process becomes
// it (where the system can), so its exit code, output and pid are the
// command's. Only Main can: an in-process run (a test) has no exec and
// gets the error instead.
func (a *App) runFull() error {
	if a.exec == nil {
		return &codedError{Code: ext.ExitNoFull, Msg: "this needs agentx-full, and an in-process run cannot start it"}
	}
	p, err := a.fullPath()
	if err != nil {
		return err
	}
	if a.handedOver {
		// this lean agentx was itself started as agentx-full: running
		// "agentx-full" again would never end
		return &codedError{Code: ext.ExitNoFull, Msg: fmt.Sprintf("%s is not agentx-full: it handed the command back to agentx", safetext.Line(p)),
			Todo: "point " + EnvFull + " at the agentx-full binary (go install github.com/agentx-cli/agentx/cmd/...@latest puts it beside agentx)"}
	}
	code, err := a.exec(p, a.args, append(os.Environ(), envHandedOver+"=1"))
	if err != nil {
		return err
	}
	return &handedOver{code: code}
}

// handedOver ends a command that agentx-full ran in its place (where the
// process could not become it): its exit code is the command's, and
// nothing more is done or printed here.
type handedOver struct{ code int }

func (h *handedOver) Error() string { return "ran agentx-full" }

// fullStubs are the lean binary's stand-ins for FullCommands: each runs
// agentx-full with the same command line.
func (a *App) fullStubs() []*cobra.Command {
	var cmds []*cobra.Command
	for _, c := range ext.FullCommands {
		stub := &cobra.Command{
			Use:                c.Name,
			Short:              c.Short,
			DisableFlagParsing: true, // agentx-full parses them
			RunE: func(_ *cobra.Command, args []string) error {
				// flags are agentx-full's to parse; an error before it runs
				// still honours --json
				a.json = a.json || slices.Contains(args, "--json")
				return a.runFull()
			},
		}
		// a shell's completion of agentx github ...: agentx-full's, which
		// knows the subcommands and flags (the stub parses no flags, so
		// cobra asks this for them too)
		stub.ValidArgsFunction = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			a.helpErr = a.runFull()
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		// agentx help github: agentx-full's help, which knows the flags
		stub.SetHelpFunc(func(*cobra.Command, []string) {
			a.helpErr = a.runFull() // cobra's help cannot fail: run returns it
		})
		cmds = append(cmds, stub)
	}
	return cmds
}

// reachesOutside is the annotation of the commands that read or mirror
// GitHub and Slack (the monitor's side effect, clarify wait, hooks,
// proposals): in the lean binary, in a workspace that configures either,
// they run agentx-full.
const reachesOutside = "agentx:outside"

// toFull runs agentx-full instead of cmd when this is the lean binary, cmd
// reaches the outside modes and the workspace configures one. It runs
// before the command does anything: nothing is read from stdin or written
// yet. A workspace that cannot be opened is the command's to report.
// Without agentx-full the command runs here, without GitHub and Slack,
// as when they cannot be reached: a warning, and what they would send
// stays queued for the next command that has them (the event log feeds
// their outboxes).
func (a *App) toFull(cmd *cobra.Command) error {
	if a.extra != nil || !annotated(cmd, reachesOutside) {
		return nil
	}
	ws, err := a.open()
	if err != nil || (ws.Rules.Config.GitHub == nil && ws.Rules.Config.Slack == nil) {
		return nil
	}
	if _, err := a.fullPath(); err != nil {
		a.warnf("GitHub and Slack modes run in agentx-full, which is not installed: this command runs without them, and what they would send stays queued (install both binaries: go install github.com/agentx-cli/agentx/cmd/...@latest)")
		return nil
	}
	return a.runFull()
}

// annotated reports whether cmd or one of its parents carries key.
func annotated(cmd *cobra.Command, key string) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[key] != "" {
			return true
		}
	}
	return false
}

// The App's parts that the full binary's commands use (ext.App).

var _ ext.App = (*App)(nil)

// Printf writes text output (never used under --json).
func (a *App) Printf(format string, args ...any) { a.printf(format, args...) }

// Warnf prints a warning on stderr, neutralised to one line.
func (a *App) Warnf(format string, args ...any) { a.warnf(format, args...) }

// Emit prints data under --json, else runs text.
func (a *App) Emit(data any, text func()) error { return a.emit(data, text) }

// JSON reports whether --json was given.
func (a *App) JSON() bool { return a.json }

// Getenv reads the run's environment.
func (a *App) Getenv(key string) string { return a.getenv(key) }

// Streams are the run's stdin, stdout and stderr.
func (a *App) Streams() (io.Reader, io.Writer, io.Writer) { return a.stdin, a.stdout, a.stderr }

// Now is the run's clock (AGENTX_NOW in tests).
func (a *App) Now() clock.Clock { return a.now }

// Open finds the workspace and loads its configuration and workflows, once
// per run.
func (a *App) Open() (*workspace.Workspace, error) { return a.open() }

// Hub opens the workspace and its hub, once per run.
func (a *App) Hub() (*workspace.Workspace, *router.Hub, error) { return a.hub() }

// RemoteRefresh brings the local copies up to the remote, at most once per
// [remote] interval (nothing without a remote).
func (a *App) RemoteRefresh(ctx context.Context) {
	if ws, err := a.open(); err == nil {
		a.remoteSide(ctx, ws)
	}
}

// RemoteWait is h.Wait that, with a remote, watches the clarification's
// ref while it waits.
func (a *App) RemoteWait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	return a.remoteWait(ctx, h, id, timeout)
}

// Issue is AGENTX_ISSUE, checked; nil when it is not set.
func (a *App) Issue() (*int, error) { return (&issueFlag{}).get(a) }

// MonitorOff reports whether AGENTX_NO_MONITOR turns the monitor (and the
// outside modes around it) off.
func (a *App) MonitorOff() bool { return a.monitorOff() }

// Actor is who acts: --as for a person, else the caller.
func (a *App) Actor(as string) (string, error) { return a.actor(as) }

// Version is agentx's version.
func (a *App) Version() string { return version() }

// Classify is the CLI's error mapping: exit code, code name and hint.
func (a *App) Classify(err error) (int, string, string) {
	c := errorExit(err)
	return c.N, c.Name, hintOf(err)
}

// WriteTable writes rows under header as aligned plain columns.
func (a *App) WriteTable(w io.Writer, header []string, rows [][]string) {
	t := table{}
	t.add(plain(header...)...)
	for _, r := range rows {
		t.add(plain(r...)...)
	}
	t.write(w, "")
}
