package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

// A command's life is one function, in one order (docs/architecture.md):
//
//  1. prepare (App.prepare, before every command): flags, clock, who
//     acts, signals; the monitor is armed for the commands marked
//     runsMonitor;
//  2. the body: its checks and its change. The workspace and hub are
//     opened on first use (App.hub), which also brings the local copies up
//     to the remote, once;
//  3. the side pass (sidePass, sidework.go), the same one the MCP server
//     runs around each tool call, the desk after each action and agentx
//     watch every turn. For a command: the channels (GitHub, Slack) read
//     and the monitor run, once, for the commands that run it; then
//     agent-status.json derived when the command changed something;
//  4. the view (App.later), inside the pass: what reads the state the
//     monitor left, or waits for an answer; then print: what the body
//     emitted before the monitor ran is printed now, with the monitor's
//     findings; the findings in text mode on stderr;
//  5. the rest of the pass: what changed is pushed to the channels (after
//     the monitor ran, or when the body asked for it), agent-status.json
//     derived again; an agent with an [agents.NAME] resume command, whose
//     turn has ended, is woken with what came back to its questions
//     (wake.Waker); then an answer nobody picked up in time is acted on,
//     once: its asker woken once more, or [notify] told.
//
// Printing runs nothing and writes no state; no step replaces the process.
func (a *App) runE(fn func(ctx context.Context, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		err := fn(ctx, cmd, args)
		steps := sideSteps{status: true, push: a.pushAfter, wake: !a.noWake, undelivered: !a.noWake}
		var usage *usageError
		var timeout *lock.TimeoutError
		// The monitor, once; not after a usage error (nothing was meant to
		// run), nor after a lock timeout: a command waits for a lock once.
		if s := a.side; s != nil && !s.ran && !errors.As(err, &usage) && !errors.As(err, &timeout) {
			s.ran = true
			if _, _, herr := a.hub(); herr == nil { // else the command itself reports it
				steps.read, steps.monitor, steps.push = true, s, true
			}
		}
		a.pushAfter = false
		_, err = a.sidePass().command().run(ctx, steps, func() error { return a.print(ctx, err) })
		return err
	}
}

// sidePass is this process's side pass, made once.
func (a *App) sidePass() *sidePass {
	if a.pass == nil {
		a.pass = &sidePass{
			hub:        func() *router.Hub { return a.hb },
			getenv:     a.getenv,
			warn:       func(err error) { a.warnf("%v", err) },
			warnAs:     func(name string) func(error) { return func(err error) { a.warnf("%s: %v", name, err) } },
			refresh:    a.remoteRefresh,
			wait:       a.remoteWait,
			wakeStep:   a.wakeStep,
			pulled:     &a.pulled,
			warnBroken: a.warnBroken,
		}
	}
	return a.pass
}

// print is a command's view and printing, in the side pass: the view,
// when the body succeeded; what the body emitted before the monitor ran;
// the monitor's findings on stderr, once, in text mode (under --json they
// are in the envelope: emit, or fail's error envelope).
func (a *App) print(ctx context.Context, err error) error {
	if view := a.then; err == nil && view != nil {
		a.then = nil
		err = view(ctx)
	}
	outs := a.outs
	a.outs = nil
	for _, out := range outs {
		if perr := out(); err == nil {
			err = perr
		}
	}
	a.side.flush(a.stderr, a.json)
	return err
}

// later makes view the command's view: run after the monitor, so that it
// reads the state the monitor left (a list, a gate) or waits for an answer
// once the monitor has escalated what a new question deadlocked.
func (w *sideWork) later(view func(ctx context.Context) error) error {
	if prev := w.then; prev != nil {
		w.then = func(ctx context.Context) error {
			if err := prev(ctx); err != nil {
				return err
			}
			return view(ctx)
		}
		return nil
	}
	w.then = view
	return nil
}

// monitorAs arms the monitor for a command whose output is the monitor's
// report (hook, monitor), even with AGENTX_NO_MONITOR when force is set.
func (a *App) monitorAs(force bool) *sideMonitor {
	if a.side == nil && (force || !a.monitorOff()) {
		a.side = &sideMonitor{}
	}
	if a.side != nil {
		a.side.own = true
	}
	return a.side
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
