package wake

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// started records the resume commands a Waker started.
type started struct {
	mu   sync.Mutex
	runs []run
}

type run struct {
	argv  []string
	dir   string
	stdin string
}

func (s *started) start(argv []string, dir string, env []string, stdin, log string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, run{argv: argv, dir: dir, stdin: stdin})
	return nil
}

func (s *started) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.runs)
}

type world struct {
	dir string
	hub *router.Hub
	s   started
}

var resume = map[string]workflow.AgentConfig{"engineer": {Resume: []string{"claude", "-p", "--resume", "{session}", "--", "{issue}:{id}:{agent}"}}}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir, rules := testenv.Workspace(t, "")
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, time.Now)
	return &world{dir: dir, hub: router.New(store, rules, dir)}
}

// waker is one agentx process's waker (its own store: the locks are files).
func (w *world) waker(t *testing.T) *Waker {
	store := ledger.NewStore(filepath.Join(w.dir, ".agentx", "state"), lock.Options{}, time.Now)
	return &Waker{Store: store, Agents: resume, Root: w.dir, Start: w.s.start, Warn: func(err error) { t.Errorf("warning: %v", err) }}
}

func (w *world) askAndAnswer(t *testing.T, issue int, answer string) string {
	t.Helper()
	ctx := context.Background()
	rec, err := w.hub.Ask(ctx, router.AskRequest{Issue: issue, From: "engineer", To: "architect", Topic: "Design", Question: "Which pattern?"})
	require.NoError(t, err)
	_, err = w.hub.Answer(ctx, rec.ID, "architect", answer)
	require.NoError(t, err)
	return rec.ID
}

func issue(n int) *int { return &n }

// claimKey is the key a wake claims the engineer's answer to id by.
func (w *world) claimKey(t *testing.T, id string) string {
	t.Helper()
	res, err := inbox.Check(context.Background(), w.hub.Store, inbox.Options{Agent: "engineer", Peek: true, Kinds: Kinds})
	require.NoError(t, err)
	for _, it := range res.Items {
		if it.ID == id {
			return ClaimKey(it)
		}
	}
	t.Fatalf("no item for %s", id)
	return ""
}

func TestWakesOncePerDelivery(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	require.NoError(t, RecordSession(ctx, w.hub.Store, "engineer", issue(7), Session{ID: "s-42", Cwd: w.dir}))
	id := w.askAndAnswer(t, 7, "Repository pattern")

	woke := w.waker(t).Run(ctx)
	require.Len(t, woke, 1)
	require.Equal(t, 1, w.s.count())
	r := w.s.runs[0]
	assert.Equal(t, []string{"claude", "-p", "--resume", "s-42", "--", "7:" + id + ":engineer"}, r.argv)
	assert.Equal(t, w.dir, r.dir)
	assert.Contains(t, r.stdin, "Repository pattern")
	assert.Contains(t, r.stdin, id)

	assert.Empty(t, w.waker(t).Run(ctx), "delivered once")
	assert.Equal(t, 1, w.s.count())
	var st State
	require.NoError(t, w.hub.Store.ReadState(StateFile("engineer"), &st))
	require.Len(t, st.Claims, 1)
	assert.True(t, st.Claims[0].Started && st.Claims[0].Marked, "the claim records each step, so another process never takes it over")

	// a second round's answer is a new delivery
	_, err := w.hub.Followup(ctx, id, "engineer", "With a cache?")
	require.NoError(t, err)
	_, err = w.hub.Answer(ctx, id, "architect", "No cache.")
	require.NoError(t, err)
	require.Len(t, w.waker(t).Run(ctx), 1)
	assert.Contains(t, w.s.runs[1].stdin, "No cache.")
	assert.NotContains(t, w.s.runs[1].stdin, "Repository pattern", "each item once")
}

func TestNoSessionNoWake(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.askAndAnswer(t, 7, "Yes.")
	assert.Empty(t, w.waker(t).Run(ctx), "nowhere to resume: the inbox delivers it at the next prompt")
	// a session for any issue serves
	require.NoError(t, RecordSession(ctx, w.hub.Store, "engineer", nil, Session{ID: "s-1"}))
	assert.Len(t, w.waker(t).Run(ctx), 1)

	// a template that names no session (a fresh run in CI) is still run
	// only for an agent whose hook ran on this machine: a cloned
	// repository's config cannot make agentx run it for an agent that never
	// worked here
	w2 := newWorld(t)
	w2.askAndAnswer(t, 3, "Fresh.")
	wk := w2.waker(t)
	wk.Agents = map[string]workflow.AgentConfig{"engineer": {Resume: []string{"claude", "-p"}}}
	assert.Empty(t, wk.Run(ctx), "no hook of the engineer ran here")
	require.NoError(t, RecordSession(ctx, w2.hub.Store, "engineer", issue(3), Session{ID: "ci-run-7"}))
	got := wk.Run(ctx)
	require.Len(t, got, 1)
	assert.Equal(t, []string{"claude", "-p"}, got[0].Argv)
}

func TestHeldTurnIsNotWoken(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	require.NoError(t, RecordSession(ctx, w.hub.Store, "engineer", issue(7), Session{ID: "s"}))
	release, err := Holding(ctx, w.hub.Store, "engineer", issue(7), time.Now().Add(time.Minute))
	require.NoError(t, err)
	w.askAndAnswer(t, 7, "Yes.")
	assert.Empty(t, w.waker(t).Run(ctx), "the hook holding the turn delivers")
	release()
	assert.Len(t, w.waker(t).Run(ctx), 1, "released without delivering: woken")
}

// TestKilledWakerIsFinished: a process that claimed a wake and was killed
// before it started the command leaves it to the next process, which
// starts it once, with the text the claim holds.
func TestKilledWakerIsFinished(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	require.NoError(t, RecordSession(ctx, w.hub.Store, "engineer", issue(7), Session{ID: "s"}))
	id := w.askAndAnswer(t, 7, "Yes.")

	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	var st State
	require.NoError(t, w.hub.Store.UpdateState(ctx, StateFile("engineer"), &st, func() error {
		st.Claims = []Claim{{Issue: 7, Keys: []string{w.claimKey(t, id)}, IDs: []string{id}, Text: "the claimed text", PID: dead.Process.Pid, At: ledger.T(time.Now())}}
		return nil
	}))
	woke := w.waker(t).Run(ctx)
	require.Len(t, woke, 1)
	assert.Equal(t, "the claimed text", w.s.runs[0].stdin)
	assert.Empty(t, w.waker(t).Run(ctx))
	assert.Equal(t, 1, w.s.count())

	// a claim whose process is alive is left to it
	w2 := newWorld(t)
	id2 := w2.askAndAnswer(t, 7, "Yes.")
	require.NoError(t, w2.hub.Store.UpdateState(ctx, StateFile("engineer"), &st, func() error {
		st.Claims = []Claim{{Issue: 7, Keys: []string{w2.claimKey(t, id2)}, IDs: []string{id2}, Text: "t", PID: os.Getppid(), At: ledger.T(time.Now())}}
		return nil
	}))
	assert.Empty(t, w2.waker(t).Run(ctx))
}

// TestConcurrentWakersWakeOnce: many wakers (each with its own store, as
// separate processes have) running at once start the command once.
func TestConcurrentWakersWakeOnce(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	require.NoError(t, RecordSession(ctx, w.hub.Store, "engineer", nil, Session{ID: "s"}))
	for n := 1; n <= 5; n++ {
		w.askAndAnswer(t, n, "Answer "+strings.Repeat("!", n))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.waker(t).Run(ctx)
		}()
	}
	wg.Wait()
	assert.Equal(t, 5, w.s.count(), "one wake per issue, none twice")
}

func TestFill(t *testing.T) {
	assert.Equal(t, []string{"codex", "exec", "resume", "abc", "--issue=9", "CLR-9-001", "engineer"},
		Fill([]string{"codex", "exec", "resume", "{session}", "--issue={issue}", "{id}", "{agent}"}, "abc", 9, "CLR-9-001", "engineer", ""))
}

// TestDetach: the command runs detached, its stdin the text and its output
// appended to the log.
func TestDetach(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "got")
	log := filepath.Join(dir, "wake", "engineer.log")
	require.NoError(t, Detach([]string{"sh", "-c", "cat > " + out + "; echo done"}, dir, os.Environ(), "the answer\n", log))
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "\ndone\n")
	}, 10*time.Second, 20*time.Millisecond)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "the answer\n", string(b))
	entries, err := os.ReadDir(filepath.Dir(log))
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), ".stdin-"), "the stdin file is removed: %s", e.Name())
	}
}
