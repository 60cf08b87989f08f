package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/desk"
	"github.com/agentx-cli/agentx/internal/safetext"
)

// defaultDeskInterval is how often agentx desk does a command's side work
// (the remote, GitHub and Slack read, the monitor) while it serves.
const defaultDeskInterval = 10 * time.Second

func newDeskCmd(a *App) *cobra.Command {
	var (
		addr, as string
		noOpen   bool
		interval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "desk [--addr 127.0.0.1:PORT] [--as NAME] [--no-open]",
		Short: "A local web page for a person: the todo queue, live, each item answered in place",
		Long: `Serve the todo queue as a page on 127.0.0.1 (a free port, or --addr) and
open it in the browser (--no-open: only print the address). The address
carries a secret token made for this run and never written to a file; a
request without it is refused, and so is an action posted from another
page. The browser that is opened gets a one-time address instead, good
once within two minutes.

The page shows everything that waits on a person with its whole thread: an
answer box, the options as buttons, escalations settled with a decision,
proposals approved or rejected, evaluations settled. It follows the event
log, so an item answered anywhere else (the command line, Slack, GitHub,
another desk) leaves the page at once, saying who settled it. The person
acts as desk:NAME (NAME from --as, else git config user.email or user.name,
else $USER), through the same calls and checks as "agentx clarify answer",
"clarify resolve" and "proposals approve|reject"; only a person may run
it (not a process with AGENTX_AGENT set). Every --interval it does what a
command does on the side (the remote, GitHub and Slack, the monitor,
waking agents), as agentx watch does. Ctrl-C stops it (exit 130).`,
		Example: `  agentx desk
  agentx desk --as dana --addr 127.0.0.1:8765 --no-open`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if interval <= 0 {
				return usage(fmt.Errorf("--interval %s: must be above zero", interval))
			}
			if err := loopback(addr); err != nil {
				return err
			}
			if as != "" {
				a.as = as
			}
			name, err := a.caller().Human() // a person, allowed by [humans]
			if err != nil {
				return err
			}
			ws, h, err := a.hub()
			if err != nil {
				return err
			}
			pass := a.sidePass()
			pass.goLive(ws, h) // a long-lived process: trust and rules are looked at again as it goes
			s, err := desk.New(desk.Options{
				Hub: h, Person: name, Root: ws.Root,
				After: func(ctx context.Context) {
					// what a command does at its end, at once: agent-status.json, the push, the wake
					_, _ = pass.runTurn(ctx, sideSteps{status: true, push: true, wake: true}, nil)
				},
				Warn: func(err error) { a.warnf("%v", err) },
			})
			if err != nil {
				return err
			}
			ln, err := s.Listen(addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			defer func() { a.noWake = true }() // the desk woke agents as it went
			a.printf("agentx desk: %s\n", s.URL())
			a.printf("acting as %s in %s; Ctrl-C stops\n", safetext.Line(s.Person()), safetext.Line(ws.Root))
			if !noOpen {
				if u, err := s.OnceURL(); err == nil {
					if err := openBrowser(u); err != nil {
						a.warnf("desk: no browser opened (%v): open the address above", err)
					}
				}
			}
			w := newWatcher(a, pass)
			go func() {
				t := time.NewTicker(interval)
				defer t.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-t.C:
						s.Locked(func() { w.turn(ctx, false) })
					}
				}
			}()
			if err := s.Serve(ctx, ln); err != nil {
				return err
			}
			return ctx.Err()
		}),
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "where to serve: a loopback address and port (0: a free port)")
	cmd.Flags().StringVar(&as, "as", "", "the person at the desk (default: git user.email, user.name, $USER)")
	cmd.Flags().BoolVar(&noOpen, "no-open", false, "print the address only; do not open a browser")
	cmd.Flags().DurationVar(&interval, "interval", defaultDeskInterval, "how often to do the side work (remote, GitHub, Slack, monitor, waking agents)")
	return cmd
}

// loopback refuses an --addr that is not a loopback address: the desk is
// for the person at this machine.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usage(fmt.Errorf("--addr %q: want HOST:PORT, such as 127.0.0.1:8765", addr))
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return usage(fmt.Errorf("--addr %q: the desk serves only a loopback address (127.0.0.1, ::1, localhost)", addr))
	}
	return nil
}

// openBrowser starts the system's browser on u and does not wait for it.
func openBrowser(u string) error {
	var argv []string
	switch runtime.GOOS {
	case "darwin":
		argv = []string{"open", u}
	case "windows":
		argv = []string{"rundll32", "url.dll,FileProtocolHandler", u}
	default:
		argv = []string{"xdg-open", u}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return errors.New(argv[0] + " not found")
	}
	c := exec.Command(path, argv[1:]...)
	if err := c.Start(); err != nil {
		return err
	}
	go func() { _ = c.Wait() }()
	return nil
}
