package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedWorkflow is a feature workflow whose implement step has a check
// that fails while the file "broken" exists.
const gatedWorkflow = `[[steps]]
id = "implement"
agent = "engineer"
scope = ["src/**", "go.mod"]

[[steps.evaluate]]
name = "tests"
command = ["sh", "-c", "if [ -f broken ]; then echo 'FAIL: TestX'; exit 1; fi"]
timeout = "30s"
`

// failingWorkspace is a workspace whose feature workflow's implement step
// has a check that fails (gatedWorkflow, with "broken" there).
func failingWorkspace(t *testing.T) (dir string, env map[string]string) {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("the check is a shell command")
	}
	dir = t.TempDir()
	env = map[string]string{"AGENTX_NOW": "2026-02-26T10:00:00Z"}
	require.Equal(t, 0, runCmd(t, dir, env, "", "init").code)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".agentx", "workflows", "feature.toml"), []byte(gatedWorkflow), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken"), nil, 0o644))
	return dir, env
}

// TestEvalJSON: the supervisor gate's JSON outputs validate against their
// schemas, and so does the evaluation record it writes.
func TestEvalJSON(t *testing.T) {
	dir, env := failingWorkspace(t)

	r := runCmd(t, dir, env, "", "hook", "finish", "--issue", "7", "--agent", "engineer", "--strict", "--json")
	assert.Equal(t, ExitBlocked.N, r.code, "strict: the work was sent back")
	validateDoc(t, "hook.json", r.stdout)
	assert.Contains(t, r.stdout, `"result": "revise"`)
	assert.NotContains(t, r.stdout, `"proposals"`, "one issue failing is no pattern")

	// the same check failing on a second issue: the hook's data carries
	// the proposal the gate made
	r = runCmd(t, dir, env, "", "hook", "finish", "--issue", "8", "--agent", "engineer", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	validateDoc(t, "hook.json", r.stdout)
	assert.Contains(t, r.stdout, `"id": "PROP-001"`)

	r = runCmd(t, dir, env, "", "eval", "run", "--issue", "7", "--agent", "engineer", "--json")
	assert.Equal(t, ExitBlocked.N, r.code)
	validateDoc(t, "eval-list.json", r.stdout)

	r = runCmd(t, dir, env, "", "inbox", "--agent", "engineer", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	validateDoc(t, "inbox.json", r.stdout)
	assert.Contains(t, r.stdout, `"kind": "revision"`)

	r = runCmd(t, dir, env, "", "ready", "--json")
	assert.Equal(t, 0, r.code)
	validateDoc(t, "ready.json", r.stdout)
	assert.Contains(t, r.stdout, `"EVAL-7-1"`)

	for _, args := range [][]string{{"eval", "show", "7"}, {"eval", "show", "EVAL-7-1"}} {
		r = runCmd(t, dir, env, "", append(args, "--json")...)
		require.Equal(t, 0, r.code, r.stderr)
		validateDoc(t, "evaluation.json", r.stdout)
	}
	r = runCmd(t, dir, env, "", "eval", "list", "--json")
	validateDoc(t, "eval-list.json", r.stdout)

	data, err := os.ReadFile(filepath.Join(dir, ".agentx", "state", "evaluations", "issue-7.json"))
	require.NoError(t, err)
	validateJSON(t, "evaluation.json", string(data))

	r = runCmd(t, dir, env, "", "eval", "show", "EVAL-7-9")
	assert.Equal(t, ExitNotFound.N, r.code)
	r = runCmd(t, dir, env, "", "eval", "show", "seven")
	assert.Equal(t, ExitUsage.N, r.code)
}

// TestInboxSkipsAnUnreadableEvaluation: another issue's evaluation record
// that does not parse leaves the agent's inbox working, with a warning
// naming the file; the requests of the other issues are delivered.
func TestInboxSkipsAnUnreadableEvaluation(t *testing.T) {
	dir, env := failingWorkspace(t)
	for _, n := range []string{"7", "8"} {
		require.Equal(t, 0, runCmd(t, dir, env, "", "hook", "finish", "--issue", n, "--agent", "engineer").code)
	}
	bad := filepath.Join(dir, ".agentx", "state", "evaluations", "issue-8.json")
	require.NoError(t, os.WriteFile(bad, []byte("{not json"), 0o644))

	r := runCmd(t, dir, env, "", "inbox", "--agent", "engineer", "--all")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "EVAL-7-1")
	assert.NotContains(t, r.stdout, "EVAL-8-1")
	assert.Contains(t, r.stderr, "issue-8.json")
	assert.Contains(t, r.stderr, "its revision requests are left out")

	r = runCmd(t, dir, env, "", "inbox", "--agent", "engineer", "--issue", "8")
	assert.NotEqual(t, 0, r.code, "asked about that issue: its record's failure is the answer")

	// the record is not derived: the hint is to fix it, not doctor --fix
	r = runCmd(t, dir, env, "", "eval", "show", "8")
	assert.Equal(t, ExitInvalidData.N, r.code)
	assert.Contains(t, r.stderr, "Fix the JSON by hand")
	assert.NotContains(t, r.stderr, "doctor --fix")
}

// TestInboxReadsOnlyOwingRecords: an inbox reads the evaluation records
// marked as holding a revision request not yet delivered, not every
// issue's: once the marks are built, a record without one is not even
// opened (here a broken one is not reported), and a delivered request's
// mark goes.
func TestInboxReadsOnlyOwingRecords(t *testing.T) {
	dir, env := failingWorkspace(t)
	for _, n := range []string{"7", "8"} {
		require.Equal(t, 0, runCmd(t, dir, env, "", "hook", "finish", "--issue", n, "--agent", "engineer").code)
	}
	require.NoError(t, os.Remove(filepath.Join(dir, "broken")))
	require.Equal(t, 0, runCmd(t, dir, env, "", "hook", "finish", "--issue", "9", "--agent", "engineer").code, "9 passes")
	marks := filepath.Join(dir, ".agentx", "state", "evaluations", "revise")
	assert.FileExists(t, filepath.Join(marks, "issue-7.json"))
	assert.FileExists(t, filepath.Join(marks, "issue-8.json"))
	assert.NoFileExists(t, filepath.Join(marks, "issue-9.json"), "nothing owed")

	// the first inbox scans every record once and builds the marks
	r := runCmd(t, dir, env, "", "inbox", "--agent", "architect", "--all")
	require.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(marks, "built"))

	// a record without a mark is not read: its damage is not seen
	bad := filepath.Join(dir, ".agentx", "state", "evaluations", "issue-9.json")
	require.NoError(t, os.WriteFile(bad, []byte("{not json"), 0o644))
	r = runCmd(t, dir, env, "", "inbox", "--agent", "engineer", "--all")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "EVAL-7-1")
	assert.Contains(t, r.stdout, "EVAL-8-1")
	assert.NotContains(t, r.stderr, "issue-9.json")

	// delivered: the marks go, and the next inbox has nothing
	assert.NoFileExists(t, filepath.Join(marks, "issue-7.json"))
	assert.NoFileExists(t, filepath.Join(marks, "issue-8.json"))
	r = runCmd(t, dir, env, "", "inbox", "--agent", "engineer", "--all")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "EVAL-")
}
