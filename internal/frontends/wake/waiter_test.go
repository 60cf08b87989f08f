package wake

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/workflow"
)

// TestLiveWaiterDeliversNotResume: while a session's live waiter (hook
// rewake) runs, an answer does not start the resume command: the waiter
// wakes the session in place. A waiter whose process or whose session's
// client is gone is no waiter: the answer goes to resume.
func TestLiveWaiterDeliversNotResume(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	require.NoError(t, RecordSession(ctx, w.hub.Store, "engineer", issue(7), Session{ID: "s-live", Cwd: w.dir}))
	release, err := Waiting(ctx, w.hub.Store, "engineer", "s-live", 0)
	require.NoError(t, err)
	w.askAndAnswer(t, 7, "Yes.")
	assert.Empty(t, w.waker(t).Run(ctx), "the live waiter of the session delivers")
	st, err := Look(w.hub.Store, "engineer", "s-live", issue(7))
	require.NoError(t, err)
	assert.True(t, st.Mine)
	assert.False(t, st.Held)
	release()
	assert.Len(t, w.waker(t).Run(ctx), 1, "the waiter gone: resumed")

	// a waiter whose client process exited (the person closed the session)
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	w2 := newWorld(t)
	require.NoError(t, RecordSession(ctx, w2.hub.Store, "engineer", issue(3), Session{ID: "s-closed"}))
	_, err = Waiting(ctx, w2.hub.Store, "engineer", "s-closed", gone.Process.Pid)
	require.NoError(t, err)
	w2.askAndAnswer(t, 3, "No.")
	assert.Len(t, w2.waker(t).Run(ctx), 1, "the session was closed: resumed")

	// a waiter of another session does not stop the resume of this one
	w3 := newWorld(t)
	require.NoError(t, RecordSession(ctx, w3.hub.Store, "engineer", issue(4), Session{ID: "s-new"}))
	_, err = Waiting(ctx, w3.hub.Store, "engineer", "s-old", os.Getpid())
	require.NoError(t, err)
	w3.askAndAnswer(t, 4, "Maybe.")
	assert.Len(t, w3.waker(t).Run(ctx), 1)
}

// TestNewerWaiterReplaces: the waiter a later turn of the same session
// starts takes the record; the earlier one sees it is not its own.
func TestNewerWaiterReplaces(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	_, err := Waiting(ctx, w.hub.Store, "engineer", "s", 0)
	require.NoError(t, err)
	var st State
	require.NoError(t, w.hub.Store.UpdateState(ctx, StateFile("engineer"), &st, func() error {
		wt := st.Waiters["s"]
		wt.PID = os.Getppid() // another live process took over
		st.Waiters["s"] = wt
		return nil
	}))
	got, err := Look(w.hub.Store, "engineer", "s", nil)
	require.NoError(t, err)
	assert.False(t, got.Mine)
}

// TestSecondReplyWakesAgain: a person's further reply to an answered
// round is a new delivery for the resume command, not the first claimed
// again.
func TestSecondReplyWakesAgain(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	require.NoError(t, RecordSession(ctx, w.hub.Store, "engineer", issue(7), Session{ID: "s-42"}))
	id := w.askAndAnswer(t, 7, "eu-west-1")
	require.Len(t, w.waker(t).Run(ctx), 1)
	_, err := w.hub.Answer(ctx, id, "human", "And keep backups in eu-central-1.")
	require.NoError(t, err)
	require.Len(t, w.waker(t).Run(ctx), 1, "the second reply wakes again")
	assert.Contains(t, w.s.runs[1].stdin, "eu-central-1")
	assert.NotContains(t, w.s.runs[1].stdin, "eu-west-1", "each reply once")
	assert.Empty(t, w.waker(t).Run(ctx))
}

func TestValidSession(t *testing.T) {
	for _, ok := range []string{"s-1", "0b8f2c1e-1f2a-4c3b-9d8e-7a6b5c4d3e2f", "ci_run.7", strings.Repeat("a", 128)} {
		assert.NoError(t, ValidSession(ok), ok)
	}
	for _, bad := range []string{"", "--dangerously-skip-permissions", "-p", ".hidden", "a b", "a;b", "x/../y", "é", strings.Repeat("a", 129), "a\nb"} {
		assert.Error(t, ValidSession(bad), bad)
	}
	// a session id is never recorded (and so never put into a resume
	// command) unless it has that shape
	w := newWorld(t)
	assert.Error(t, RecordSession(context.Background(), w.hub.Store, "engineer", nil, Session{ID: "--dangerously-skip-permissions"}))
}

// TestResumeRunsFromTheWorkspace: a hook payload's cwd outside the
// workspace is not where a resume command runs, and a relative program is
// the workspace's file (what agentx trust hashed), never one the payload's
// directory holds.
func TestResumeRunsFromTheWorkspace(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	elsewhere := t.TempDir()
	require.NoError(t, RecordSession(ctx, w.hub.Store, "engineer", issue(7), Session{ID: "s-1", Cwd: elsewhere}))
	w.askAndAnswer(t, 7, "Yes.")
	wk := w.waker(t)
	wk.Agents = map[string]workflow.AgentConfig{"engineer": {Resume: []string{"./wake.sh", "{session}"}}}
	require.Len(t, wk.Run(ctx), 1)
	assert.Equal(t, w.dir, w.s.runs[0].dir, "a cwd outside the workspace is refused")
	assert.Equal(t, []string{filepath.Join(w.dir, "wake.sh"), "s-1"}, w.s.runs[0].argv)

	// a directory inside the workspace is kept
	inside := filepath.Join(w.dir, "sub")
	require.NoError(t, os.Mkdir(inside, 0o755))
	assert.Equal(t, inside, wk.dir(inside))
	assert.Equal(t, w.dir, wk.dir(filepath.Join(w.dir, "..")))
}

// TestQueueWhileTheClientRuns: an agent with a queue command (Codex's
// codex queue) is delivered to through it while the client process its
// Stop hook reported runs, with what came back as {text}; once that
// client has exited, its resume command runs instead.
func TestQueueWhileTheClientRuns(t *testing.T) {
	agents := map[string]workflow.AgentConfig{"engineer": {
		Queue:  []string{"codex", "queue", "--thread", "{session}", "--message", "{text}"},
		Resume: []string{"codex", "exec", "resume", "{session}"},
	}}
	w := newWorld(t)
	ctx := context.Background()
	require.NoError(t, RecordSession(ctx, w.hub.Store, "engineer", issue(7), Session{ID: "th-1", Owner: os.Getpid()}))
	w.askAndAnswer(t, 7, "Repository pattern")
	wk := w.waker(t)
	wk.Agents = agents
	require.Len(t, wk.Run(ctx), 1)
	argv := w.s.runs[0].argv
	require.Len(t, argv, 6)
	assert.Equal(t, []string{"codex", "queue", "--thread", "th-1", "--message"}, argv[:5])
	assert.Contains(t, argv[5], "Repository pattern")
	assert.Equal(t, argv[5], w.s.runs[0].stdin)

	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	w2 := newWorld(t)
	require.NoError(t, RecordSession(ctx, w2.hub.Store, "engineer", issue(7), Session{ID: "th-2", Owner: gone.Process.Pid}))
	w2.askAndAnswer(t, 7, "Yes.")
	wk2 := w2.waker(t)
	wk2.Agents = agents
	require.Len(t, wk2.Run(ctx), 1)
	assert.Equal(t, []string{"codex", "exec", "resume", "th-2"}, w2.s.runs[0].argv)

	// only a queue, and the client gone: nothing runs, the inbox keeps it
	w3 := newWorld(t)
	require.NoError(t, RecordSession(ctx, w3.hub.Store, "engineer", issue(7), Session{ID: "th-3", Owner: gone.Process.Pid}))
	w3.askAndAnswer(t, 7, "No.")
	wk3 := w3.waker(t)
	wk3.Agents = map[string]workflow.AgentConfig{"engineer": {Queue: agents["engineer"].Queue}}
	assert.Empty(t, wk3.Run(ctx))
}

// TestDeliveredBeforeTheClaimIsNotClaimed: a waker that looked before a
// live waiter (or a held hook) delivered, and takes the wake lock once the
// waiter's record is gone, claims nothing: the items are marked in the
// inbox before the record goes, and the claim looks again under the lock.
func TestDeliveredBeforeTheClaimIsNotClaimed(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	require.NoError(t, RecordSession(ctx, w.hub.Store, "engineer", issue(7), Session{ID: "s-1"}))
	w.askAndAnswer(t, 7, "Yes.")
	wk := w.waker(t)
	seen, err := inbox.Check(ctx, w.hub.Store, inbox.Options{Agent: "engineer", Peek: true, Kinds: Kinds})
	require.NoError(t, err)
	require.Len(t, seen.Items, 1)
	// the waiter delivers (and its record is gone)
	got, err := inbox.Check(ctx, w.hub.Store, inbox.Options{Agent: "engineer", Kinds: Kinds, Via: inbox.ViaRewake})
	require.NoError(t, err)
	require.Len(t, got.Items, 1)
	_, ok, err := wk.claim(ctx, "engineer", 7, seen, seen.Items)
	require.NoError(t, err)
	assert.False(t, ok, "delivered already: nothing to claim")
	assert.Zero(t, w.s.count())
}
