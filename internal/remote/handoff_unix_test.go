//go:build unix

package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// Group commit in remote mode: agentx processes of one host asking on one
// issue at once hand their questions to the process holding the issue's
// lock, whose one change on the shared ledger carries them all (one push,
// where each took a round trip to the remote in turn). Before, 16 such
// asks against a remote 300 ms away took 0.4 s to 7.1 s, one push each.

// slowPushes makes each push of host i's to the remote take d longer (a
// remote an exchange away).
func (w *world) slowPushes(i int, d time.Duration) {
	t := w.t
	script := filepath.Join(t.TempDir(), "receive-pack")
	body := fmt.Sprintf("#!/bin/sh\nsleep %.3f\nexec git-receive-pack \"$@\"\n", d.Seconds())
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	git(t, w.hosts[i], "config", "remote.origin.receivepack", script)
}

// lingeringPushes makes each push of host i's to the remote take d longer
// after it has landed (the remote's answer slow to come back).
func (w *world) lingeringPushes(i int, d time.Duration) {
	t := w.t
	script := filepath.Join(t.TempDir(), "receive-pack")
	body := fmt.Sprintf("#!/bin/sh\ngit-receive-pack \"$@\"\nst=$?\nsleep %.3f\nexit $st\n", d.Seconds())
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	git(t, w.hosts[i], "config", "remote.origin.receivepack", script)
}

// failingFirstPush makes host i's next push to the remote take d, then
// fail, nothing landed (the remote refusing it, the link lost); the pushes
// after it land.
func (w *world) failingFirstPush(i int, d time.Duration) {
	t := w.t
	dir := t.TempDir()
	script, once := filepath.Join(dir, "receive-pack"), filepath.Join(dir, "failed")
	body := fmt.Sprintf("#!/bin/sh\nif [ ! -e %s ]; then : > %s; sleep %.3f; exit 1; fi\nexec git-receive-pack \"$@\"\n", once, once, d.Seconds())
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	git(t, w.hosts[i], "config", "remote.origin.receivepack", script)
}

// firstAsk has host 0 ask on issue 3 alone: the shared ledger's first
// version, settled on the host.
func (w *world) firstAsk() {
	r := w.run(0, "", "clarify", "ask", "--issue", "3", "--from", "engineer", "--to", "architect", "--topic", "first", "--question", "first?", "--non-blocking", "--json")
	require.Equal(w.t, 0, r.code, r.stderr)
}

// ledgerOf is host 0's local copy of issue 3's ledger: its lock, its
// hand-off directory beside it.
func (w *world) ledgerOf() string {
	return filepath.Join(w.hosts[0], ".agentx", "state", "clarifications", "issue-3.json")
}

// asker is an agentx process of host 0 asking on issue 3, started.
type asker struct {
	topic    string
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
	code     int
}

// startAsks starts one ask on host 0's issue 3 for each topic, at once.
func (w *world) startAsks(topics ...string) []*asker {
	var argvs [][]string
	for _, topic := range topics {
		argvs = append(argvs, []string{"clarify", "ask", "--issue", "3", "--from", "engineer", "--to", "architect",
			"--topic", topic, "--question", "which retry budget applies to " + topic + "?", "--non-blocking", "--json"})
	}
	return w.start(topics, argvs)
}

// start starts an agentx process of host 0 for each argv, at once, each
// known by its name (an asker's topic).
func (w *world) start(names []string, argvs [][]string) []*asker {
	t := w.t
	var out []*asker
	for i, argv := range argvs {
		a := &asker{topic: names[i], done: make(chan struct{})}
		a.cmd = exec.Command(w.bin, argv...)
		a.cmd.Dir = w.hosts[0]
		a.cmd.Env = append(os.Environ(), "AGENTX_NO_MONITOR=1", "USER=tester", "GIT_TERMINAL_PROMPT=0")
		a.cmd.Stdout, a.cmd.Stderr = &a.out, &a.err
		require.NoError(t, a.cmd.Start())
		go func() {
			err := a.cmd.Wait()
			a.code = 0
			if ee, ok := err.(*exec.ExitError); ok {
				a.code = ee.ExitCode()
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					a.code = -1
				}
			}
			close(a.done)
		}()
		out = append(out, a)
	}
	return out
}

// holdIssue takes host 0's lock of issue 3 from the test, as a writer
// would, and starts the asks of topics, which find it held: it returns
// once each has handed its question over (its file in the issue's
// hand-off directory), with the lock still held; release lets them go.
func (w *world) holdIssue(topics ...string) (askers []*asker, release func()) {
	return w.holdWhile(func() []*asker { return w.startAsks(topics...) })
}

// holdWhile is holdIssue for the processes start starts, each of which
// hands a question or a change over.
func (w *world) holdWhile(start func() []*asker) (writers []*asker, release func()) {
	t := w.t
	s := ledger.NewStore(filepath.Join(w.hosts[0], ".agentx", "state"), lock.Options{Agent: "test"}, nil)
	f, err := s.Lock(context.Background(), 3)
	require.NoError(t, err)
	writers = start()
	spool := w.ledgerOf() + ledger.HandoffSuffix
	require.Eventually(t, func() bool { return len(handed(spool)) == len(writers) }, 30*time.Second, 10*time.Millisecond,
		"every writer hands its question or change over: %v", handed(spool))
	return writers, func() { require.NoError(t, f.Release()) }
}

// handed lists the questions and changes left in a hand-off directory.
func handed(spool string) []string {
	ents, _ := os.ReadDir(spool)
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".ask") || strings.HasSuffix(e.Name(), ".change") {
			out = append(out, e.Name())
		}
	}
	return out
}

// wait waits for each asker to end.
func waitAll(t *testing.T, askers []*asker) {
	t.Helper()
	for _, a := range askers {
		select {
		case <-a.done:
		case <-time.After(2 * time.Minute):
			t.Fatalf("ask %s did not end: %s", a.topic, a.err.String())
		}
	}
}

func topicsN(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// TestHandedAsksShareOnePush: eight agentx processes of one host ask on
// one issue while its lock is held; once it is let go, one of them makes
// all eight questions in one change, one push (each asker tells its own
// record, with the id the shared ledger gave it); ids dense, each question
// once.
func TestHandedAsksShareOnePush(t *testing.T) {
	w := newWorld(t, 1, "", "")
	w.firstAsk()
	w.slowPushes(0, 300*time.Millisecond)
	topics := topicsN("q", 8)
	askers, release := w.holdIssue(topics...)
	start := time.Now()
	release()
	waitAll(t, askers)
	t.Logf("eight asks made %v after the lock was let go", time.Since(start).Round(time.Millisecond))
	ids := map[string]string{}
	for _, a := range askers {
		require.Equal(t, 0, a.code, "%s: %s", a.topic, a.err.String())
		d := data(t, a.out.String())
		assert.Equal(t, a.topic, d["topic"], "each asker is told its own record")
		assert.NotContains(t, d, "_unsynced")
		ids[d["id"].(string)] = a.topic
	}
	assert.Len(t, ids, len(topics), "eight ids")
	versions := w.chain(3)
	last := checkChain(t, versions)
	assert.Len(t, versions, 2, "the first ask's version, then one for the eight")
	require.Len(t, last.Clarifications, 1+len(topics))
	for _, c := range last.Clarifications[1:] {
		assert.Equal(t, ids[c.ID], c.Topic, "%s is the question its asker was told of", c.ID)
	}
	assert.Empty(t, handed(w.ledgerOf()+ledger.HandoffSuffix))
}

// TestHandedAsksKeptInTheOutbox: the same with the remote gone (out of
// reach): the one change goes to the outbox, and every asker says its
// question is unsynced, as one that kept its own there does.
func TestHandedAsksKeptInTheOutbox(t *testing.T) {
	w := newWorld(t, 1, "", "")
	w.firstAsk()
	require.NoError(t, os.RemoveAll(w.bare))
	askers, release := w.holdIssue(topicsN("gone", 4)...)
	release()
	waitAll(t, askers)
	for _, a := range askers {
		require.Equal(t, 0, a.code, "%s: %s", a.topic, a.err.String())
		var doc struct {
			Data     struct{ ID, Topic string } `json:"data"`
			Unsynced []string                   `json:"unsynced"`
		}
		require.NoError(t, json.Unmarshal(a.out.Bytes(), &doc), a.out.String())
		assert.Equal(t, a.topic, doc.Data.Topic)
		require.Len(t, doc.Unsynced, 1, "%s: told it is kept in the outbox", a.topic)
		assert.Contains(t, doc.Unsynced[0], doc.Data.ID+" asked by engineer of architect")
	}
}

// holderOf waits until one of askers holds host 0's lock of issue 3,
// having taken the others' questions, and returns it.
func (w *world) holderOf(askers []*asker) *asker {
	lockFile, spool := w.ledgerOf()+lock.Suffix, w.ledgerOf()+ledger.HandoffSuffix
	var holder *asker
	require.Eventually(w.t, func() bool {
		if len(handed(spool)) > 0 {
			return false
		}
		var info lock.Info
		data, err := os.ReadFile(lockFile)
		if err != nil || json.Unmarshal(data, &info) != nil {
			return false
		}
		for _, a := range askers {
			if a.cmd.Process.Pid == info.PID {
				holder = a
			}
		}
		return holder != nil
	}, 30*time.Second, 5*time.Millisecond)
	return holder
}

// TestHandedAskHolderKilled: the process that took the others' questions
// is killed while its push is on its way: its git push outlives it and
// lands. The push holds the holder's mark (lock.Inheritance), so its
// askers wait for it to end, then find their questions on the shared
// ledger and succeed, each with the id the push gave it, each question
// once. Before, they woke when the holder died, looked before the push
// had landed, and each failed with handed_lost (exit 5).
func TestHandedAskHolderKilled(t *testing.T) {
	w := newWorld(t, 1, "", "")
	w.firstAsk()
	w.slowPushes(0, 2*time.Second)
	askers, holder, seen := w.killedMidPush("k")
	assert.LessOrEqual(t, seen[holder.topic], 1, "the killed holder's own question is there at most once")
	w.toldTheirIDs(askers, holder, seen)
}

// killedMidPush starts four askers on host 0's issue 3 while its lock is
// held, lets it go, SIGKILLs the one that takes the lock (and the others'
// questions) 0.3 s into its push, and waits for them all; it returns
// them, that holder, and how many times each topic is then on the shared
// ledger.
func (w *world) killedMidPush(prefix string) (askers []*asker, holder *asker, seen map[string]int) {
	t := w.t
	askers, release := w.holdIssue(topicsN(prefix, 4)...)
	release()
	holder = w.holderOf(askers)
	time.Sleep(300 * time.Millisecond) // into its push
	require.NoError(t, holder.cmd.Process.Signal(syscall.SIGKILL))
	waitAll(t, askers)
	assert.Equal(t, -1, holder.code)
	seen = map[string]int{}
	for _, c := range checkChain(t, w.chain(3)).Clarifications {
		seen[c.Topic]++
	}
	return askers, holder, seen
}

// toldTheirIDs checks that each asker but holder exited 0 with the id its
// question has on the shared ledger, which holds it once (seen).
func (w *world) toldTheirIDs(askers []*asker, holder *asker, seen map[string]int) {
	t := w.t
	last := checkChain(t, w.chain(3))
	for _, a := range askers {
		if a == holder {
			continue
		}
		require.Equal(t, 0, a.code, "%s: %s", a.topic, a.err.String())
		c := last.Find(data(t, a.out.String())["id"].(string))
		require.NotNil(t, c, a.topic)
		assert.Equal(t, a.topic, c.Topic, "under the id its asker printed")
		assert.Equal(t, 1, seen[a.topic], "%s is on the shared ledger once", a.topic)
	}
}

// TestHandedAskHolderKilledBeforeAnythingLanded: the holder is killed
// while its push runs, and that push fails: nothing of its change is on
// the shared ledger, in an intent or in the host's outbox. Its askers,
// once the push has ended, find their questions nowhere and ask them
// themselves: each exits 0 with its id, each question once. Before, each
// failed handed_lost.
func TestHandedAskHolderKilledBeforeAnythingLanded(t *testing.T) {
	w := newWorld(t, 1, "", "")
	w.firstAsk()
	w.failingFirstPush(0, 2*time.Second)
	askers, holder, seen := w.killedMidPush("f")
	assert.Zero(t, seen[holder.topic], "the killed holder's own question did not land")
	w.toldTheirIDs(askers, holder, seen)
}

// TestHandedAskHolderKilledAfterItsPushLanded: the holder is killed once
// its push has landed, before it has told its askers (the remote's answer
// slow to come back): they look at the shared ledger, find their
// questions there, and succeed with the ids it gave them, each once.
// Before, each failed handed_lost.
func TestHandedAskHolderKilledAfterItsPushLanded(t *testing.T) {
	w := newWorld(t, 1, "", "")
	w.firstAsk()
	w.lingeringPushes(0, 3*time.Second)
	topics := topicsN("l", 4)
	askers, release := w.holdIssue(topics...)
	release()
	holder := w.holderOf(askers)
	before := len(w.chain(3))
	require.Eventually(t, func() bool { return len(w.chain(3)) > before }, 30*time.Second, 20*time.Millisecond, "the holder's push lands")
	require.NoError(t, holder.cmd.Process.Signal(syscall.SIGKILL))
	waitAll(t, askers)
	last := checkChain(t, w.chain(3))
	for _, a := range askers {
		if a == holder {
			assert.Equal(t, -1, a.code)
			continue
		}
		require.Equal(t, 0, a.code, "%s: %s", a.topic, a.err.String())
		d := data(t, a.out.String())
		assert.Equal(t, a.topic, d["topic"])
		c := last.Find(d["id"].(string))
		require.NotNil(t, c, "%s: %s is on the shared ledger", a.topic, d["id"])
		assert.Equal(t, a.topic, c.Topic, "under the id its asker printed")
	}
	seen := map[string]int{}
	for _, c := range last.Clarifications {
		seen[c.Topic]++
	}
	for _, topic := range topics {
		assert.Equal(t, 1, seen[topic], "%s is on the shared ledger once", topic)
	}
}

// TestHandedAsksOnABusyIssue: on an issue another host writes too, the
// questions handed over go as one intent, merged in one push; while the
// intent waits to be merged, the holder gives the issue's lock back (for
// the host's other writers, which post beside it) and holds its mark,
// on which the askers whose questions it took wait for its word: each is
// told its record, none fails, nothing is left behind.
func TestHandedAsksOnABusyIssue(t *testing.T) {
	w := newWorld(t, 2, "", "")
	for i, topic := range []string{"first", "other host's", "after the other host's"} {
		r := w.run(i%2, "", "clarify", "ask", "--issue", "3", "--from", "engineer", "--to", "architect", "--topic", topic, "--question", topic+"?", "--non-blocking", "--json")
		require.Equal(t, 0, r.code, r.stderr)
	}
	st := w.syncState(0, 3)
	require.False(t, st.Moved.IsZero(), "host 0 has found host 1's change: the issue is busy for it")
	w.slowPushes(0, 300*time.Millisecond)
	topics := topicsN("b", 4)
	askers, release := w.holdIssue(topics...)
	spool, lockFile := w.ledgerOf()+ledger.HandoffSuffix, w.ledgerOf()+lock.Suffix
	release()
	// while its intent waits, the holder gives the issue's lock back and
	// holds its mark, on which the askers it took from wait
	asideWithMark := false
	for deadline := time.Now().Add(20 * time.Second); !asideWithMark && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		marks, _ := filepath.Glob(filepath.Join(spool, "*.mark"))
		_, err := os.Stat(lockFile)
		asideWithMark = len(marks) > 0 && os.IsNotExist(err)
	}
	assert.True(t, asideWithMark, "the lock given back while the holder's mark is held")
	waitAll(t, askers)
	for _, a := range askers {
		require.Equal(t, 0, a.code, "%s: %s", a.topic, a.err.String())
		assert.Equal(t, a.topic, data(t, a.out.String())["topic"])
	}
	ents, _ := os.ReadDir(spool)
	for _, e := range ents {
		t.Errorf("left in the hand-off directory: %s", e.Name())
	}
	versions := w.chain(3)
	last := checkChain(t, versions)
	require.Len(t, last.Clarifications, 3+len(topics))
	assert.Len(t, versions, 4, "the three asks before, then one merge of the four")
	msgs := git(t, w.bare, "log", "-1", "--format=%s", w.ref(3))
	assert.Contains(t, msgs, "posted on", "merged as an intent: %s", msgs)
}

// TestHandedAskOverTheCap: questions handed over that the asker's question
// cap does not let the holder make are told so, and made again by their
// askers, whose own refusal says why (rejected, exit 4), as on one machine.
func TestHandedAskOverTheCap(t *testing.T) {
	w := newWorld(t, 1, "", "")
	w.capped(0, 2)
	topics := topicsN("c", 4)
	askers, release := w.holdIssue(topics...)
	release()
	waitAll(t, askers)
	made, refused := rejected(t, askers)
	assert.Equal(t, 2, made, "the cap's two questions")
	assert.Equal(t, 2, refused, "the others refused by the cap, not lost")
	assert.Len(t, checkChain(t, w.chain(3)).Clarifications, 2)
}

// rejected counts the asks that were made (exit 0) and those the question
// cap refused (rejected, exit 4); any other end fails the test.
func rejected(t *testing.T, askers []*asker) (made, refused int) {
	t.Helper()
	for _, a := range askers {
		switch a.code {
		case 0:
			made++
		case 4:
			refused++
			assert.Contains(t, a.err.String(), `"rejected"`)
		default:
			t.Errorf("%s: exit %d: %s", a.topic, a.code, a.err.String())
		}
	}
	return made, refused
}

// capped sets host i's question cap to n questions an agent.
func (w *world) capped(i, n int) {
	t := w.t
	cfg := filepath.Join(w.hosts[i], ".agentx", "config.toml")
	data, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.Contains(t, string(data), "\nmax_questions = 0\n")
	require.NoError(t, os.WriteFile(cfg, bytes.Replace(data, []byte("\nmax_questions = 0\n"), []byte(fmt.Sprintf("\nmax_questions = %d\n", n)), 1), 0o644))
}

// TestHandedAsksRefusedOnTheSharedLedger: the holder made its question and
// one handed to it on its copy, which the cap allowed; the shared ledger,
// where another host has asked meanwhile, is full: the holder's own is
// refused there, nothing of its write lands, and it tells the asker so,
// which makes its question itself and is refused too (rejected, not
// handed_lost).
func TestHandedAsksRefusedOnTheSharedLedger(t *testing.T) {
	w := newWorld(t, 2, "", "")
	w.capped(0, 2)
	w.capped(1, 2)
	w.firstAsk()
	r := w.run(1, "", "clarify", "ask", "--issue", "3", "--from", "engineer", "--to", "architect", "--topic", "other host's", "--question", "other?", "--non-blocking", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	askers, release := w.holdIssue(topicsN("s", 2)...)
	release()
	waitAll(t, askers)
	made, refused := rejected(t, askers)
	assert.Zero(t, made)
	assert.Equal(t, 2, refused)
	assert.Len(t, checkChain(t, w.chain(3)).Clarifications, 2)
}

// askedEight has host 0 ask eight questions on issue 3 (handed to one
// holder: one push) after its first; their ids, in the order asked.
func (w *world) askedEight() []string {
	t := w.t
	w.firstAsk()
	askers, release := w.holdIssue(topicsN("q", 8)...)
	release()
	waitAll(t, askers)
	var ids []string
	for _, a := range askers {
		require.Equal(t, 0, a.code, "%s: %s", a.topic, a.err.String())
		ids = append(ids, data(t, a.out.String())["id"].(string))
	}
	return ids
}

// changeEach starts, while host 0 holds issue 3's lock, one change on each
// of ids, at once: an assumption of the engineer's on the even ones, an
// answer of the architect's on the odd; each hands it over.
func (w *world) changeEach(ids []string) (writers []*asker, release func()) {
	var argvs [][]string
	for i, id := range ids {
		if i%2 == 0 {
			argvs = append(argvs, []string{"clarify", "assume", id, "--from", "engineer", "--assumption", "proceeding on " + id, "--json"})
		} else {
			argvs = append(argvs, []string{"clarify", "answer", id, "--from", "architect", "--body", "the answer to " + id, "--json"})
		}
	}
	return w.holdWhile(func() []*asker { return w.start(ids, argvs) })
}

// TestHandedChangesShareOnePush: answers and assumptions of eight agentx
// processes of one host, each on its own question of one issue, made
// while the issue's lock is held, are handed to the process that takes
// it next: one change on the shared ledger, one push, where each took a
// round trip in turn; each process is told its own record as written.
func TestHandedChangesShareOnePush(t *testing.T) {
	w := newWorld(t, 1, "", "")
	ids := w.askedEight()
	before := len(w.chain(3))
	w.slowPushes(0, 300*time.Millisecond)
	last := w.madeInOnePush(w.changeEach(ids))(before)
	for i, id := range ids {
		c := last.Find(id)
		require.NotNil(t, c, id)
		if i%2 == 0 {
			require.NotNil(t, c.X, id)
			require.Len(t, c.X.Assumptions, 1, id)
			assert.Equal(t, "proceeding on "+id, c.X.Assumptions[0].Body)
			continue
		}
		assert.Equal(t, ledger.Answered, c.Status, id)
		assert.Equal(t, "the answer to "+id, c.Thread[len(c.Thread)-1].Body)
	}
	assert.Empty(t, handed(w.ledgerOf()+ledger.HandoffSuffix))
}

// madeInOnePush lets the issue's lock go (release) and waits for the
// writers, each of which must be told its own record (by id); then, given
// the versions of issue 3's chain before, checks that one version more
// carries them all and returns the ledger it holds.
func (w *world) madeInOnePush(writers []*asker, release func()) func(before int) *ledger.Ledger {
	t := w.t
	start := time.Now()
	release()
	waitAll(t, writers)
	t.Logf("%d changes made %v after the lock was let go", len(writers), time.Since(start).Round(time.Millisecond))
	for _, a := range writers {
		require.Equal(t, 0, a.code, "%s: %s", a.topic, a.err.String())
		assert.Equal(t, a.topic, data(t, a.out.String())["id"], "each writer is told its own record")
	}
	return func(before int) *ledger.Ledger {
		versions := w.chain(3)
		assert.Len(t, versions, before+1, "one version for the changes")
		return checkChain(t, versions)
	}
}

// TestHandedChangesKeptInTheOutbox: the same with the remote gone: the
// one change goes to the outbox, and each writer says its change is
// unsynced, as one that kept its own there does.
func TestHandedChangesKeptInTheOutbox(t *testing.T) {
	w := newWorld(t, 1, "", "")
	ids := w.askedEight()[:4]
	require.NoError(t, os.RemoveAll(w.bare))
	writers, release := w.changeEach(ids)
	release()
	waitAll(t, writers)
	for i, a := range writers {
		require.Equal(t, 0, a.code, "%s: %s", a.topic, a.err.String())
		var doc struct {
			Data     struct{ ID string } `json:"data"`
			Unsynced []string            `json:"unsynced"`
		}
		require.NoError(t, json.Unmarshal(a.out.Bytes(), &doc), a.out.String())
		assert.Equal(t, a.topic, doc.Data.ID)
		require.Len(t, doc.Unsynced, 1, "%s: told it is kept in the outbox", a.topic)
		// a writer told by the holder, or the holder (the outbox's words
		// for its whole change)
		want := []string{a.topic + ": an assumption by engineer", a.topic + " assumption by engineer"}
		if i%2 == 1 {
			want = []string{a.topic + ": an answer by architect", a.topic + " answered by architect"}
		}
		assert.True(t, strings.Contains(doc.Unsynced[0], want[0]) || strings.Contains(doc.Unsynced[0], want[1]), "%s: %s", a.topic, doc.Unsynced[0])
	}
}

// TestHandedFollowupsAndClosingsShareOnePush: follow-ups, resolutions,
// escalations and cancels (an abandon by the asker) of eight agentx processes of one host, each on
// its own question of one issue, made while the issue's lock is held,
// are handed over as answers are: one change on the shared ledger, one
// push; each process is told its own record. Before, each took the
// issue's lock, and a round trip to the remote, in turn.
func TestHandedFollowupsAndClosingsShareOnePush(t *testing.T) {
	w := newWorld(t, 1, "", "")
	ids := w.askedEight()
	for i, id := range ids {
		if i%2 == 1 {
			r := w.run(0, "architect", "clarify", "answer", id, "--body", "yes", "--json")
			require.Equal(t, 0, r.code, r.stderr)
		}
	}
	before := len(w.chain(3))
	var argvs [][]string
	for i, id := range ids {
		switch i % 4 {
		case 0:
			argvs = append(argvs, []string{"clarify", "cancel", id, "--from", "engineer", "--json"})
		case 2:
			argvs = append(argvs, []string{"clarify", "escalate", id, "--reason", "no agent knows " + id, "--json"})
		case 1:
			argvs = append(argvs, []string{"clarify", "followup", id, "--from", "engineer", "--body", "and for " + id + "?", "--json"})
		case 3:
			argvs = append(argvs, []string{"clarify", "resolve", id, "--from", "engineer", "--body", "done with " + id, "--json"})
		}
	}
	last := w.madeInOnePush(w.holdWhile(func() []*asker { return w.start(ids, argvs) }))(before)
	for i, id := range ids {
		c := last.Find(id)
		require.NotNil(t, c, id)
		end := c.Thread[len(c.Thread)-1]
		switch i % 4 {
		case 2:
			assert.Equal(t, ledger.Escalated, c.Status, id)
			assert.Contains(t, end.Body, "no agent knows "+id)
		case 0:
			assert.Equal(t, ledger.Abandoned, c.Status, id)
			assert.Equal(t, "engineer", end.From, id)
			assert.True(t, ledger.Cancelled(c), id)
		case 1:
			assert.Equal(t, ledger.Pending, c.Status, id)
			assert.Equal(t, 2, c.Round, id)
			assert.Equal(t, "and for "+id+"?", end.Body)
		case 3:
			assert.Equal(t, ledger.Resolved, c.Status, id)
			assert.Equal(t, "done with "+id, end.Body)
		}
	}
	assert.Empty(t, handed(w.ledgerOf()+ledger.HandoffSuffix))
}
