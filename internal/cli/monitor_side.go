package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/monitor"
	"github.com/agentx-cli/agentx/router"
)

// envNoMonitor turns the side-effect monitor off (also in hooks).
const envNoMonitor = "AGENTX_NO_MONITOR"

// runsMonitor marks the commands that run the monitor (every clarify
// subcommand, ready, the hooks, monitor): the lifecycle runs it once, after
// the command's body (see lifecycle).
const runsMonitor = "agentx/monitor"

// sideMonitor is the monitor's run in one command: once, after the
// command's body, never changing its exit code. What the command asked of
// it (a hook's phase, a dry run, a budget) is set by the body before.
type sideMonitor struct {
	report  *monitor.Report
	ran     bool
	printed bool
	budget  time.Duration // for retries; 0: monitor.DefaultBudget
	// own: the report is the command's output (hook, monitor), not a side
	// effect to print on stderr or in the envelope's monitor field
	own    bool
	hook   *monitor.Hook // a hook's phase, agent and issue
	dryRun bool          // monitor --dry-run
	whole  bool          // scan every issue even when nothing changed (no SkipQuiet), retries up to their timeouts
}

// monitorOff reports whether AGENTX_NO_MONITOR turns the monitor off.
func (a *App) monitorOff() bool {
	v := a.getenv(envNoMonitor)
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// runMonitor is the one place a command runs the monitor (the lifecycle
// calls it, once): what GitHub and Slack have first, so the monitor sees
// new answers, then the scan and its actions. What changed is pushed at the
// end of the command (push).
func (a *App) runMonitor(ctx context.Context) {
	s := a.side
	if s == nil || s.ran {
		return
	}
	s.ran = true
	_, h, err := a.hub()
	if err != nil {
		return // the command itself reports it
	}
	s.report = a.monitorTurn(ctx, h, s)
	a.pushAfter = true
}

// monitorTurn is one turn of the monitor as s asks it: what GitHub and
// Slack have first, then the scan and its actions. runMonitor makes it
// once per command; agentx watch makes one every interval.
func (a *App) monitorTurn(ctx context.Context, h *router.Hub, s *sideMonitor) *monitor.Report {
	a.outsideSide(ctx, h, true)
	m := newMonitor(h)
	m.SkipQuiet = !s.whole // nothing due and nothing changed since a quiet scan: no scan
	m.DryRun = s.dryRun
	switch {
	case s.whole:
		m.Budget = 0 // asked for by name: each retry may run up to its timeout
	case s.budget > 0:
		m.Budget = s.budget
	}
	return m.Run(ctx, s.hook)
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
	if a.side == nil || a.side.own || a.side.report == nil || a.side.report.Quiet() {
		return nil
	}
	r := a.side.report
	return struct {
		Findings []monitor.Finding `json:"findings"`
		Problems []monitor.Problem `json:"problems,omitempty"`
		Index    string            `json:"index,omitempty"`
	}{r.Acted(), r.Problems, r.Index}
}

// flushMonitor prints the side monitor's findings on stderr, once, in
// text mode (under --json they are in the envelope: emit, or fail's error
// envelope).
func (a *App) flushMonitor() {
	s := a.side
	if s == nil || s.own || s.printed || !s.ran {
		return
	}
	s.printed = true
	if a.json || s.report == nil || s.report.Quiet() {
		return
	}
	writeSide(a.stderr, s.report)
}

// writeSide prints a side-effect report on a command's stderr: one line
// per finding and problem. The index's state is left out: that the
// monitor built the index from the ledgers (a new clone, a remote mode's
// first fetch) is agentx's own business, not news for the person at an
// ordinary command; agentx monitor, watch and --json still say it, and
// doctor checks the index.
func writeSide(w io.Writer, r *monitor.Report) {
	for _, l := range sideLines(r, false) {
		fmt.Fprintf(w, "agentx: monitor: %s\n", l)
	}
}

// sideLines are a side-effect report's lines, neutralised: with index,
// the index's state, then one per finding acted on and one per problem.
func sideLines(r *monitor.Report, index bool) []string {
	var lines []string
	if index && r.Index != "" {
		lines = append(lines, "index "+safetext.Line(r.Index))
	}
	for _, f := range r.Acted() {
		lines = append(lines, findingLine(f))
	}
	for _, p := range r.Problems {
		lines = append(lines, safetext.Line(p.Message))
	}
	return lines
}

// findingLine is a finding on one line: what happened to which
// clarification, and why.
func findingLine(f monitor.Finding) string {
	return safetext.Line(fmt.Sprintf("%s (%s %s -> %s) %s: %s", f.ID, words.IssueRef(f.Issue), f.From, f.To, outcome(f), f.Reason))
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
