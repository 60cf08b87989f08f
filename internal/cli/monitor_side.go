package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/monitor"
	"github.com/agentx-cli/agentx/router"
)

// envNoMonitor turns the side-effect monitor off (also in hooks).
const envNoMonitor = "AGENTX_NO_MONITOR"

// sideMonitor is the monitor run as a side effect of a command (`ready` and
// every `clarify` subcommand): once per command, after its work (or before
// it, where the command asks with monitorNow), never changing its exit code.
type sideMonitor struct {
	ctx     context.Context
	report  *monitor.Report
	ran     bool
	printed bool
	budget  time.Duration // for retries; 0: monitor.DefaultBudget
}

// monitorOff reports whether AGENTX_NO_MONITOR turns the monitor off.
func (a *App) monitorOff() bool {
	v := a.getenv(envNoMonitor)
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// armMonitor arranges for the monitor to run as a side effect of the
// command being run.
func (a *App) armMonitor(ctx context.Context) {
	if a.side == nil && !a.monitorOff() {
		a.side = &sideMonitor{ctx: ctx}
	}
}

// monitorNow runs the armed side monitor unless it already ran, over h (or
// nil: a hub it opens), and returns its report (nil when it is off, or the
// workspace cannot be opened: the command itself reports that).
func (a *App) monitorNow(h *router.Hub) *monitor.Report {
	s := a.side
	if s == nil || s.ran {
		if s == nil {
			return nil
		}
		return s.report
	}
	s.ran = true
	if h == nil {
		var err error
		if _, h, err = a.hub(); err != nil {
			return nil
		}
	}
	a.outsideSide(s.ctx, h, true) // new answers from GitHub and Slack first: the monitor sees them
	m := monitor.New(h)
	m.SkipQuiet = true // nothing due and nothing changed since a quiet scan: no scan
	if s.budget > 0 {
		m.Budget = s.budget
	}
	s.report = m.Run(s.ctx, nil)
	a.outsideSide(s.ctx, h, false) // then mirror what changed, the monitor's work included
	return s.report
}

// waiting tells the side monitor that the command is about to wait up to
// timeout for an answer: it may spend that long making a retry that is due
// (the wait would otherwise run it right after).
func (a *App) waiting(timeout time.Duration) {
	if a.side != nil && timeout > monitor.DefaultBudget {
		a.side.budget = timeout
	}
}

// monitorDuring records a run of the monitor that a command made on its
// own account (a wait runs it when a retry comes due) in the command's
// side report, so that it is printed like the side monitor's findings.
func (a *App) monitorDuring(r *monitor.Report) {
	s := a.side
	if s == nil || r == nil {
		return
	}
	if s.report == nil {
		s.ran, s.report = true, r
		return
	}
	s.report.Findings = append(s.report.Findings, r.Findings...)
	s.report.Problems = append(s.report.Problems, r.Problems...)
	if s.report.Index == "" {
		s.report.Index = r.Index
	}
}

// sideView is what a command's JSON envelope carries in its monitor field:
// nil when the monitor had nothing to say. Findings another process had
// already handled are left out: this command did nothing about them.
func (a *App) sideView() any {
	if a.side == nil || a.side.report == nil || a.side.report.Quiet() {
		return nil
	}
	r := a.side.report
	return struct {
		Findings []monitor.Finding `json:"findings"`
		Problems []monitor.Problem `json:"problems,omitempty"`
		Index    string            `json:"index,omitempty"`
	}{r.Acted(), r.Problems, r.Index}
}

// flushMonitor ends the side monitor's part in a command that finished
// with err: it runs if it has not (not after a usage error), and in text
// mode its findings go to stderr. Under --json they are in the envelope
// (emit, or fail's error envelope).
func (a *App) flushMonitor(err error) {
	var usage *usageError
	var timeout *lock.TimeoutError
	// Not after a lock timeout either: a command waits for a lock once.
	if a.side == nil || a.side.printed || errors.As(err, &usage) || errors.As(err, &timeout) {
		return
	}
	r := a.monitorNow(nil)
	a.side.printed = true
	if a.json || r == nil || r.Quiet() {
		return
	}
	writeSide(a.stderr, r)
}

// writeSide prints a side-effect report: one line per finding and problem.
func writeSide(w io.Writer, r *monitor.Report) {
	if r.Index != "" {
		fmt.Fprintf(w, "agentx: monitor: index %s\n", safetext.Line(r.Index))
	}
	for _, f := range r.Acted() {
		fmt.Fprintf(w, "agentx: monitor: %s\n", findingLine(f))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "agentx: monitor: %s\n", safetext.Line(p.Message))
	}
}

// findingLine is a finding on one line: what happened to which
// clarification, and why.
func findingLine(f monitor.Finding) string {
	return safetext.Line(fmt.Sprintf("%s (#%d %s -> %s) %s: %s", f.ID, f.Issue, f.From, f.To, outcome(f), f.Reason))
}

// outcome says what the monitor did (or would do) about a finding.
func outcome(f monitor.Finding) string {
	switch f.Result {
	case monitor.Planned:
		return "would " + planned(f)
	case monitor.Skipped:
		return "skipped (" + f.Detail + ")"
	case monitor.Failed:
		return "could not " + planned(f) + " (" + f.Error + ")"
	}
	return f.Detail
}

func planned(f monitor.Finding) string {
	switch f.Action {
	case monitor.ActMarkStale:
		if f.Retry {
			return "mark it stale and retry"
		}
		return "mark it stale"
	case monitor.ActRetry:
		return "retry"
	}
	return string(f.Action)
}
