package remote

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

func TestWaiterNames(t *testing.T) {
	at := time.UnixMilli(1795831167008)
	name := waiterName(at, "ci<runner> 7/x..y")
	assert.Regexp(t, `^1795831167008-[0-9]+-ci_runner__7_x__y$`, name)
	got, ok := waiterTime(name)
	require.True(t, ok)
	assert.True(t, got.Equal(at))
	assert.Less(t, waiterName(at, "b"), waiterName(at.Add(time.Millisecond), "a"), "names sort by when they joined")
	for _, bad := range []string{"", "x", "123-4-h", "179583116700a-1-h", "1795831167008", "1795831167008-", "-1795831167008-1-h",
		"1795831167008-x-h", "1795831167008-1", "1795831167008-1-a..b", "1795831167008-1-a.lock", "1795831167008-1-a/b", "1795831167008-1-a b"} {
		_, ok := waiterTime(bad)
		assert.False(t, ok, bad)
	}
}

// queueAt is a Queue in memory for turn.wait: waiters by name, the head,
// and a hook run at each read (the test moves the world there).
type queueAt struct {
	mu     sync.Mutex
	head   string
	names  []string
	reads  int
	onRead func(q *queueAt)
}

func (q *queueAt) Join(context.Context, int, string, time.Time) (string, error) { return "", nil }
func (q *queueAt) PushLeaving(context.Context, int, Snapshot, []Commit, []string) (Snapshot, error) {
	return Snapshot{}, nil
}
func (q *queueAt) Leave(context.Context, int, []string) error { return nil }
func (q *queueAt) Waiters(context.Context, int) (string, []string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reads++
	if q.onRead != nil {
		q.onRead(q)
	}
	return q.head, slices.Sorted(slices.Values(q.names)), nil
}

// TestTurnWait: a waiter goes when no live waiter joined before it; a
// waiter ahead is taken for gone once older than waiterLife, or when the
// shared ledger has not moved for turnStall; past turnWait a waiter goes
// whatever the queue says. The ones taken for gone are removed by the
// landing push.
func TestTurnWait(t *testing.T) {
	defer func(l, s, w, p time.Duration) { waiterLife, turnStall, turnWait, turnPoll = l, s, w, p }(waiterLife, turnStall, turnWait, turnPoll)
	waiterLife, turnStall, turnWait, turnPoll = 8*time.Second, 300*time.Millisecond, 5*time.Second, time.Millisecond
	now := time.UnixMilli(1795831167008)
	clock := func() time.Time { return now }
	me := fmt.Sprintf("%013d-2-me", now.UnixMilli())
	ahead := fmt.Sprintf("%013d-1-other", now.Add(-time.Second).UnixMilli())
	old := fmt.Sprintf("%013d-1-old", now.Add(-9*time.Second).UnixMilli())
	behind := fmt.Sprintf("%013d-3-later", now.Add(time.Second).UnixMilli())
	ctx := context.Background()

	t.Run("first", func(t *testing.T) {
		q := &queueAt{head: "a", names: []string{me, behind, "not-a-waiter"}}
		tn := &turn{q: q, issue: 1, name: me, since: now}
		require.NoError(t, tn.wait(ctx, clock))
		assert.Equal(t, 1, q.reads)
		assert.Equal(t, []string{me}, tn.leave())
	})
	t.Run("behind one who lands", func(t *testing.T) {
		q := &queueAt{head: "a", names: []string{ahead, me}}
		q.onRead = func(q *queueAt) {
			if q.reads == 5 { // the one ahead lands: its waiter leaves with its push
				q.head, q.names = "b", []string{me}
			}
		}
		tn := &turn{q: q, issue: 1, name: me, since: now}
		require.NoError(t, tn.wait(ctx, clock))
		assert.Equal(t, 5, q.reads)
		assert.Equal(t, []string{me}, tn.leave(), "nothing else to remove")
	})
	t.Run("ahead and older than waiterLife", func(t *testing.T) {
		q := &queueAt{head: "a", names: []string{old, me}}
		tn := &turn{q: q, issue: 1, name: me, since: now}
		require.NoError(t, tn.wait(ctx, clock))
		assert.Equal(t, []string{old, me}, tn.leave(), "a waiter gone long ago is removed")
	})
	t.Run("stalled", func(t *testing.T) {
		q := &queueAt{head: "a", names: []string{ahead, me}}
		tn := &turn{q: q, issue: 1, name: me, since: now}
		start := time.Now()
		require.NoError(t, tn.wait(ctx, clock))
		assert.GreaterOrEqual(t, time.Since(start), turnStall, "waited for the ledger to move")
		assert.Equal(t, []string{ahead, me}, tn.leave(), "a waiter that did not land is taken for gone")
	})
	t.Run("waited long enough", func(t *testing.T) {
		q := &queueAt{head: "a", names: []string{ahead, me}}
		q.onRead = func(q *queueAt) { q.head = fmt.Sprint(q.reads) } // others land; the one ahead never does
		tn := &turn{q: q, issue: 1, name: me, since: now.Add(-turnWait - time.Millisecond)}
		require.NoError(t, tn.wait(ctx, clock))
		assert.Equal(t, []string{me}, tn.leave(), "the one ahead is alive: not removed")
	})
	t.Run("cancelled", func(t *testing.T) {
		q := &queueAt{head: "a", names: []string{ahead, me}}
		q.onRead = func(q *queueAt) { q.head = fmt.Sprint(q.reads) }
		cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		tn := &turn{q: q, issue: 1, name: me, since: now}
		assert.ErrorIs(t, tn.wait(cctx, clock), context.DeadlineExceeded)
	})
}

// memQueue is a memRemote with a queue, on which other hosts keep landing
// while a waiter they joined before is in it.
type memQueue struct {
	*memRemote
	waiters []string
	other   string // the other host's waiter, ahead
	left    [][]string
	polls   int
	joined  int
	n       int
}

func (m *memQueue) Join(_ context.Context, _ int, version string, now time.Time) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.joined++
	m.n++
	name := fmt.Sprintf("%013d-%d-mem", now.UnixMilli(), m.n)
	m.waiters = append(m.waiters, name)
	return name, nil
}

func (m *memQueue) Waiters(_ context.Context, issue int) (string, []string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.polls++
	if m.polls == 3 && m.other != "" {
		// the other host lands its question and leaves the queue
		m.land(issue, "the other host's")
		m.waiters = slices.DeleteFunc(m.waiters, func(n string) bool { return n == m.other })
		m.other = ""
	}
	return m.head(issue).Version, slices.Sorted(slices.Values(m.waiters)), nil
}

func (m *memQueue) land(issue int, topic string) {
	l := &ledger.Ledger{IssueNumber: issue}
	if h := m.head(issue); h.Version != "" {
		l, _ = ledger.Decode("mem", h.Data)
	}
	l.Clarifications = append(l.Clarifications, sharedRecord(l.NextID(), topic))
	data, _ := ledger.Encode(l)
	m.chains[issue] = append(m.chains[issue], Commit{Data: data, Message: topic})
}

func (m *memQueue) Push(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error) {
	m.mu.Lock()
	if m.other != "" {
		m.land(issue, "a host racing")
	}
	m.mu.Unlock()
	return m.memRemote.Push(ctx, issue, base, commits)
}

func (m *memQueue) PushLeaving(ctx context.Context, issue int, base Snapshot, commits []Commit, leave []string) (Snapshot, error) {
	s, err := m.Push(ctx, issue, base, commits)
	if err == nil {
		m.mu.Lock()
		m.left = append(m.left, leave)
		m.waiters = slices.DeleteFunc(m.waiters, func(n string) bool { return slices.Contains(leave, n) })
		m.mu.Unlock()
	}
	return s, err
}

func (m *memQueue) Leave(_ context.Context, _ int, leave []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.left = append(m.left, leave)
	return nil
}

// TestLoserWaitsItsTurn: a write that loses while another host waits in
// the queue joins it at once, waits while that host is ahead (others
// landing meanwhile do not count against its attempts), and its landing
// push removes its waiter; it never backs off at random.
func TestLoserWaitsItsTurn(t *testing.T) {
	was := pause
	pause = func(context.Context, int) error { t.Error("backed off at random"); return nil }
	defer func() { pause = was }()
	m := &memQueue{memRemote: &memRemote{chains: map[int][]Commit{}}}
	m.land(1, "first")
	m.other = fmt.Sprintf("%013d-0-other", time.Now().Add(-time.Second).UnixMilli())
	m.waiters = []string{m.other}
	h := sharedHost(t, m)
	id, err := sharedAsk(h, "mine")
	require.NoError(t, err)
	assert.Equal(t, 1, m.joined, "joined once")
	assert.GreaterOrEqual(t, m.polls, 3, "waited while the other host was ahead")
	final, err := ledger.Decode("mem", m.head(1).Data)
	require.NoError(t, err)
	assert.Equal(t, "mine", final.Find(id).Topic)
	assert.Equal(t, "CLR-1-00"+fmt.Sprint(len(final.Clarifications)), id, "the last to land")
	assert.Empty(t, m.waiters, "its waiter left with its push")
	require.Len(t, m.left, 1)
}

// TestBusyAfterAttempts: on a remote without a queue a write that loses
// attempts times in a row gives up, nothing written.
func TestBusyAfterAttempts(t *testing.T) {
	was := pause
	pause = func(context.Context, int) error { return nil }
	defer func() { pause = was }()
	r := &overtaken{memRemote: &memRemote{chains: map[int][]Commit{}}, refuse: 5}
	_, err := sharedAsk(sharedHost(t, r), "mine")
	var be *BusyError
	require.ErrorAs(t, err, &be, "5 losses, 5 attempts")
	assert.Equal(t, 5, r.moved)
}

// TestGitQueue: waiters are refs on the remote, listed oldest first with
// the issue's head by one ls-remote; the landing push removes the ones it
// names, and Leave the others.
func TestGitQueue(t *testing.T) {
	g := gitRepo(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	gitT(t, g.Dir, "", "init", "--quiet", "--bare", bare)
	gitT(t, g.Dir, "", "remote", "add", "origin", bare)
	ctx := context.Background()
	one, err := g.Push(ctx, 6, Snapshot{}, []Commit{{Data: []byte("{}\n"), Message: "one"}})
	require.NoError(t, err)
	now := time.UnixMilli(1795831167008)
	b, err := g.Join(ctx, 6, one.Version, now.Add(time.Millisecond))
	require.NoError(t, err)
	a, err := g.Join(ctx, 6, one.Version, now)
	require.NoError(t, err)
	c, err := g.Join(ctx, 6, one.Version, now.Add(2*time.Millisecond))
	require.NoError(t, err)
	_, err = g.Join(ctx, 7, one.Version, now)
	require.NoError(t, err, "another issue's queue")
	head, names, err := g.Waiters(ctx, 6)
	require.NoError(t, err)
	assert.Equal(t, one.Version, head)
	assert.Equal(t, []string{a, b, c}, names, "oldest first, this issue's only")

	two, err := g.PushLeaving(ctx, 6, one, []Commit{{Data: []byte("{ }\n"), Message: "two"}}, []string{a, "1795831160000-1-gone"})
	require.NoError(t, err, "removing a waiter already gone does not fail the push")
	head, names, err = g.Waiters(ctx, 6)
	require.NoError(t, err)
	assert.Equal(t, two.Version, head)
	assert.Equal(t, []string{b, c}, names)
	_, err = g.PushLeaving(ctx, 6, one, []Commit{{Data: []byte("{  }\n"), Message: "stale"}}, []string{b})
	require.ErrorIs(t, err, ErrMoved)
	_, names, err = g.Waiters(ctx, 6)
	require.NoError(t, err)
	assert.Equal(t, []string{b, c}, names, "a refused push removes nothing")

	// Waiters left by stopped processes: removed by PruneWaiters once past
	// waiterLife, on every issue; live ones stay.
	n, err := g.PruneWaiters(ctx, now.Add(waiterLife+1500*time.Microsecond))
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the older of this issue's two, and another issue's")
	_, names, err = g.Waiters(ctx, 6)
	require.NoError(t, err)
	assert.Equal(t, []string{c}, names)
	_, names, err = g.Waiters(ctx, 7)
	require.NoError(t, err)
	assert.Empty(t, names)

	// A remote that cannot push atomically: the ledger lands alone, and
	// the waiter is removed after it.
	gitT(t, bare, "", "config", "receive.advertiseAtomic", "false")
	three, err := g.PushLeaving(ctx, 6, two, []Commit{{Data: []byte("{   }\n"), Message: "three"}}, []string{c})
	require.NoError(t, err)
	head, names, err = g.Waiters(ctx, 6)
	require.NoError(t, err)
	assert.Equal(t, three.Version, head)
	assert.Empty(t, names)
	gitT(t, bare, "", "config", "receive.advertiseAtomic", "true")

	require.NoError(t, g.Leave(ctx, 6, []string{b, c, "../../heads/main", "x"}))
	_, names, err = g.Waiters(ctx, 6)
	require.NoError(t, err)
	assert.Empty(t, names)
	assert.Empty(t, gitT(t, bare, "", "for-each-ref", "--format=%(refname)", "refs/agentx/clarifications-queue/issue-6"))
}

// TestNoQueueOnBranches: where the ledgers are branches ([remote]
// branch), no waiter is made (it would be a branch): a write that keeps
// losing backs off at random.
func TestNoQueueOnBranches(t *testing.T) {
	g := gitRepo(t)
	g.Refs = "refs/heads/agentx/clarifications"
	_, err := g.Join(context.Background(), 1, strings.Repeat("a", 40), time.Now())
	assert.ErrorIs(t, err, errNoQueue)
	_, _, err = g.Waiters(context.Background(), 1)
	assert.ErrorIs(t, err, errNoQueue)
}

// FuzzWaiters: whatever the remote answers, the queue's reader neither
// fails nor yields a name that leaves the issue's queue, and a removal
// names only refs under it.
func FuzzWaiters(f *testing.F) {
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\trefs/agentx/clarifications/issue-1\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\trefs/agentx/clarifications-queue/issue-1/1795831167008-1-h\n"))
	f.Add([]byte("x\trefs/agentx/clarifications-queue/issue-1/../../../heads/main\n"))
	f.Add([]byte("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\trefs/agentx/clarifications-queue/issue-1/1795831167008-1-a b:c\n"))
	f.Add([]byte("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\trefs/agentx/clarifications-queue/issue-1/1795831167008-1-a..b.lock\n"))
	g := &Git{Refs: "refs/agentx/clarifications"}
	f.Fuzz(func(t *testing.T, out []byte) {
		head, names := parseWaiters(out, g.Ref(1), g.queueRef(1)+"/")
		if head != "" && !isHexID(head) {
			t.Fatalf("head %q", head)
		}
		if !slices.IsSorted(names) {
			t.Fatalf("not sorted: %q", names)
		}
		for _, n := range names {
			if strings.Contains(n, "/") {
				t.Fatalf("name %q leaves the queue", n)
			}
			waiterTime(n)
		}
		for _, d := range g.deletions(1, names) {
			rest, ok := strings.CutPrefix(d, ":"+g.queueRef(1)+"/")
			if !ok || strings.ContainsAny(rest, "/: \t\n*?[\\^~") || strings.Contains(rest, "..") {
				t.Fatalf("removal %q", d)
			}
		}
	})
}

// queueAhead is an overtaken remote with a queue in which another host's
// waiter stays ahead for good (alive: it joined just now).
type queueAhead struct {
	*overtaken
	ahead string
}

func (q *queueAhead) Join(_ context.Context, _ int, _ string, now time.Time) (string, error) {
	return waiterName(now, "me"), nil
}
func (q *queueAhead) Waiters(_ context.Context, issue int) (string, []string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ahead = waiterName(time.Now().Add(-time.Millisecond), "other")
	return q.head(issue).Version, []string{q.ahead}, nil
}
func (q *queueAhead) PushLeaving(ctx context.Context, issue int, base Snapshot, commits []Commit, _ []string) (Snapshot, error) {
	return q.Push(ctx, issue, base, commits)
}
func (q *queueAhead) Leave(context.Context, int, []string) error { return nil }

// TestPastTurnWaitBacksOff: a write that has waited its turn for turnWait
// competes again, backing off at random between tries, not trying back
// to back; and a write that gives up keeps what it found (moved), so
// that the next write fetches first.
func TestPastTurnWaitBacksOff(t *testing.T) {
	defer func(w, s time.Duration) { turnWait, turnStall = w, s }(turnWait, turnStall)
	turnWait, turnStall = 30*time.Millisecond, time.Hour
	var pauses []int
	was := pause
	pause = func(_ context.Context, losses int) error { pauses = append(pauses, losses); return nil }
	defer func() { pause = was }()
	r := &queueAhead{overtaken: &overtaken{memRemote: &memRemote{chains: map[int][]Commit{}}, refuse: 1000}}
	r.memRemote.chains[1] = nil
	h := sharedHost(t, r.memRemote) // a first question, so that the issue has a version to wait at
	_, err := sharedAsk(h, "first")
	require.NoError(t, err)
	h = sharedHost(t, r)
	_, err = sharedAsk(h, "mine")
	var be *BusyError
	require.ErrorAs(t, err, &be)
	assert.NotEmpty(t, pauses, "past turnWait it backs off")
	st, err := ReadSync(h.Store, 1)
	require.NoError(t, err)
	assert.False(t, st.Moved.IsZero(), "moved is kept after giving up")
}
