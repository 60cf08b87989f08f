package cli

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// committed is what a team commits of .agentx/state: the record. Every
// other file agentx writes there is this machine's, and state/.gitignore
// keeps it out (docs/file-formats.md, "What a team commits").
var committed = regexp.MustCompile(`^\.agentx/state/(\.gitignore|clarifications/issue-\d+\.json|events\.jsonl|proposals\.json|evaluations/issue-\d+\.json)$`)

// TestStateGitignorePolicy runs a workspace through what its agents and
// people do (questions, answers, hooks, inboxes, the monitor, proposals,
// doctor, remote mode) in a git repository, then asks git what it would
// commit of the state directory: exactly the record, and every file of
// this machine is ignored.
func TestStateGitignorePolicy(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	bare := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", args...).CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	git("init", "--quiet", "--bare", bare)
	git("-C", dir, "init", "--quiet")
	git("-C", dir, "remote", "add", "origin", bare)
	env := map[string]string{"AGENTX_NOW": "2026-02-26T10:00:00Z", "HOME": dir, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
	as := func(agent string) map[string]string {
		m := map[string]string{"AGENTX_AGENT": agent}
		for k, v := range env {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{env, []string{"init"}},
		{as("engineer"), []string{"hook", "start", "--issue", "42", "--agent", "engineer"}},
		{as("engineer"), []string{"clarify", "ask", "--issue", "42", "--to", "architect", "--topic", "Cache", "--question", "TTL?"}},
		{as("architect"), []string{"clarify", "answer", "CLR-42-001", "--body", "Five minutes."}},
		{as("engineer"), []string{"inbox"}},
		{as("engineer"), []string{"clarify", "resolve", "CLR-42-001", "--body", "Thanks."}},
		{as("engineer"), []string{"proposals", "create", "--type", "tool_fix", "--title", "Flaky", "--rationale", "r", "--action", "a"}},
		{as("engineer"), []string{"hook", "finish", "--issue", "42", "--agent", "engineer"}},
		{env, []string{"monitor"}},
		{env, []string{"doctor"}},
		{env, []string{"remote", "enable", "origin"}},
		{as("engineer"), []string{"clarify", "ask", "--issue", "43", "--to", "architect", "--topic", "Queue", "--question", "Kafka?"}},
		{env, []string{"sync"}},
		{env, []string{"ready"}},
	} {
		r := runCmd(t, dir, c.env, "", c.args...)
		require.Equal(t, 0, r.code, "%v: %s", c.args, r.stderr)
	}

	untracked := strings.Fields(git("-C", dir, "ls-files", "--others", "--exclude-standard", ".agentx/state"))
	for _, f := range untracked {
		assert.Regexp(t, committed, f, "%s would be committed, and it is not the record: state/.gitignore must keep it out", f)
	}
	for _, want := range []string{".agentx/state/clarifications/issue-42.json", ".agentx/state/events.jsonl", ".agentx/state/proposals.json"} {
		assert.Contains(t, untracked, want, "the record is committed")
	}
	ignored := git("-C", dir, "ls-files", "--others", "--ignored", "--exclude-standard", ".agentx/state")
	for _, local := range []string{"index/", "inbox/", "hooks/", "remote/", "agent-status.json", ".lock.queue"} {
		assert.Contains(t, ignored, local, "a file of this machine (%s) is written and ignored", local)
	}
}
