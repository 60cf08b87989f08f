//go:build unix

package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// architectScript is a real responder whose behaviour depends on the
// issue asked about; it counts its runs per issue in runs-N.
const architectScript = `#!/bin/sh
f=runs-$AGENTX_ISSUE
n=$(cat $f 2>/dev/null || echo 0); n=$((n+1)); echo $n > $f
case $AGENTX_ISSUE in
1|5|6) # fails once (a model outage), then answers
  if [ "$n" -eq 1 ]; then echo "HTTP 503: model overloaded" >&2; exit 1; fi
  echo "Use Redis." ;;
2) # always fails, with more than 64 KiB of invalid UTF-8 and escapes on stderr
  i=0; while [ $i -lt 2000 ]; do printf 'junk \377\376 \033[2J\033]0;pwned\007 %d\n' $i >&2; i=$((i+1)); done
  exit 9 ;;
3) # answers with more than 64 KiB of invalid UTF-8 and escapes
  i=0; while [ $i -lt 3000 ]; do printf 'answer \377 \033[31mred\033[0m line %d\n' $i; i=$((i+1)); done ;;
4) # answers only once told to, after someone else has
  touch started
  while [ ! -f go ]; do sleep 0.02; done
  echo "Late answer." ;;
esac
`

func retryWorkspace(t *testing.T, delay string) string {
	t.Helper()
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "architect.sh"), []byte(architectScript), 0o755))
	appendConfig(t, dir, "\n[agents.architect]\ncommand = [\"./architect.sh\"]\ntimeout = \"20s\"\nretry_delay = \""+delay+"\"\n")
	return dir
}

func runsOf(t *testing.T, dir, issue string) string {
	b, err := os.ReadFile(filepath.Join(dir, "runs-"+issue))
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

// TestResponderFailureOutcomes: what an asker gets from a responder that
// fails, fails twice with hostile stderr, answers with hostile output, or
// answers after someone else did: the id, a typed outcome, exit 0; a
// question never left pending with nobody to finish it.
func TestResponderFailureOutcomes(t *testing.T) {
	dir := retryWorkspace(t, "30s")
	at := func(clock string) map[string]string {
		return map[string]string{"AGENTX_NOW": "2026-02-26T" + clock + "Z", "AGENTX_ROOT": dir}
	}
	ask := func(issue string, extra ...string) []string {
		return append([]string{"clarify", "ask", "--issue", issue, "--from", "engineer", "--to", "architect",
			"--topic", "Cache", "--question", "Redis or Memcached?"}, extra...)
	}

	// fails once: the id, and when it is retried
	r := runCmd(t, "", at("10:00:00"), "", ask("1")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "CLR-1-001\n", r.stdout)
	assert.Equal(t, "CLR-1-001: the architect responder failed (./architect.sh exited with status 1; stderr: HTTP 503: model overloaded); "+
		"it is retried once at 2026-02-26 10:00:30 UTC, and a second failure escalates to a human.\n"+
		"Wait for the answer: agentx clarify wait CLR-1-001\n", r.stderr)

	// fails with hostile stderr, under --json: the outcome and when
	r = runCmd(t, "", at("10:00:00"), "", ask("2", "--json")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	doc := validateDoc(t, "clarification.json", r.stdout)
	data := doc["data"].(map[string]any)
	assert.Equal(t, "CLR-2-001", data["id"])
	assert.Equal(t, "retrying", data["outcome"])
	assert.Equal(t, "2026-02-26T10:00:30.000Z", data["retryAt"])
	assert.Equal(t, "pending", data["status"])

	// nothing is retried before the delay
	r = runCmd(t, "", at("10:00:20"), "", "clarify", "list")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	assert.Equal(t, "1", runsOf(t, dir, "1"))
	assert.Equal(t, "1", runsOf(t, dir, "2"))

	// after it, the next command's monitor retries both: one answers, the
	// other escalates with its (neutralised) reason
	r = runCmd(t, "", at("10:00:31"), "", "clarify", "list")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "agentx: monitor: CLR-1-001 (#1 engineer -> architect) re-ran the architect responder: the architect responder answered")
	assert.Contains(t, r.stderr, "agentx: monitor: CLR-2-001 (#2 engineer -> architect) re-ran the architect responder: the architect responder failed twice: ./architect.sh exited with status 9")
	assert.NotContains(t, r.stderr, "\x1b")
	assert.Equal(t, "2", runsOf(t, dir, "1"))
	assert.Equal(t, "2", runsOf(t, dir, "2"))
	r = runCmd(t, "", at("10:00:32"), "", "clarify", "wait", "CLR-1-001")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "Use Redis.\n", r.stdout)
	r = runCmd(t, "", at("10:00:32"), "", "clarify", "show", "CLR-2-001", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	data = validateDoc(t, "clarification.json", r.stdout)["data"].(map[string]any)
	assert.Equal(t, "escalated", data["status"])
	r = runCmd(t, "", at("10:00:32"), "", "clarify", "show", "CLR-2-001")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "ESCALATED: the architect responder failed twice")
	assert.NotContains(t, r.stdout, "\x1b")
	r = runCmd(t, "", at("11:00:00"), "", "ready")
	assert.Equal(t, "2", runsOf(t, dir, "2"), "no retry loop")

	// under --json the monitor's finding is in the envelope
	r = runCmd(t, "", at("10:05:00"), "", ask("6")...)
	require.Equal(t, 0, r.code, r.stderr)
	r = runCmd(t, "", at("10:05:31"), "", "clarify", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	doc = validateDoc(t, "clarify-list.json", r.stdout)
	findings := doc["monitor"].(map[string]any)["findings"].([]any)
	require.Len(t, findings, 1)
	f := findings[0].(map[string]any)
	assert.Equal(t, []any{"CLR-6-001", "responder-failed", "retry", "done", "re-ran the architect responder: the architect responder answered"},
		[]any{f["id"], f["kind"], f["action"], f["result"], f["detail"]})

	// hostile answer: recorded, cut to a ledger body, printed neutralised
	r = runCmd(t, "", at("10:00:00"), "", ask("3")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "CLR-3-001\narchitect answered: answer \uFFFD \\x1b[31mred"), r.stdout[:80])
	assert.NotContains(t, r.stdout, "\x1b")
	r = runCmd(t, "", at("10:00:00"), "", "clarify", "show", "CLR-3-001", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	validateDoc(t, "clarification.json", r.stdout)
	assert.Contains(t, r.stdout, "[answer truncated by agentx")

	// someone answers while the responder runs: superseded, exit 0, the id
	done := make(chan result, 1)
	go func() { done <- runCmd(t, "", at("10:00:00"), "", ask("4", "--json")...) }()
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	}, 20*time.Second, 10*time.Millisecond)
	r = runCmd(t, "", at("10:00:05"), "", "clarify", "answer", "CLR-4-001", "--as", "alice", "--body", "Redis, decided.")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o644))
	r = <-done
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "agentx: warning: CLR-4-001: the architect responder answered, but CLR-4-001 was answered while its responder ran; that was not recorded\n", r.stderr)
	data = validateDoc(t, "clarification.json", r.stdout)["data"].(map[string]any)
	assert.Equal(t, "superseded", data["outcome"])
	assert.Equal(t, "answered", data["status"])
	assert.NotContains(t, r.stdout, "Late answer.")
	r = runCmd(t, "", at("10:00:06"), "", "events", "--id", "CLR-4-001")
	assert.Contains(t, r.stdout, "clarification-responder-superseded")
}

// TestAskWaitGetsTheRetriedAnswer: an asker that waits, with nothing else
// running, gets the answer of the retry when it comes due (a real clock,
// retry_delay 300ms).
func TestAskWaitGetsTheRetriedAnswer(t *testing.T) {
	dir := retryWorkspace(t, "300ms")
	r := runCmd(t, "", map[string]string{"AGENTX_ROOT": dir}, "", "clarify", "ask", "--issue", "5", "--from", "engineer", "--to", "architect",
		"--topic", "Cache", "--question", "Redis?", "--wait", "--timeout", "30s")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "Use Redis.\n", r.stdout)
	assert.Contains(t, r.stderr, "CLR-5-001: the architect responder failed")
	assert.Contains(t, r.stderr, "CLR-5-001 asked; waiting up to 30s for architect...")
	assert.Contains(t, r.stderr, "agentx: monitor: CLR-5-001 (#5 engineer -> architect) re-ran the architect responder: the architect responder answered")
	assert.Equal(t, "2", runsOf(t, dir, "5"))
}

// TestAskInterruptedWhileTheResponderRuns: Ctrl-C while the responder
// runs: exit 130, and the question, recorded before, still gets its id
// to the asker (stdout; under --json the error's data), pending.
func TestAskInterruptedWhileTheResponderRuns(t *testing.T) {
	dir := retryWorkspace(t, "30s")
	for i, extra := range [][]string{nil, {"--json"}} {
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "started")))
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for {
				if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
		}()
		var out, errb bytes.Buffer
		a := &App{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
			getenv: testGetenv(map[string]string{"AGENTX_ROOT": dir})}
		code := run(ctx, a, append([]string{"clarify", "ask", "--issue", "4", "--from", "engineer", "--to", "architect",
			"--topic", "Logs", "--question", "JSON logs?"}, extra...))
		cancel()
		id := fmt.Sprintf("CLR-4-%03d", i+1)
		require.Equal(t, 130, code, errb.String())
		if extra == nil {
			assert.Equal(t, id+"\n", out.String())
			assert.Equal(t, "agentx: interrupted\n", errb.String())
		} else {
			assert.Empty(t, out.String())
			doc := validateJSON(t, "error.json", errb.String()).(map[string]any)
			assert.Equal(t, id, doc["data"].(map[string]any)["id"])
			assert.Equal(t, "interrupted", doc["error"].(map[string]any)["code"])
		}
		r := runCmd(t, "", map[string]string{"AGENTX_ROOT": dir}, "", "clarify", "show", id, "--json")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "pending", validateDoc(t, "clarification.json", r.stdout)["data"].(map[string]any)["status"])
	}
}
