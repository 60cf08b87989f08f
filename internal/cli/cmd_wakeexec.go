package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/wake"
)

// selfStep is this program as the step a resume command is started
// through (wake.Waker.Step): its path as run, made absolute (the step runs
// in the session's directory), else the executable.
func selfStep() []string {
	p := os.Args[0]
	if !strings.ContainsRune(p, os.PathSeparator) {
		if lp, err := exec.LookPath(p); err == nil {
			p = lp
		} else if e, err := os.Executable(); err == nil {
			p = e
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil // the waker starts the command itself
	}
	return []string{abs, "wake-exec"}
}

// newWakeExecCmd is the step a resume command is started through: it
// records the wake's claim started, under the agent's wake lock, and then
// becomes the command, so that a waker killed after starting it never
// leaves the claim to be started twice. Not for people: hidden.
func newWakeExecCmd(a *App) *cobra.Command {
	o := &wakeExecOptions{}
	return &cobra.Command{
		Use:                "wake-exec AGENT KEY -- COMMAND [ARG]...",
		Short:              "Start an agent's resume command for a wake's claim, once (run by agentx itself)",
		Hidden:             true,
		DisableFlagParsing: true,
		Annotations:        map[string]string{inertKey: ""},
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if len(args) < 4 || args[2] != "--" {
				return usage(fmt.Errorf("wake-exec: want AGENT KEY -- COMMAND, then its arguments"))
			}
			o.agent, o.key, o.argv = args[0], args[1], args[3:]
			return o.run(ctx, a)
		}),
	}
}

// wakeExecOptions are `agentx wake-exec`'s arguments: the agent, the
// wake's claim and the resume command.
type wakeExecOptions struct {
	agent, key string
	argv       []string
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *wakeExecOptions) run(ctx context.Context, a *App) error {
	ws, err := a.open()
	if err != nil {
		return err
	}
	mine, err := wake.StartClaimed(ctx, ws.Store, o.agent, o.key)
	if err != nil || !mine {
		return err // another step of the claim started it
	}
	return execCommand(o.argv)
}
