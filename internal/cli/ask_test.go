package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// askWorkspace is an initialised workspace in which the architect answers
// at once (this test binary as a demo responder), the product manager's
// responder always fails (so its questions escalate once its retry, 100ms
// later, fails too), and questions to a human wait (no notify command).
func askWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	exe, err := os.Executable()
	require.NoError(t, err)
	appendConfig(t, dir, fmt.Sprintf("\n[agents.architect]\ncommand = [%q, \"demo-responder\", \"architect\"]\n"+
		"\n[agents.product-manager]\ncommand = [%q, \"demo-responder\"]\nretry_delay = \"100ms\"\n", exe, exe)) // no role: exits 2
	return dir
}

// appendConfig adds text to the workspace's config.toml.
func appendConfig(t *testing.T, dir, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, ".agentx", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// writePlatformWorkflow adds a workflow in which the UX designer and the
// engineer may ask each other (so they can deadlock).
func writePlatformWorkflow(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".agentx", "workflows", "platform.toml"), []byte(`
[workflow]
name = "platform"

[[steps]]
id = "design"
agent = "ux-designer"
can_clarify = ["engineer"]

[[steps]]
id = "build"
agent = "engineer"
needs = ["design"]
can_clarify = ["ux-designer"]
`), 0o644))
}

// TestAskWaitOutput: what a script gets from waiting for an answer (ask
// --wait, followup --wait, clarify wait). Exit 0: the answer alone on
// stdout (the thread only when --format is given). Exit 8, no answer
// (timed out, or escalated or abandoned meanwhile): the id alone on stdout,
// or under --json the error document with the record in data.
func TestAskWaitOutput(t *testing.T) {
	dir := askWorkspace(t)
	answer := demoAnswer("architect", "") + "\n"
	ask := func(issue, to string, extra ...string) []string {
		return append([]string{"clarify", "ask", "--issue", issue, "--from", "engineer", "--to", to,
			"--topic", "Retries", "--question", "Backoff or fixed delay?", "--wait"}, extra...)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // exact, or a regexp when it starts with ^
		stderr string // a regexp
		dataID string // under --json: error.json with data.id
	}{
		{name: "answer alone", args: ask("1", "architect"), stdout: answer},
		{name: "thread with --format text", args: ask("2", "architect", "--format", "text"),
			stdout: `^(?s)\s+Clarification Thread: CLR-2-001 .*A: As architect`},
		{name: "thread with --format markdown", args: ask("3", "architect", "--format", "markdown"),
			stdout: `^(?s).*\*\*\[architect\]\*\* As architect`},
		{name: "json record", args: ask("4", "architect", "--json"), stdout: `^(?s)\{\n  "schema_version": 1,\n  "data": \{\n    "issueNumber": 4,\n    "id": "CLR-4-001",.*"status": "answered"`},
		{name: "timeout: the id", args: ask("5", "human", "--timeout", "50ms"), code: 8,
			stdout: "CLR-5-001\n", stderr: `CLR-5-001: no answer after .*\nhint: no answer; proceed on your best judgment`},
		{name: "timeout --format text: the id", args: ask("5", "human", "--timeout", "50ms", "--format", "text"), code: 8,
			stdout: "CLR-5-002\n"},
		{name: "timeout --json: data.id", args: ask("6", "human", "--timeout", "50ms", "--json"), code: 8,
			stderr: `"code":"wait_timeout","exit_code":8`, dataID: "CLR-6-001"},
		{name: "escalated: no answer", args: ask("7", "product-manager"), code: 8,
			stdout: "CLR-7-001\n", stderr: `CLR-7-001: escalated to a human .*the product-manager responder failed twice`},
		{name: "escalated --json", args: ask("8", "product-manager", "--json"), code: 8,
			stderr: `"code":"wait_timeout"`, dataID: "CLR-8-001"},
		{name: "followup --wait: answer alone", args: []string{"clarify", "followup", "CLR-1-001", "--body", "And the cap?", "--wait"}, stdout: answer},
		{name: "wait: answer alone", args: []string{"clarify", "wait", "CLR-2-001"}, stdout: answer},
		{name: "wait on a timed-out question: the id", args: []string{"clarify", "wait", "CLR-5-001", "--timeout", "50ms"}, code: 8, stdout: "CLR-5-001\n"},
		{name: "wait on an escalated question: the id", args: []string{"clarify", "wait", "CLR-7-001"}, code: 8, stdout: "CLR-7-001\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, dir, nil, "", tt.args...)
			require.Equal(t, tt.code, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			switch {
			case tt.dataID != "":
				assert.Empty(t, r.stdout, "under --json a failure prints nothing on stdout")
			case len(tt.stdout) > 0 && tt.stdout[0] == '^':
				assert.Regexp(t, regexp.MustCompile(tt.stdout), r.stdout)
			default:
				assert.Equal(t, tt.stdout, r.stdout)
			}
			if tt.stderr != "" {
				assert.Regexp(t, regexp.MustCompile(tt.stderr), r.stderr)
			}
			if tt.dataID != "" {
				validateJSON(t, "error.json", r.stderr)
				var doc struct {
					Data struct{ ID, Status string } `json:"data"`
				}
				require.NoError(t, json.Unmarshal([]byte(r.stderr), &doc))
				assert.Equal(t, tt.dataID, doc.Data.ID)
			}
		})
	}

	// a decision settles a wait: the human resolves the escalated one
	r := runCmd(t, dir, nil, "", "clarify", "resolve", "CLR-7-001", "--from", "human", "--body", "decision: fixed 5 s")
	require.Equal(t, 0, r.code, r.stderr)
	r = runCmd(t, dir, nil, "", "clarify", "wait", "CLR-7-001")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "decision: fixed 5 s\n", r.stdout)
}

// TestAskJSONAfterTheSideMonitor: the side monitor that every clarify
// command runs may escalate the question just asked (here: it closes a
// deadlock). ask --json prints the record as it stands afterwards.
func TestAskJSONAfterTheSideMonitor(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	writePlatformWorkflow(t, dir)
	ask := func(from, to string) map[string]any {
		r := runCmd(t, dir, nil, "", "clarify", "ask", "--json", "--workflow", "platform", "--issue", "2",
			"--from", from, "--to", to, "--topic", "Offline", "--question", "Which screens, "+to+"?")
		require.Equal(t, 0, r.code, r.stderr)
		return validateDoc(t, "clarification.json", r.stdout)
	}
	ask("ux-designer", "engineer")
	doc := ask("engineer", "ux-designer") // closes the cycle: the engineer's (less upstream) is escalated
	require.Contains(t, jsonText(doc["monitor"]), `"kind":"deadlock"`)
	data := doc["data"].(map[string]any)
	assert.Equal(t, "CLR-2-002", data["id"])
	assert.Equal(t, "escalated", data["status"], "the record as the side monitor left it")
}
