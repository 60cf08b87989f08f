//go:build unix

package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// The retry of a failed responder, with real responder processes: shell
// scripts that count their runs in a file.

// flaky fails its first run (a model outage) and answers from the second.
const flaky = `#!/bin/sh
n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs
if [ "$n" -eq 1 ]; then echo "HTTP 503: model overloaded" >&2; exit 1; fi
echo "Use the repository pattern."
`

// hostile always fails, writing more than 64 KiB of invalid UTF-8 and
// terminal escapes on stderr.
const hostile = `#!/bin/sh
n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs
i=0; while [ $i -lt 2000 ]; do printf 'garbage \377\376 \033[2J\033]0;pwned\007 line %d\n' $i >&2; i=$((i+1)); done
printf 'last words \377\033[31m\n' >&2
exit 7
`

// realResponder gives the architect a responder: script, run for real.
func (w *world) realResponder(script string, delay time.Duration) {
	w.t.Helper()
	require.NoError(w.t, os.WriteFile(filepath.Join(w.dir, "architect.sh"), []byte(script), 0o755))
	w.rules.Config.Agents["architect"] = workflow.AgentConfig{Command: []string{"./architect.sh"},
		Timeout: workflow.Duration{Duration: 10 * time.Second}, RetryDelay: workflow.Duration{Duration: delay}}
}

// execHub is a hub over the workspace that runs responders as processes.
func (w *world) execHub() *router.Hub {
	h := w.hub()
	h.Runner = router.ExecRunner{Dir: w.dir}
	return h
}

func (w *world) runs() int {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, "runs"))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(w.t, err)
	n := 0
	for _, c := range strings.TrimSpace(string(b)) {
		n = n*10 + int(c-'0')
	}
	return n
}

func (w *world) execRun() *Report { return w.runWithin(DefaultBudget) }

// runWithin runs the monitor with a budget for retries, as a new process.
func (w *world) runWithin(budget time.Duration) *Report {
	m := New(w.execHub())
	m.Budget = budget
	return m.Run(context.Background(), nil)
}

// failingWorld is a world whose architect runs script (which fails its
// first run), retry_delay 30s, asked once on issue 42.
func failingWorld(t *testing.T, script string) (*world, router.Record) {
	t.Helper()
	w := newWorld(t, "", "")
	w.realResponder(script, 30*time.Second)
	return w, w.askFailing(w.execHub())
}

// askFailing asks the architect on issue 42 through h; its responder fails,
// and the retry is scheduled.
func (w *world) askFailing(h *router.Hub) router.Record {
	w.t.Helper()
	rec, err := h.Ask(context.Background(), router.AskRequest{Issue: 42, From: "engineer", To: "architect", Topic: "Adapter", Question: "PostgreSQL or SQLite?"})
	require.NoError(w.t, err)
	require.Equal(w.t, router.OutcomeRetrying, rec.Outcome)
	require.Equal(w.t, ledger.Pending, rec.Status)
	return rec
}

func secs(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// TestFailedResponderIsRetriedAfterTheDelay: the responder fails when
// asked; nothing is retried on the spot nor before retry_delay; the first
// monitor after it makes the retry, which answers.
func TestFailedResponderIsRetriedAfterTheDelay(t *testing.T) {
	w, rec := failingWorld(t, flaky)
	assert.Equal(t, secs(30), rec.RetryAt.Time)
	assert.Equal(t, "./architect.sh exited with status 1; stderr: HTTP 503: model overloaded", rec.X.Monitor.Failure)
	assert.Equal(t, 1, w.runs(), "not retried on the spot")

	w.set(secs(29))
	assert.Empty(t, w.execRun().Findings, "not before the delay")
	assert.Equal(t, 1, w.runs())
	assert.Equal(t, ledger.Pending, w.get(rec.ID).Status)

	w.set(secs(31))
	r := w.execRun()
	require.Equal(t, []string{rec.ID + " retry done"}, results(r))
	assert.Equal(t, KindResponderFailed, r.Findings[0].Kind)
	assert.Equal(t, "re-ran the architect responder: the architect responder answered", r.Findings[0].Detail)
	c := w.get(rec.ID)
	assert.Equal(t, ledger.Answered, c.Status)
	assert.Equal(t, "Use the repository pattern.", c.Current(ledger.Answer).Body)
	assert.Equal(t, 2, w.runs())
	assert.Equal(t, 1, w.events(router.EventResponderFailed, rec.ID))
	assert.Equal(t, 1, w.events(router.EventAnswered, rec.ID))

	w.set(secs(90))
	assert.Empty(t, w.execRun().Findings)
	assert.Equal(t, 2, w.runs(), "retried once")
}

// TestFailedResponderTwiceEscalates: a responder that fails again on its
// retry, with more than 64 KiB of invalid UTF-8 and terminal escapes on
// stderr, escalates, the reason recorded as one bounded line of valid
// UTF-8; it is never run a third time.
func TestFailedResponderTwiceEscalates(t *testing.T) {
	w, rec := failingWorld(t, hostile)
	failure := rec.X.Monitor.Failure
	assert.True(t, utf8.ValidString(failure))
	assert.LessOrEqual(t, len(failure), router.MaxFailureLen)
	assert.NotContains(t, failure, "\x1b")
	assert.Contains(t, failure, `last words \xff\x1b[31m`, "the end of stderr, its bytes made visible")

	w.set(secs(31))
	r := w.execRun()
	require.Equal(t, []string{rec.ID + " retry done"}, results(r))
	c := w.get(rec.ID)
	assert.Equal(t, ledger.Escalated, c.Status)
	reason := router.EscalationReason(c)
	assert.True(t, strings.HasPrefix(reason, "the architect responder failed twice: ./architect.sh exited with status 7; stderr: ..."), reason)
	body := c.Current(ledger.Escalation).Body
	assert.NoError(t, ledger.ValidateText("escalation", body, ledger.MaxBodyLen))
	assert.NotContains(t, body, "\x1b")
	assert.Equal(t, 2, w.runs())
	assert.Equal(t, 2, w.events(router.EventResponderFailed, rec.ID))
	assert.Equal(t, 1, w.events(router.EventEscalated, rec.ID))

	for _, s := range []int{32, 120, 3600} {
		w.set(secs(s))
		assert.Empty(t, w.execRun().Findings)
	}
	assert.Equal(t, 2, w.runs(), "no retry loop")
}

// TestRetryNotMadeWhenAnsweredMeanwhile: someone answers before the retry
// is due: the retry is never made.
func TestRetryNotMadeWhenAnsweredMeanwhile(t *testing.T) {
	w, rec := failingWorld(t, flaky)
	w.set(secs(10))
	_, err := w.execHub().Answer(context.Background(), rec.ID, ledger.Human, "SQLite for now.")
	require.NoError(t, err)
	w.set(secs(31))
	assert.Empty(t, w.execRun().Findings)
	assert.Equal(t, 1, w.runs())
	assert.Equal(t, "SQLite for now.", w.get(rec.ID).Current(ledger.Answer).Body)
}

// slowSecond fails its first run and takes 3 s to answer on later ones.
const slowSecond = `#!/bin/sh
n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs
if [ "$n" -eq 1 ]; then echo "timeout talking to the model" >&2; exit 1; fi
sleep 3
echo "Kafka."
`

// TestRetryCutOffByTheBudgetIsLeftForTheNextCommand: a side monitor's
// budget cuts the retry off; the claim is given back and the next monitor
// (here one with no budget, as `agentx monitor`) makes it.
func TestRetryCutOffByTheBudgetIsLeftForTheNextCommand(t *testing.T) {
	w, rec := failingWorld(t, slowSecond)

	w.set(secs(31))
	start := time.Now()
	r := w.runWithin(1500 * time.Millisecond)
	assert.Less(t, time.Since(start), 3*time.Second, "the command is not held up past its budget")
	require.Equal(t, []string{rec.ID + " retry deferred"}, results(r))
	assert.Contains(t, r.Findings[0].Detail, "did not finish within this command's 1.5s for retries; the retry is left for the next command")
	c := w.get(rec.ID)
	assert.Equal(t, ledger.Pending, c.Status)
	assert.Zero(t, c.X.Monitor.Retries, "the claim was given back")
	assert.Nil(t, c.X.Monitor.RetryUntil)

	r = w.runWithin(time.Millisecond) // no time left: not even started
	require.Equal(t, []string{rec.ID + " retry deferred"}, results(r))
	assert.Equal(t, 2, w.runs())

	r = w.runWithin(0) // as agentx monitor: no budget
	require.Equal(t, []string{rec.ID + " retry done"}, results(r))
	assert.Equal(t, ledger.Answered, w.get(rec.ID).Status)
	assert.Equal(t, 3, w.runs())
}

// TestRetryClaimOfADeadProcessLapses: a process claimed the retry and died
// before it was done; once the claim lapses, another makes it.
func TestRetryClaimOfADeadProcessLapses(t *testing.T) {
	w, rec := failingWorld(t, flaky)
	h := w.execHub()
	w.set(secs(31))
	_, err := h.ClaimRetry(context.Background(), rec.ID, router.ClaimUntil(secs(31), 10*time.Second), nil) // and dies
	require.NoError(t, err)
	assert.Empty(t, w.execRun().Findings, "claimed: nobody else makes it")
	w.set(secs(31 + 10 + 31))
	r := w.execRun()
	require.Equal(t, []string{rec.ID + " retry done"}, results(r))
	assert.Equal(t, ledger.Answered, w.get(rec.ID).Status)
	assert.Equal(t, 2, w.runs())
}

// TestWaitMakesTheRetryWhenDue: an asker waiting alone (no other command
// runs) gets its answer: the wait runs the monitor when the retry is due.
func TestWaitMakesTheRetryWhenDue(t *testing.T) {
	w := newWorld(t, "", "")
	w.realResponder(flaky, 300*time.Millisecond)
	store := ledger.NewStore(filepath.Join(w.dir, ".agentx", "state"), lock.Options{Wait: time.Minute}, time.Now)
	h := router.New(store, w.rules, w.dir)
	h.Warn = func(err error) { t.Errorf("unexpected warning: %v", err) }
	rec := w.askFailing(h)

	var reports []*Report
	got, err := New(h).Wait(context.Background(), rec.ID, 20*time.Second, nil, func(r *Report) { reports = append(reports, r) })
	require.NoError(t, err)
	assert.Equal(t, ledger.Answered, got.Status)
	assert.Equal(t, "Use the repository pattern.", got.Current(ledger.Answer).Body)
	assert.Equal(t, 2, w.runs())
	require.NotEmpty(t, reports)
	assert.Equal(t, []string{rec.ID + " retry done"}, results(reports[len(reports)-1]))

}
