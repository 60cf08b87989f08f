package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/monitor"
)

// envNoMonitor turns the side-effect monitor off (also in hooks).
const envNoMonitor = "AGENTX_NO_MONITOR"

// runsMonitor marks the commands that run the monitor (every clarify
// subcommand, ready, the hooks, monitor): the side pass after the
// command's body runs it once (see runE).
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

// waiting tells the side monitor that the command is about to wait up to
// timeout for an answer: it may spend that long making a retry that is due
// (the wait would otherwise run it right after).
func (w *sideWork) waiting(timeout time.Duration) {
	if w.side != nil && timeout > monitor.DefaultBudget {
		w.side.budget = timeout
	}
}

// monitorDuring records a run of the monitor that a command made on its
// own account (a wait runs it when a retry comes due) in the command's
// side report, so that it is printed like the side monitor's findings.
func (w *sideWork) monitorDuring(r *monitor.Report) {
	s := w.side
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
func (w *sideWork) sideView() any {
	if w.side == nil || w.side.own || w.side.report == nil || w.side.report.Quiet() {
		return nil
	}
	r := w.side.report
	return struct {
		Findings []monitor.Finding `json:"findings"`
		Problems []monitor.Problem `json:"problems,omitempty"`
		Index    string            `json:"index,omitempty"`
	}{r.Acted(), r.Problems, r.Index}
}

// flush prints the side monitor's findings on w, once, in text mode
// (under --json they are in the envelope: emit, or fail's error
// envelope). Nothing when the report is the command's output (own).
func (s *sideMonitor) flush(w io.Writer, json bool) {
	if s == nil || s.own || s.printed || !s.ran {
		return
	}
	s.printed = true
	if !json && s.report != nil && !s.report.Quiet() {
		writeSide(w, s.report)
	}
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
