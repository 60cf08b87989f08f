package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonCases run every command that prints data with --json, in one
// workspace, in order. The contract: stdout is one JSON document with
// schema_version 1 and a data member, valid against docs/schemas/envelope.json
// with data valid against the command's schema (jsonSchemas); nothing else
// is on stdout. Errors are one JSON document on stderr, valid against
// docs/schemas/error.json.
var jsonCases = []struct {
	cmd   string // the command path, as cobra names it
	args  []string
	stdin string
}{
	{"agentx init", []string{"init"}, ""},
	{"agentx version", []string{"version"}, ""},
	{"agentx workflow list", []string{"workflow", "list"}, ""},
	{"agentx workflow show", []string{"workflow", "show", "feature"}, ""},
	{"agentx workflow validate", []string{"workflow", "validate"}, ""},
	{"agentx issue describe", []string{"issue", "describe", "42", "--title", "Cache invalidation"}, "Users see stale prices."},
	{"agentx clarify ask", []string{"clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect", "--topic", "Cache", "--question", "TTL?", "--ref", ".agentx/config.toml:1-3", "--ref", "../outside"}, ""},
	{"agentx clarify answer", []string{"clarify", "answer", "CLR-42-001", "--from", "architect"}, "Five minutes."},
	{"agentx clarify followup", []string{"clarify", "followup", "CLR-42-001", "--body", "Per key?"}, ""},
	{"agentx clarify assume", []string{"clarify", "assume", "CLR-42-001", "--from", "engineer", "--assumption", "Per key."}, ""},
	{"agentx clarify wait", []string{"clarify", "wait", "CLR-42-001", "--timeout", "1ms"}, ""}, // times out: error JSON, checked below
	{"agentx clarify show", []string{"clarify", "show", "CLR-42-001"}, ""},
	{"agentx clarify show", []string{"clarify", "show", "--issue", "42"}, ""},
	{"agentx clarify list", []string{"clarify", "list", "--all"}, ""},
	{"agentx clarify", []string{"clarify"}, ""},
	{"agentx state", []string{"state"}, ""},
	{"agentx ready", []string{"ready"}, ""},
	{"agentx events", []string{"events"}, ""},
	{"agentx clarify stats", []string{"clarify", "stats"}, ""},
	{"agentx demo", []string{"demo"}, ""},
	{"agentx clarify escalate", []string{"clarify", "escalate", "CLR-42-001", "--reason", "needs a call"}, ""},
	{"agentx clarify resolve", []string{"clarify", "resolve", "CLR-42-001", "--from", "human", "--as", "alice@example.com", "--body", "decision: per key", "--summary", "Per key, five minutes."}, ""},
	{"agentx clarify show", []string{"clarify", "show", "CLR-42-001"}, ""}, // resolved: its decision
	{"agentx clarify ask", []string{"clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "human", "--topic", "Flag", "--question", "On?"}, ""},
	{"agentx todo", []string{"todo", "--issue", "42"}, ""}, // a question to human
	{"agentx clarify cancel", []string{"clarify", "cancel", "CLR-42-002"}, ""},
	{"agentx clarify ask", []string{"clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "human", "--topic", "Flag", "--question", "Off?"}, ""},
	{"agentx clarify abandon", []string{"clarify", "abandon", "CLR-42-003"}, ""},
	{"agentx inbox", []string{"inbox", "--agent", "engineer"}, ""},
	{"agentx clarify stale", []string{"clarify", "stale"}, ""},
	{"agentx monitor", []string{"monitor", "--dry-run"}, ""},
	{"agentx hook start", []string{"hook", "start", "--issue", "43", "--agent", "engineer"}, ""},
	{"agentx hook finish", []string{"hook", "finish", "--issue", "43", "--agent", "engineer"}, ""},
	{"agentx doctor", []string{"doctor"}, ""},
	{"agentx github status", []string{"github", "status"}, ""},
	{"agentx github sync", []string{"github", "sync"}, ""},
	{"agentx eval list", []string{"eval", "list"}, ""},
	{"agentx eval show", []string{"eval", "show", "43"}, ""},
	{"agentx eval run", []string{"eval", "run", "--issue", "43", "--agent", "engineer"}, ""}, // no checks: error JSON, checked below
	{"agentx scope check", []string{"scope", "check", "--agent", "engineer", "--files", "src/a.go"}, ""},
	{"agentx proposals create", []string{"proposals", "create", "--type", "tool_fix", "--title", "Flaky runner", "--rationale", "Timed out twice", "--action", "Raise its timeout", "--issue", "42", "--as", "alice@example.com"}, ""},
	{"agentx proposals list", []string{"proposals", "list"}, ""},
	{"agentx todo", []string{"todo"}, ""},
	{"agentx trust", []string{"trust", "--status"}, ""},
	{"agentx proposals show", []string{"proposals", "show", "PROP-001"}, ""},
	{"agentx proposals approve", []string{"proposals", "approve", "PROP-001", "--as", "alice@example.com"}, ""},
	{"agentx proposals implemented", []string{"proposals", "implemented", "PROP-001", "--as", "alice@example.com"}, ""},
	{"agentx proposals create", []string{"proposals", "create", "--type", "new_skill", "--title", "A skill", "--rationale", "r", "--action", "a", "--as", "bob"}, ""},
	{"agentx proposals reject", []string{"proposals", "reject", "PROP-002", "--reason", "not now", "--as", "bob"}, ""},
	{"agentx slack status", []string{"slack", "status"}, ""},
	{"agentx slack sync", []string{"slack", "sync"}, ""},
	{"agentx proposals create", []string{"proposals", "create", "--type", "new_skill", "--title", "Migrate before testing", "--rationale", "TestMigrate failed twice", "--action", "a", "--as", "bob"}, ""},
	{"agentx proposals approve", []string{"proposals", "approve", "PROP-003", "--as", "alice@example.com"}, ""},
	{"agentx skills draft", []string{"skills", "draft", "PROP-003", "--as", "bob"}, ""},
	{"agentx skills list", []string{"skills", "list"}, ""},
	{"agentx skills validate", []string{"skills", "validate"}, ""},
	{"agentx proposals show", []string{"proposals", "show", "PROP-003"}, ""},
	{"agentx clarify stats", []string{"clarify", "stats"}, ""},    // with proposals
	{"agentx events", []string{"events", "--id", "PROP-001"}, ""}, // a proposal's events
	{"agentx sync", []string{"sync", "--status"}, ""},             // no [remote]: enabled false
	{"agentx setup claude", []string{"setup", "claude", "--agent", "engineer", "--issue", "42"}, ""},
	{"agentx setup claude", []string{"setup", "claude", "--agent", "engineer", "--issue", "42", "--dry-run"}, ""}, // all unchanged
	{"agentx setup codex", []string{"setup", "codex", "--agent", "engineer"}, ""},
	// the workspace is a git repository whose origin is a bare one (set up
	// by TestJSONContract): from here on the remote mode is on
	{"agentx remote enable", []string{"remote", "enable", "origin"}, ""},
	{"agentx sync", []string{"sync"}, ""},
	{"agentx sync", []string{"sync", "--status"}, ""},
	{"agentx remote log", []string{"remote", "log", "--issue", "42"}, ""},
	// fetched within the [remote] interval: remote_as_of
	{"agentx clarify list", []string{"clarify", "list", "--all"}, ""},
	{"agentx ready", []string{"ready"}, ""},
	{"agentx clarify stats", []string{"clarify", "stats"}, ""},
}

// jsonSchemas names, for each command path of jsonCases, the schema of its
// data under docs/schemas. docs/json.md has the same table
// (TestDocsJSONTable checks it).
var jsonSchemas = map[string]string{
	"agentx init":                  "init.json",
	"agentx version":               "version.json",
	"agentx workflow list":         "workflow-list.json",
	"agentx workflow show":         "workflow.json",
	"agentx workflow validate":     "workflow-validate.json",
	"agentx clarify ask":           "clarification.json",
	"agentx clarify answer":        "clarification.json",
	"agentx clarify followup":      "clarification.json",
	"agentx clarify assume":        "clarification.json",
	"agentx clarify wait":          "clarification.json",
	"agentx clarify resolve":       "clarification.json",
	"agentx clarify escalate":      "clarification.json",
	"agentx clarify abandon":       "clarification.json",
	"agentx clarify cancel":        "clarification.json",
	"agentx clarify show":          "clarify-show.json",
	"agentx clarify list":          "clarify-list.json",
	"agentx clarify":               "clarify-list.json",
	"agentx clarify stale":         "clarify-stale.json",
	"agentx clarify stats":         "stats.json",
	"agentx state":                 "state.json",
	"agentx ready":                 "ready.json",
	"agentx events":                "events.json",
	"agentx inbox":                 "inbox.json",
	"agentx monitor":               "monitor.json",
	"agentx hook start":            "hook.json",
	"agentx hook finish":           "hook.json",
	"agentx doctor":                "doctor.json",
	"agentx demo":                  "demo.json",
	"agentx github status":         "github.json",
	"agentx github sync":           "github.json",
	"agentx eval list":             "eval-list.json",
	"agentx eval show":             "evaluation.json",
	"agentx eval run":              "eval-list.json",
	"agentx scope check":           "scope.json",
	"agentx proposals create":      "proposal.json",
	"agentx proposals list":        "proposal-list.json",
	"agentx todo":                  "todo.json",
	"agentx trust":                 "trust.json",
	"agentx proposals show":        "proposal.json",
	"agentx proposals approve":     "proposal.json",
	"agentx proposals reject":      "proposal.json",
	"agentx proposals implemented": "proposal.json",
	"agentx sync":                  "remote.json",
	"agentx remote enable":         "remote.json",
	"agentx remote log":            "remote-log.json",
	"agentx slack status":          "slack.json",
	"agentx slack sync":            "slack.json",
	"agentx skills draft":          "skill.json",
	"agentx skills list":           "skill-list.json",
	"agentx skills validate":       "skill-list.json",
	"agentx setup claude":          "setup.json",
	"agentx setup codex":           "setup.json",
	"agentx issue describe":        "issue.json",
}

// noJSON are commands whose output is not data: protocol servers, help,
// shell completion scripts.
// hook stop prints the JSON Claude Code reads from a Stop hook, hook rewake its stderr
// for an asyncRewake hook (--json is a usage error for both).
// watch prints JSON Lines, one envelope per thing it did (none when it did
// nothing), like events --follow: the watch story checks them.
var noJSON = []string{"agentx slack listen", "agentx watch", "agentx desk", "agentx mcp", "agentx hook stop", "agentx hook rewake", "agentx completion", "agentx help", "agentx exit-codes"}

func TestJSONContract(t *testing.T) {
	dir := t.TempDir()
	bare := t.TempDir()
	for _, args := range [][]string{{"init", "--quiet", "--bare", bare}, {"-C", dir, "init", "--quiet"}, {"-C", dir, "remote", "add", "origin", bare}} {
		out, err := exec.Command("git", args...).CombinedOutput()
		require.NoError(t, err, "git %v: %s (the remote mode's cases need git)", args, out)
	}
	env := map[string]string{"AGENTX_NOW": "2026-02-26T10:00:00Z"}
	for _, c := range jsonCases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			schema, ok := jsonSchemas[c.cmd]
			require.True(t, ok, "%q has no schema in jsonSchemas", c.cmd)
			r := runCmd(t, dir, env, c.stdin, append(c.args, "--json")...)
			if c.cmd == "agentx clarify wait" {
				assert.Equal(t, ExitWaitTimeout.N, r.code)
				assert.Empty(t, r.stdout)
				assertErrorJSON(t, r.stderr, "wait_timeout")
				return
			}
			if c.cmd == "agentx eval run" { // the default workflows have no checks; TestEvalJSON has the data
				assert.Equal(t, ExitNotFound.N, r.code)
				assertErrorJSON(t, r.stderr, "not_found")
				return
			}
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			var doc map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "stdout must be one JSON document:\n%s", r.stdout)
			assert.JSONEq(t, "1", string(doc["schema_version"]))
			assert.Contains(t, doc, "data")
			validateDoc(t, schema, r.stdout)
		})
	}
	t.Run("state files", func(t *testing.T) { validateStateFiles(t, dir) })
}

// TestEveryJSONCaseHasASchema: every command in jsonCases has a schema in
// jsonSchemas, every schema named there exists, and jsonSchemas names no
// command without a case.
func TestEveryJSONCaseHasASchema(t *testing.T) {
	cased := map[string]bool{}
	for _, c := range jsonCases {
		cased[c.cmd] = true
		assert.Contains(t, jsonSchemas, c.cmd, "%q has a case in jsonCases but no schema in jsonSchemas", c.cmd)
	}
	for cmd, file := range jsonSchemas {
		assert.True(t, cased[cmd], "jsonSchemas names %q, which has no case in jsonCases", cmd)
		assert.FileExists(t, filepath.Join(schemaDir, file), "schema of %q", cmd)
		compiledSchema(t, "envelope:"+file)
	}
}

func assertErrorJSON(t *testing.T, stderr, code string) {
	t.Helper()
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Error         struct {
			Code     string `json:"code"`
			ExitCode int    `json:"exit_code"`
			Message  string `json:"message"`
			Hint     string `json:"hint"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(stderr), &doc), "stderr must be one JSON document:\n%s", stderr)
	validateJSON(t, "error.json", stderr)
	assert.Equal(t, 1, doc.SchemaVersion)
	assert.Equal(t, code, doc.Error.Code)
	assert.NotEmpty(t, doc.Error.Message)
}

// TestEveryCommandHasAJSONCase fails when a command is added without a
// case above (or a place in noJSON).
func TestEveryCommandHasAJSONCase(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range jsonCases {
		covered[c.cmd] = true
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		if slices.ContainsFunc(noJSON, func(p string) bool { return path == p || strings.HasPrefix(path, p+" ") }) {
			return
		}
		if c.Runnable() && !c.Hidden {
			assert.True(t, covered[path], "%q has no case in jsonCases", path)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&App{}))
}

// TestErrorsAreJSONUnderJSON: a failing command under --json prints only
// JSON, on stderr, with the code name and the exit code.
func TestErrorsAreJSONUnderJSON(t *testing.T) {
	dir := t.TempDir()
	engineer := map[string]string{"AGENTX_AGENT": "engineer"}
	tests := []struct {
		args  []string
		env   map[string]string
		setup func(t *testing.T) // before the command, in the workspace
		code  ExitCode
	}{
		{args: []string{"workflow", "list"}, code: ExitNoWorkspace},
		{args: []string{"frobnicate"}, code: ExitUsage},
		{args: []string{"init"}, code: ExitOK},
		{args: []string{"clarify", "show", "CLR-1-001"}, code: ExitNotFound},
		{args: []string{"clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "reviewer", "--topic", "t", "--question", "q"}, code: ExitRejected},
		{args: []string{"clarify", "ask", "--issue", "1", "--from", "architect", "--to", "product-manager", "--topic", "t", "--question", "q"}, env: engineer, code: ExitIdentity},
		{args: []string{"clarify", "ask", "--issue", "2", "--from", "engineer", "--to", "architect", "--topic", "t", "--question", "q"}, code: ExitUnsafePath,
			setup: func(t *testing.T) {
				require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "elsewhere.json"), filepath.Join(".agentx", "state", "clarifications", "issue-2.json")))
			}},
		{args: []string{"ready", "--issue", "1"}, code: ExitOK},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if tt.setup != nil {
				t.Chdir(dir)
				tt.setup(t)
			}
			r := runCmd(t, dir, tt.env, "", append(tt.args, "--json")...)
			assert.Equal(t, tt.code.N, r.code)
			if tt.code == ExitOK {
				return
			}
			assert.Empty(t, r.stdout)
			assertErrorJSON(t, r.stderr, tt.code.Name)
		})
	}
}

// TestRefusalsJSON: the refusal events (scope-refused, lock-timeout) and
// what the digest and doctor make of them are valid against their
// schemas: an ask refused by can_clarify, and an answer that timed out on
// a lock another tool holds.
func TestRefusalsJSON(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AGENTX_NOW": "2026-02-26T10:00:00Z"}
	require.Equal(t, 0, runCmd(t, dir, env, "", "init").code)
	cfg := filepath.Join(dir, ".agentx", "config.toml")
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	b = []byte(strings.NewReplacer(`wait = "5s"`, `wait = "300ms"`, `fair_bound = "400ms"`, `fair_bound = "0"`, `fair_window = "400ms"`, `fair_window = "0"`).Replace(string(b)))
	require.NoError(t, os.WriteFile(cfg, b, 0o644))
	assert.Equal(t, ExitRejected.N, runCmd(t, "", env, "", "clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "reviewer", "--topic", "Tests", "--question", "Unit?").code)
	require.Equal(t, 0, runCmd(t, "", env, "", "clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect", "--topic", "Cache", "--question", "TTL?").code)
	lockFile := filepath.Join(dir, ".agentx", "state", "clarifications", "issue-42.json.lock")
	require.NoError(t, os.WriteFile(lockFile, []byte(`{"pid":424242,"host":"another-host","agent":"cli","token":"f00d","timestamp":"2026-02-26T10:00:00.000Z","created":"2026-02-26T10:00:00.000"}`), 0o644))
	assert.Equal(t, ExitLockTimeout.N, runCmd(t, "", env, "", "clarify", "answer", "CLR-42-001", "--from", "architect", "--body", "5m").code)

	r := runCmd(t, "", env, "", "events", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	validateDoc(t, "events.json", r.stdout)
	assert.Contains(t, r.stdout, `"type": "scope-refused"`)
	assert.Contains(t, r.stdout, `"type": "lock-timeout"`)
	r = runCmd(t, "", env, "", "clarify", "stats", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	validateDoc(t, "stats.json", r.stdout)
	assert.Contains(t, r.stdout, `"lockTimeouts": 1`)
	r = runCmd(t, "", env, "", "doctor", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	validateDoc(t, "doctor.json", r.stdout)
	assert.Contains(t, r.stdout, `"check": "lock-timeouts"`)
}
