package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/frontends/wake"
	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/ledger"
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
//  3. the monitor, once (runMonitor), for the commands that run it: new
//     answers from GitHub and Slack are read first;
//  4. the view (App.later): what reads the state the monitor left, or
//     waits for an answer;
//  5. print: what the body emitted before the monitor ran is printed now,
//     with the monitor's findings; the findings in text mode on stderr;
//  6. push: what changed is mirrored to GitHub and Slack;
//     agent-status.json is derived again after the monitor and after the
//     push, when the command changed something (syncStatus);
//  7. wake: an agent with an [agents.NAME] resume command, whose turn has
//     ended, is woken with what came back to its questions (wake.Waker);
//     then an answer nobody picked up in time is acted on, once: its asker
//     woken once more, or [notify] told (App.undelivered).
//
// Printing runs nothing and writes no state; no step replaces the process.
func (a *App) runE(fn func(ctx context.Context, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		return a.lifecycle(cmd.Context(), func(ctx context.Context) error { return fn(ctx, cmd, args) })
	}
}

// lifecycle runs a command's body and the steps after it (see runE).
func (a *App) lifecycle(ctx context.Context, body func(context.Context) error) error {
	err := body(ctx)
	var usage *usageError
	var timeout *lock.TimeoutError
	// Not after a usage error (nothing was meant to run), nor after a lock
	// timeout: a command waits for a lock once.
	if !errors.As(err, &usage) && !errors.As(err, &timeout) {
		a.runMonitor(ctx)
	}
	a.syncStatus(ctx)
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
	a.flushMonitor()
	a.push(ctx)
	a.syncStatus(ctx)
	a.wakeAgents(ctx)
	a.undelivered(ctx)
	return err
}

// syncStatus derives agent-status.json again when this command changed
// something (a question, an answer, a hook, the monitor's moves, changes
// pulled from the remote): after the monitor, so that a waiting asker
// shows as blocked while it waits, and again at the end for what the view
// and the channels changed. Outside every issue's lock: it reads all of
// them. The file is advisory, so a failure is a warning.
func (a *App) syncStatus(ctx context.Context) {
	if a.hb == nil {
		return
	}
	n := a.hb.Changes()
	if n == a.statusAt && !a.pulled.Swap(false) {
		return
	}
	a.statusAt = n
	if err := a.hb.SyncAgentStatus(context.WithoutCancel(ctx)); err != nil {
		a.warnf("%v", err)
	}
}

// wakeAgents wakes, once each, the agents that configure a resume command
// and have something new: whichever agentx process recorded the answer (or
// the next one, if it was killed) starts the command. Nothing for a
// command that opened no hub, or a workspace where no agent has one.
// It returns the resume commands it started.
func (a *App) wakeAgents(ctx context.Context) []wake.Woke {
	if a.hb == nil || a.noWake {
		return nil
	}
	w := a.waker(a.hb)
	return w.Run(context.WithoutCancel(ctx))
}

// waker wakes agents over h, running only the resume commands this
// machine trusts (h.Trust).
func (a *App) waker(h *router.Hub) wake.Waker {
	agents := h.Rules().Config.Agents
	return wake.Waker{Store: h.Store, Agents: agents, Root: a.ws.Root, Step: a.wakeStep, Warn: func(err error) { a.warnf("%v", err) },
		Allow: func(agent string) bool { return h.Trust.Allow(trust.Resume(agent, agents[agent].Resume)) }}
}

// undelivered acts, once each, on the answers nobody picked up (their
// receipts are overdue): their askers are woken once more, or [notify] is
// told (kind "undelivered"). At most once a minute per workspace, and
// only where [notify] is configured or some agent has a resume command;
// otherwise, and when it is not due, it costs a stat (wake.Waker.Undelivered).
func (a *App) undelivered(ctx context.Context) []wake.Overdue {
	if a.hb == nil || a.noWake {
		return nil
	}
	h := a.hb
	w := a.waker(h)
	var notify wake.NotifyFunc
	if n := h.Notifier(); n != nil {
		notify = func(ctx context.Context, issue int, c *ledger.Clarification, r inbox.Receipt) error {
			payload := struct {
				Kind string `json:"kind"`
				router.Record
				Receipt inbox.Receipt `json:"receipt"`
			}{"undelivered", router.Record{IssueNumber: issue, Clarification: c}, r}
			return router.Notify(ctx, n.Command, h.Dir, payload, n.Timeout.Duration)
		}
	}
	return w.Undelivered(context.WithoutCancel(ctx), notify)
}

// later makes view the command's view: run after the monitor, so that it
// reads the state the monitor left (a list, a gate) or waits for an answer
// once the monitor has escalated what a new question deadlocked.
func (a *App) later(view func(ctx context.Context) error) error {
	if prev := a.then; prev != nil {
		a.then = func(ctx context.Context) error {
			if err := prev(ctx); err != nil {
				return err
			}
			return view(ctx)
		}
		return nil
	}
	a.then = view
	return nil
}

// push mirrors what the command changed to GitHub and Slack: after the
// monitor ran, or when the body asked for it (a proposal to post).
func (a *App) push(ctx context.Context) {
	if !a.pushAfter || a.hb == nil {
		return
	}
	a.pushAfter = false
	a.outsideSide(ctx, a.hb, false)
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
