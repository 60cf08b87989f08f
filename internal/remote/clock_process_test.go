package remote_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// These tests give one host a wrong clock (AGENTX_NOW, which also dates
// the commits agentx makes there, as a wrong system clock would) and run
// the monitor for real on every host: every command fetches (interval 0s)
// and each host has its own name (AGENTX_HOST).

// clockWorld is a world of n hosts for the clock tests.
func clockWorld(t *testing.T, n int) *world {
	return newWorld(t, n, "", "interval = \"0s\"\n")
}

// at runs agentx on host i, as agent, with its clock at now ("" for the
// real one), the monitor on.
func (w *world) at(i int, now time.Time, agent string, args ...string) result {
	env := []string{fmt.Sprintf("AGENTX_HOST=host%d", i)}
	if !now.IsZero() {
		env = append(env, "AGENTX_NOW="+now.UTC().Format(time.RFC3339))
	}
	return w.runEnv(i, env, agent, args...)
}

// askAt asks a question of the architect on issue 1 from host i, its clock
// at now, and returns its id.
func (w *world) askAt(i int, now time.Time, topic string) string {
	t := w.t
	t.Helper()
	r := w.at(i, now, "engineer", "clarify", "ask", "--issue", "1", "--to", "architect", "--topic", topic, "--question", topic+"?", "--non-blocking", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	return data(t, r.stdout)["id"].(string)
}

// statuses is each question's status on the remote.
func (w *world) statuses(issue int) map[string]ledger.Status {
	out := map[string]ledger.Status{}
	for _, c := range checkChain(w.t, w.chain(issue)).Clarifications {
		out[c.ID] = c.Status
	}
	return out
}

// TestClockAheadHolds: a host whose clock is 5 h ahead does not mark the
// other hosts' fresh questions stale: not on its first look (no commit of
// another host is that late), nor once it has seen another host's commit
// made between two of its fetches with a time 5 h before the first: then
// it warns, records an event, and doctor reports it. Its own question it
// still marks stale by its own clock.
func TestClockAheadHolds(t *testing.T) {
	w := clockWorld(t, 3)
	real := time.Time{}
	ahead := time.Now().Add(5 * time.Hour)

	q1 := w.askAt(0, real, "Cache")
	r := w.at(2, ahead, "", "monitor")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, ledger.Pending, w.statuses(1)[q1], "the first look of the host ahead stales nothing: %s%s", r.stdout, r.stderr)
	assert.NotContains(t, r.stderr, "clocks disagree", "one fetch: nothing to compare yet")

	q2 := w.askAt(1, real, "Retry")
	r = w.at(2, ahead, "", "monitor")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `clocks disagree: the clock of host host1 is (4h59m5\ds|5h0m\ds) behind this host's`, r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, "clocks disagree"), "one warning per command")
	st := w.statuses(1)
	assert.Equal(t, ledger.Pending, st[q1])
	assert.Equal(t, ledger.Pending, st[q2])

	// Its own question: stale by its own clock, one SLA (30 min) later,
	// while the others' stay as they are.
	q3 := w.askAt(2, ahead, "Queue")
	ahead = ahead.Add(31 * time.Minute)
	r = w.at(2, ahead, "", "monitor")
	require.Equal(t, 0, r.code, r.stderr)
	st = w.statuses(1)
	assert.Equal(t, ledger.Stale, st[q3], "%s%s", r.stdout, r.stderr)
	assert.Equal(t, ledger.Pending, st[q1])
	assert.Equal(t, ledger.Pending, st[q2])

	r = w.at(2, ahead, "", "events", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, 1, strings.Count(r.stdout, `"remote-clock-skew"`), "one event for the disagreement found: %s", r.stdout)
	r = w.at(2, ahead, "", "doctor")
	assert.Regexp(t, `warning +remote .*clock.json: since .*: the clock of host host1 is (4h59m5\ds|5h0m\ds) behind`, r.stdout)

	// The correct hosts see host 2's commits in their future: they say so,
	// and hold nothing back for it (a commit dated in the future, which
	// anyone who can push may make, suspends no host's checks).
	r = w.at(0, real, "", "monitor")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `the clock of host host2 is (4h59m5\ds|5h\d+m\d+s) ahead of this host's`, r.stderr)
	assert.Contains(t, r.stderr, "commits dated in this host's future hold nothing back")
	assert.NotContains(t, r.stderr, "no stale, retry or escalation")
}

// TestClockBehindNotStaledAtOnce: a host whose clock is 5 h behind asks;
// its question looks 5 h old to the correct hosts. A host that had
// fetched before sees the commit arrive between two of its fetches dated
// 5 h before the first: the clocks disagree, it holds and warns. A host
// that never fetched before judges the question by how long it has seen
// it: not stale either.
func TestClockBehindNotStaledAtOnce(t *testing.T) {
	w := clockWorld(t, 3)
	real := time.Time{}
	behind := time.Now().Add(-5 * time.Hour)

	r := w.at(0, real, "", "sync")
	require.Equal(t, 0, r.code, r.stderr)
	q := w.askAt(1, behind, "Schema")

	r = w.at(0, real, "", "monitor")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, ledger.Pending, w.statuses(1)[q], "host 0 must not stale it at once: %s%s", r.stdout, r.stderr)
	assert.Regexp(t, `the clock of host host1 is (4h59m5\ds|5h0m\ds) behind this host's`, r.stderr)

	r = w.at(2, real, "", "monitor")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, ledger.Pending, w.statuses(1)[q], "host 2 must not stale it at once: %s%s", r.stdout, r.stderr)
	// One SLA after it first saw it, host 2 (which measured no
	// disagreement) would; host 0 still holds.
	later := time.Now().Add(31 * time.Minute)
	r = w.at(0, later, "", "monitor")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, ledger.Pending, w.statuses(1)[q], "host 0 holds while the disagreement stands")
}

// TestClockQuietRemote: with no commit of another host since, a question
// past its SLA is marked stale by the host that asked it (its own clock),
// not by another host, which has no evidence that the time has come.
func TestClockQuietRemote(t *testing.T) {
	w := clockWorld(t, 2)
	now := time.Now().UTC().Truncate(time.Second)
	r := w.at(1, now, "", "sync")
	require.Equal(t, 0, r.code, r.stderr)
	q := w.askAt(0, now, "Cache")
	later := now.Add(31 * time.Minute)

	r = w.at(1, later, "", "monitor")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, ledger.Pending, w.statuses(1)[q], "another host has no evidence: %s%s", r.stdout, r.stderr)

	r = w.at(0, later, "", "monitor")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, ledger.Stale, w.statuses(1)[q], "the asker's host marks it stale: %s%s", r.stdout, r.stderr)
	_, err := os.Stat(filepath.Join(w.hosts[0], ".agentx", "state", "remote", "clock.json"))
	assert.NoError(t, err)
}

// TestClockRewoundRefIsNoSkew: a ref moved back to a commit made an hour
// ago (a restored backup) is not a commit made between two fetches: it
// tells nothing of the clocks, whether the ref was moved or deleted and
// put back.
func TestClockRewoundRefIsNoSkew(t *testing.T) {
	w := clockWorld(t, 2)
	w.askAt(0, time.Now().Add(-time.Hour), "Old")
	old := git(t, w.bare, "rev-parse", w.ref(1))
	w.askAt(0, time.Time{}, "New")
	require.Equal(t, 0, w.at(1, time.Time{}, "", "sync").code)

	git(t, w.bare, "update-ref", w.ref(1), old)
	r := w.at(1, time.Time{}, "", "sync")
	require.Equal(t, 7, r.code, "refused: %s", r.stderr)
	assert.NotContains(t, r.stderr, "clocks disagree")

	git(t, w.bare, "update-ref", "-d", w.ref(1))
	assert.Equal(t, 7, w.at(1, time.Time{}, "", "sync").code)
	git(t, w.bare, "update-ref", w.ref(1), old)
	r = w.at(1, time.Time{}, "", "sync")
	assert.Equal(t, 7, r.code)
	assert.NotContains(t, r.stderr, "clocks disagree")
	data, err := os.ReadFile(filepath.Join(w.hosts[1], ".agentx", "state", "remote", "clock.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"skews"`)
}

// TestClockAheadFleet: hosts 0 and 1 ask for 15 s while host 2, its clock
// 5 h ahead, runs the monitor over and over (the monitor side of every
// command it runs). Not one of the others' fresh questions is marked
// stale; host 2 says why it holds.
func TestClockAheadFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 15 s")
	}
	w := clockWorld(t, 3)
	ahead := time.Now().Add(5 * time.Hour)
	stop := make(chan struct{})
	var asks, looks, warned int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for h := range 2 {
		wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				r := w.at(h, time.Time{}, "engineer", "clarify", "ask", "--issue", fmt.Sprint(1+k%3), "--to", "architect",
					"--topic", fmt.Sprintf("h%d-%d", h, k), "--question", "which budget?", "--non-blocking")
				if assert.Contains(t, []int{0, 5}, r.code, r.stderr) && r.code == 0 {
					mu.Lock()
					asks++
					mu.Unlock()
				}
			}
		})
	}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			r := w.at(2, ahead, "", "monitor")
			assert.Equal(t, 0, r.code, r.stderr)
			mu.Lock()
			looks++
			if strings.Contains(r.stderr, "clocks disagree") {
				warned++
			}
			mu.Unlock()
		}
	})
	time.Sleep(15 * time.Second)
	close(stop)
	wg.Wait()
	stale, total := 0, 0
	for issue := 1; issue <= 3; issue++ {
		for _, c := range checkChain(t, w.chain(issue)).Clarifications {
			total++
			if c.Status != ledger.Pending {
				stale++
			}
		}
	}
	t.Logf("%d asks acknowledged on hosts 0 and 1, %d looks by host 2 (%d warned): %d of %d questions not pending", asks, looks, warned, stale, total)
	assert.Zero(t, stale, "host 2 marked other hosts' fresh questions stale")
	assert.Positive(t, warned)
}

// TestClockSeenUnderOwnCommit: another host's commit that this host wrote
// on top of before its next fetch of every ref (its asks fetched only that
// issue's ref) is looked at all the same: the head is this host's own
// commit, which tells nothing, and the other host's under it says its
// clock is 5 h behind. Its question stays pending meanwhile.
func TestClockSeenUnderOwnCommit(t *testing.T) {
	w := newWorld(t, 2, "", "interval = \"1h\"\n")
	real := time.Time{}
	behind := time.Now().Add(-5 * time.Hour)

	w.askAt(1, real, "Retry")
	r := w.at(1, real, "", "sync")
	require.Equal(t, 0, r.code, r.stderr)
	q := w.askAt(0, behind, "Schema")
	w.askAt(1, real, "Cache")
	w.askAt(1, real, "Queue")
	r = w.at(1, real, "", "sync")
	require.Equal(t, 0, r.code, r.stderr)
	r = w.at(1, real, "", "monitor")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `the clock of host host0 is (4h59m5\ds|5h0m\ds) behind this host's`, r.stderr)
	assert.Equal(t, ledger.Pending, w.statuses(1)[q])
}
