package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mattn/go-isatty"
)

func main() {
	ctx, stop := signalContext()
	code := run(ctx, &app{
		stdin:  os.Stdin,
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.Getenv,
		isTTY:  isatty.IsTerminal(os.Stdout.Fd()),
	}, os.Args[1:])
	stop()
	os.Exit(code)
}

// signalContext is cancelled by Ctrl-C (SIGINT), SIGTERM and SIGPIPE. A
// SIGPIPE (the reader of a pipe went away: agentx demo | head) no longer
// kills the process: the write fails with EPIPE and the command stops and
// cleans up like an interrupted one, quietly (the cause is
// errOutputClosed). stop restores the default handling.
func signalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	go func() {
		for s := range sigs {
			if s == syscall.SIGPIPE {
				cancel(errOutputClosed)
			} else {
				cancel(context.Canceled)
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel(nil)
	}
}
