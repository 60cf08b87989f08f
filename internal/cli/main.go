package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"

	"github.com/mattn/go-isatty"

	"github.com/agentx-cli/agentx/internal/utczone"
)

// Main runs agentx on the process's arguments and streams and returns its
// exit code.
func Main() int {
	utczone.Restore() // before anything reads the environment
	// A command runs for milliseconds and keeps little: collecting garbage
	// a quarter as often saves CPU (about a tenth of agentx events on a
	// long log). No soft memory limit: the commands that read every ledger
	// hold one ledger at a time (router.Hub.Each), so GOGC alone keeps
	// their heap small, while a fixed limit is a cliff: a command that
	// keeps more than it makes the collector run back to back (64 MiB took
	// clarify list --all on 120,000 clarifications, when it kept them all,
	// 140 MB, from 1.2 s of CPU to about 4).
	// GOGC and GOMEMLIMIT, when set, still decide.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, cancel, stop := signalContext()
	code := run(ctx, &App{
		armSignals: func() { arm(cancel) },
		stdin:      os.Stdin,
		stdout:     closedOutput{os.Stdout, cancel},
		stderr:     closedOutput{os.Stderr, cancel},
		getenv:     os.Getenv,
		isTTY:      isatty.IsTerminal(os.Stdout.Fd()),
		wakeStep:   selfStep(),
	}, os.Args[1:])
	stop()
	return code
}

// signalContext is cancelled by Ctrl-C (SIGINT) and SIGTERM, once armed
// (arm), and by cancel. SIGPIPE is caught only so that it does not kill
// the process: a write to a pipe whose reader went away then fails with
// EPIPE, and closedOutput turns that into a cancellation with cause
// errOutputClosed, so the command stops and cleans up like an interrupted
// one, quietly (agentx demo | head). A SIGPIPE from any other pipe (a
// responder that exited without reading its prompt) cancels nothing. stop
// restores the default handling.
//
// The signals are taken over when a command starts (App.prepare), unless
// it is inert: version, help and completion take no lock, write nothing
// and wait for nothing, so they have nothing to clean up, and for them the
// defaults stand (Ctrl-C, or a closed pipe, ends the process). Taking the
// signals over starts an OS thread for the runtime's signal handling,
// about a fifth of the start of a command that needs none.
func signalContext() (ctx context.Context, cancel func(error), stop func()) {
	ctx, cancel = context.WithCancelCause(context.Background())
	return ctx, cancel, func() {
		armed.mu.Lock()
		if armed.sigs != nil {
			signal.Stop(armed.sigs)
		}
		armed.mu.Unlock()
		cancel(nil)
	}
}

// armed is the process's subscription to signals, once arm made it.
var armed struct {
	mu   sync.Mutex
	sigs chan os.Signal
}

// arm takes the signals over for the command that cancel cancels, once.
func arm(cancel func(error)) {
	armed.mu.Lock()
	defer armed.mu.Unlock()
	if armed.sigs != nil {
		return
	}
	armed.sigs = make(chan os.Signal, 1)
	signal.Notify(armed.sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	go func(sigs <-chan os.Signal) {
		for s := range sigs {
			if s != syscall.SIGPIPE {
				cancel(context.Canceled)
			}
		}
	}(armed.sigs)
}

// closedOutput is stdout or stderr: a write that finds the reader gone
// cancels the command (errOutputClosed).
type closedOutput struct {
	w      io.Writer
	cancel func(error)
}

func (o closedOutput) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		o.cancel(errOutputClosed)
	}
	return n, err
}
