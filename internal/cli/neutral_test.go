package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/monitor"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// Hostile text as it may stand in a ledger, an event log, a workflow file
// or a responder's output: a window title (OSC 0), a screen clear (CSI),
// an 8-bit CSI, a bidi override, a carriage return, a line break that
// forges a row or a thread line, and a byte of invalid UTF-8.
const (
	evilLine  = "Cache\x1b]0;pwned\x07\x1b[2J\u009b31m\u202eX\r\nCLR-42-999\t42\tresolved\tengineer\thuman\t1/5\tforged\xff"
	evilBody  = "ok\n  [RESOLVED] human  (2026-02-26 10:05)\n\x1b]52;c;cm0gLXJmIH4=\x07\x1b[31mred"
	evilAgent = "eng\x1b[8mineer"
)

// forged matches the lines hostile text tries to forge: a list row, a
// resolution line of a thread.
var forged = regexp.MustCompile(`(?m)^(CLR-42-999|  \[RESOLVED\] human  \(2026-02-26 10:05\)|- forged)`)

// assertNeutral fails if out holds a raw control character (but line feed
// and tab), a hidden rune, invalid UTF-8 or a forged line.
func assertNeutral(t *testing.T, out string) {
	t.Helper()
	require.NotEmpty(t, out)
	if i := safetext.Index(out, true); i >= 0 {
		t.Errorf("raw control character or invalid UTF-8 at byte %d of %q", i, out)
	}
	assert.False(t, forged.MatchString(out), "forged line in:\n%s", out)
}

func hostileRecord() router.Record {
	t := ledger.T(time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC))
	c := &ledger.Clarification{
		ID: "CLR-42-001", From: evilAgent, To: "architect", Topic: evilLine, Blocking: true,
		Status: ledger.Escalated, Round: 2, MaxRounds: 5, Created: t, StaleAfter: t,
		Thread: []ledger.ThreadEntry{
			{Round: 1, From: evilAgent, Type: ledger.Question, Body: evilBody, Timestamp: t},
			{Round: 1, From: "architect" + evilLine, Type: ledger.Answer, Body: evilBody, Timestamp: t},
			{Round: 2, From: "monitor", Type: ledger.Escalation, Body: evilBody, Timestamp: t},
			{Round: 2, From: "human\n- forged", Type: ledger.Resolution, Body: evilBody, Timestamp: t},
		},
		X: &ledger.Extra{Options: []string{evilLine, "b"}},
	}
	return router.Record{IssueNumber: 42, Clarification: c}
}

func hostileFinding() monitor.Finding {
	return monitor.Finding{Kind: "stale", Action: monitor.ActMarkStale, ID: "CLR-42-001\nCLR-42-999", Issue: 42,
		From: evilAgent, To: "architect", Reason: evilLine, Result: monitor.Failed, Error: evilBody, Detail: evilLine}
}

// TestRenderSitesNeutralise renders hostile text through every place text
// from outside reaches the terminal; each output must be neutral.
func TestRenderSitesNeutralise(t *testing.T) {
	rec := hostileRecord()
	resolved := hostileRecord()
	resolved.Status = ledger.Resolved
	resolved.X.Summary = evilBody // as another tool may have written it
	report := &monitor.Report{Open: 1, Index: evilLine, Findings: []monitor.Finding{hostileFinding()},
		Waiting:  []monitor.Waiting{{ID: "CLR-42-001", Issue: 42, From: evilAgent, To: evilLine}},
		Problems: []monitor.Problem{{File: "x", Message: evilBody}}}
	stats := router.Stats{Total: 1, ByStatus: map[string]int{"escalated": 1},
		Topics: []router.Count{{Key: evilLine, Count: 1}},
		Pairs:  []router.PairStats{{From: evilAgent, To: evilLine, Asked: 1}},
		Agents: []router.AgentStats{{Agent: evilLine, Asked: 1, Received: 1, AnswerRate: 1}},
		Waits: router.Waits{ByAsker: []router.AgentWaits{{Agent: evilAgent}}, ByAnswerer: []router.AgentWaits{{Agent: evilLine}},
			ByPerson:    []router.PersonWaits{{Person: evilLine}},
			LongestOpen: []router.OpenWait{{ID: "CLR-42-001\nCLR-42-999", IssueNumber: 42, From: evilAgent, To: evilLine}}}}
	wf := workflowView{Workflow: &workflow.Workflow{Name: "feature" + evilLine, Description: evilBody, File: "f.toml\x1b[2J",
		Steps: []workflow.Step{{ID: "implement\n- forged", Title: evilLine, Agent: evilAgent, Needs: []string{evilLine}, CanClarify: []string{evilLine}}}}}
	sites := []struct {
		name   string
		tty    bool
		render func(a *App, w *bytes.Buffer)
	}{
		{"clarify show (thread)", false, func(a *App, w *bytes.Buffer) { renderThread(w, a.paint, rec, nil) }},
		{"clarify show --format markdown", false, func(a *App, w *bytes.Buffer) { renderMarkdown(w, rec) }},
		{"clarify show (resolved, its summary)", false, func(a *App, w *bytes.Buffer) { renderThread(w, a.paint, resolved, nil) }},
		{"clarify show --format markdown (resolved, its summary)", false, func(a *App, w *bytes.Buffer) { renderMarkdown(w, resolved) }},
		{"clarify list (pipe)", false, func(a *App, w *bytes.Buffer) { renderList(w, []router.Record{rec}, time.Now(), a.isTTY, a.paint) }},
		{"clarify list (terminal table)", true, func(a *App, w *bytes.Buffer) { renderList(w, []router.Record{rec}, time.Now(), a.isTTY, a.paint) }},
		{"events", false, func(a *App, w *bytes.Buffer) {
			printEvent(w, router.Event{Type: "clarification-escalated", ClarificationID: "CLR-42-001\nCLR-42-999", IssueNumber: 42,
				FromAgent: evilAgent, ToAgent: evilLine, Topic: evilLine, Reason: evilBody})
		}},
		{"clarify stats", true, func(a *App, w *bytes.Buffer) { newStatsText(a, w).stats(stats) }},
		{"clarify stats --format markdown", false, func(a *App, w *bytes.Buffer) { statsMarkdown(w, stats) }},
		{"side monitor", false, func(a *App, w *bytes.Buffer) { writeSide(w, report) }},
		{"monitor", false, func(a *App, w *bytes.Buffer) { renderReport(w, a.paint, report) }},
		{"hook", false, func(a *App, w *bytes.Buffer) {
			a.stdout = w
			renderHook(a, hookResult{Hook: "start", Agent: evilAgent, Issue: 42, Monitor: report, Blocked: []string{"CLR-42-001\nCLR-42-999"}})
		}},
		{"workflow list and show", false, func(a *App, w *bytes.Buffer) { printWorkflow(w, a.paint(boldAttr), "/", wf) }},
		{"error", false, func(a *App, w *bytes.Buffer) {
			a.stderr = w
			a.fail(&ledger.CorruptError{Path: "issue-42.json" + evilLine, Err: errors.New(evilBody)})
		}},
		{"warning", false, func(a *App, w *bytes.Buffer) { a.stderr = w; a.warnf("skipped %v", errors.New(evilBody)) }},
	}
	for _, s := range sites {
		t.Run(s.name, func(t *testing.T) {
			var out bytes.Buffer
			a := &App{stdout: &out, stderr: &out, isTTY: s.tty, globalFlags: globalFlags{noColor: true}, getenv: func(string) string { return "" }}
			s.render(a, &out)
			assertNeutral(t, out.String())
		})
	}
}

// TestOutsideFilesNeutralised: agent names, ids, topics and bodies read
// from files that another tool (or an attacker with a commit) wrote reach
// every text command neutralised.
func TestOutsideFilesNeutralised(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AGENTX_NOW": "2026-02-26T10:00:00Z", "AGENTX_NO_MONITOR": "1"}
	require.Equal(t, 0, runCmd(t, dir, env, "", "init").code)
	rec := hostileRecord()
	rec.Status, rec.Round, rec.To = ledger.Pending, 1, "arch\x1b[2J"
	rec.Thread = rec.Thread[:1]
	data, err := ledger.Encode(&ledger.Ledger{IssueNumber: 42, Clarifications: []*ledger.Clarification{rec.Clarification}})
	require.NoError(t, err)
	state := filepath.Join(dir, ".agentx", "state")
	require.NoError(t, os.MkdirAll(filepath.Join(state, "clarifications"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(state, "clarifications", "issue-42.json"), data, 0o644))
	// written behind agentx's back: readers scan the ledgers until the index is rebuilt
	require.NoError(t, os.Remove(filepath.Join(state, filepath.FromSlash(ledger.IndexBuiltFile))))
	require.NoError(t, os.WriteFile(filepath.Join(state, "agent-status.json"),
		[]byte(`{"eng\u001b]0;x\u0007":{"status":"blocked-clarification","issue":42,"waitingOn":"arch\nCLR-42-999","clarificationId":"CLR-42-001"}}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(state, "events.jsonl"),
		[]byte(`{"type":"clarification-requested","clarificationId":"CLR-42-001\nCLR-42-999","issueNumber":42,"fromAgent":"e\u001b[2J","toAgent":"a","topic":"t","round":1,"timestamp":"2026-02-26T10:00:00Z","reason":"r\u009b"}`+"\n"+
			`{"type":"clarification-requested","clarificationId":"CLR-42-001","issueNumber":42,"fromAgent":"engineer","toAgent":"architect","topic":"t","round":1,"timestamp":"2026-02-26T10:00:00Z"}`+"\n"), 0o644))
	// a stale lock whose file name holds escape sequences, for doctor
	require.NoError(t, os.WriteFile(filepath.Join(state, "x\x1b]0;pwned\x07\nCLR-42-999.lock"),
		[]byte(`{"created":"2020-01-01T00:00:00Z","host":"elsewhere"}`), 0o644))

	for _, args := range [][]string{
		{"clarify", "show", "CLR-42-001"},
		{"clarify", "show", "--issue", "42", "--format", "markdown"},
		{"clarify", "list"},
		{"ready"},
		{"state"},
		{"events"},
		{"clarify", "stats"},
		{"inbox", "--agent", "architect", "--peek"},
		{"doctor"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runCmd(t, dir, env, "", args...)
			assertNeutral(t, r.stdout+r.stderr)
		})
	}
}
