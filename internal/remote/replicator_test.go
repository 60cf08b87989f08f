package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// memRemote is a Transport in memory: one chain of versions per issue, a
// switch to take it offline, and a count of pushes refused.
type memRemote struct {
	mu      sync.Mutex
	chains  map[int][]Commit
	offline bool
	moved   int // pushes refused with ErrMoved
	fetches int
	pushes  int
}

func (m *memRemote) head(issue int) Snapshot {
	c := m.chains[issue]
	if len(c) == 0 {
		return Snapshot{}
	}
	return Snapshot{Version: strconv.Itoa(len(c)), Data: c[len(c)-1].Data}
}

func (m *memRemote) Fetch(_ context.Context, issue int) (Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.offline {
		return Snapshot{}, fmt.Errorf("mem: %w", ErrOffline)
	}
	m.fetches++
	return m.head(issue), nil
}

func (m *memRemote) Push(_ context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.offline {
		return Snapshot{}, fmt.Errorf("mem: %w", ErrOffline)
	}
	m.pushes++
	if m.head(issue).Version != base.Version {
		m.moved++
		return Snapshot{}, fmt.Errorf("mem: %w", ErrMoved)
	}
	m.chains[issue] = append(m.chains[issue], commits...)
	return m.head(issue), nil
}

func (m *memRemote) Attempts() int         { return 5 }
func (m *memRemote) Name(issue int) string { return "mem issue-" + strconv.Itoa(issue) }

// host is one machine's store on the shared remote, and its Replicator.
type host struct {
	*ledger.Store
	*Replicator
}

func sharedHost(t *testing.T, r Transport) host {
	s := ledger.NewStore(t.TempDir(), lock.Options{}, nil)
	return host{s, Attach(s, r)}
}

// clockedHost is sharedHost whose clock reads *now.
func clockedHost(t *testing.T, r Transport, now *time.Time) host {
	s := ledger.NewStore(t.TempDir(), lock.Options{}, func() time.Time { return *now })
	return host{s, Attach(s, r)}
}

func sharedAsk(s host, topic string) (string, error) {
	var id string
	_, err := s.Update(context.Background(), 1, func(l *ledger.Ledger) error {
		id = l.NextID()
		l.Clarifications = append(l.Clarifications, sharedRecord(id, topic))
		return nil
	})
	return id, err
}

func sharedRecord(id, topic string) *ledger.Clarification {
	now := ledger.T(time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC))
	return &ledger.Clarification{ID: id, From: "engineer", To: "architect", Topic: topic, Blocking: true, Status: ledger.Pending,
		Round: 1, MaxRounds: 5, Created: now, StaleAfter: now,
		Thread: []ledger.ThreadEntry{{Round: 1, From: "engineer", Type: ledger.Question, Body: topic, Timestamp: now}}}
}

func sharedAnswer(s host, id, body string) error {
	_, err := s.Update(context.Background(), 1, func(l *ledger.Ledger) error {
		c := l.Find(id)
		if c == nil {
			return ledger.ErrNotFound
		}
		if err := c.Move(ledger.Answered); err != nil {
			return err
		}
		c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 1, From: "architect", Type: ledger.Answer, Body: body, Timestamp: c.Created})
		return nil
	})
	return err
}

func TestSharedSupersededAndOutbox(t *testing.T) {
	r := &memRemote{chains: map[int][]Commit{}}
	a, b := sharedHost(t, r), sharedHost(t, r)
	id, err := sharedAsk(a, "TTL?")
	require.NoError(t, err)
	assert.Equal(t, "CLR-1-001", id)
	_, err = b.Sync(context.Background(), 1, nil)
	require.NoError(t, err)

	// a answers first; b, which saw the question pending, is superseded
	require.NoError(t, sharedAnswer(a, id, "five minutes"))
	err = sharedAnswer(b, id, "an hour")
	var se *SupersededError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{id}, se.Changed)
	assert.Equal(t, "five minutes", se.Current(id).RoundAnswer())
	var te *ledger.TransitionError
	assert.ErrorAs(t, err, &te, "the reason it no longer applies")
	local, err := b.Read(1)
	require.NoError(t, err)
	assert.Equal(t, "five minutes", local.Clarifications[0].RoundAnswer(), "b's copy is the shared one")

	// offline: b's ask is kept in its outbox with an id a takes meanwhile
	r.offline = true
	id2, err := sharedAsk(b, "from b, offline")
	require.NoError(t, err)
	assert.Equal(t, "CLR-1-002", id2)
	assert.Len(t, b.Unsynced(), 1)
	r.offline = false
	_, err = sharedAsk(a, "from a")
	require.NoError(t, err)
	// b's next write delivers the outbox first, renumbered, then its own change
	id3, err := sharedAsk(b, "from b, online")
	require.NoError(t, err)
	assert.Equal(t, "CLR-1-004", id3)
	onDisk, err := os.ReadFile(b.Path(1))
	require.NoError(t, err)
	assert.Equal(t, string(r.head(1).Data), string(onDisk), "the local copy is the published ledger, byte for byte")
	st, err := ReadSync(b.Store, 1)
	require.NoError(t, err)
	assert.Empty(t, st.Pending)
	require.Len(t, st.Outcomes, 1)
	assert.Equal(t, Outcome{Outcome: OutcomeRenumbered, ID: "CLR-1-002", As: "CLR-1-003", Message: "CLR-1-002 asked by engineer of architect", At: st.Outcomes[0].At, By: "engineer"}, st.Outcomes[0])
	assert.Equal(t, map[string]string{"CLR-1-002": "CLR-1-003"}, st.Renumbered, "the renumbering is kept apart from the outcomes")
	// the hub refuses the old id through the store's Replicator
	checker, ok := b.Store.Replicator().(ledger.IDChecker)
	require.True(t, ok, "the Replicator checks the ids callers name")
	var re *RenumberedError
	require.ErrorAs(t, checker.CheckID("CLR-1-002"), &re)
	assert.Equal(t, "CLR-1-003", re.As)
	assert.NoError(t, checker.CheckID("CLR-1-003"))
	outbox, err := OutboxIssues(b.Store)
	require.NoError(t, err)
	assert.Empty(t, outbox)

	final, err := ledger.Decode("mem", r.head(1).Data)
	require.NoError(t, err)
	var topics []string
	for i, c := range final.Clarifications {
		assert.Equal(t, ledger.FormatID(1, i+1), c.ID)
		topics = append(topics, c.Topic)
	}
	assert.Equal(t, []string{"TTL?", "from a", "from b, offline", "from b, online"}, topics)
	var msgs []string
	for _, c := range r.chains[1] {
		msgs = append(msgs, c.Message)
	}
	assert.Equal(t, []string{"CLR-1-001 asked by engineer of architect", "CLR-1-001 answered by architect",
		"CLR-1-002 asked by engineer of architect", "CLR-1-003 asked by engineer of architect", "CLR-1-004 asked by engineer of architect"}, msgs)

	// a change to the id b's outbox gave up would change a's question: refused
	r.offline = true
	_, err = sharedAsk(b, "offline again") // CLR-1-005 here
	require.NoError(t, err)
	r.offline = false
	_, err = sharedAsk(a, "a takes 005")
	require.NoError(t, err)
	err = sharedAnswer(b, "CLR-1-005", "meant for b's own question")
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "that question is now CLR-1-006")
	final, err = ledger.Decode("mem", r.head(1).Data)
	require.NoError(t, err)
	assert.Equal(t, ledger.Pending, final.Clarifications[4].Status, "a's question untouched")
	assert.Equal(t, "offline again", final.Clarifications[5].Topic)
}

// A queued change already on the remote (delivered by a process that died
// before it recorded so) is not applied twice.
func TestSharedReplayIsIdempotent(t *testing.T) {
	r := &memRemote{chains: map[int][]Commit{}}
	a := sharedHost(t, r)
	r.offline = true
	_, err := sharedAsk(a, "q")
	require.NoError(t, err)
	st, err := ReadSync(a.Store, 1)
	require.NoError(t, err)
	require.Len(t, st.Pending, 1)
	r.offline = false
	_, err = a.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	// the outbox comes back as it was (the crash case), the remote has it
	f, err := a.Lock(context.Background(), 1)
	require.NoError(t, err)
	require.NoError(t, a.writeSync(f, st))
	require.NoError(t, f.Release())
	_, err = a.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	final, err := ledger.Decode("mem", r.head(1).Data)
	require.NoError(t, err)
	assert.Len(t, final.Clarifications, 1)
	assert.Len(t, r.chains[1], 1, "no commit for a change already there")
}

// Two hosts racing: the loser's push is refused, it fetches and runs the
// change again; ids stay dense.
func TestSharedRetriesOnMoved(t *testing.T) {
	r := &memRemote{chains: map[int][]Commit{}}
	stores := []host{sharedHost(t, r), sharedHost(t, r), sharedHost(t, r)}
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if _, err := sharedAsk(s, fmt.Sprint(i)); err != nil && !errors.As(err, new(*BusyError)) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	final, err := ledger.Decode("mem", r.head(1).Data)
	require.NoError(t, err)
	for i, c := range final.Clarifications {
		assert.Equal(t, ledger.FormatID(1, i+1), c.ID)
	}
	t.Logf("%d asks on the remote, %d pushes refused and retried", len(final.Clarifications), r.moved)
}

// TestSharedOpenedSealedRecord: a change that opens a closed record
// without changing it (GitHub and Slack modes read every record to take a
// comment once) queues and names only what it did change: delivered, the
// closed question is not asked again under a new id.
func TestSharedOpenedSealedRecord(t *testing.T) {
	r := &memRemote{chains: map[int][]Commit{}}
	a, b := sharedHost(t, r), sharedHost(t, r)
	id, err := sharedAsk(a, "TTL?")
	require.NoError(t, err)
	_, err = a.Update(context.Background(), 1, func(l *ledger.Ledger) error {
		l.Find(id).Status = ledger.Abandoned
		return nil
	})
	require.NoError(t, err)
	_, err = sharedAsk(b, "first on b") // b's local copy: CLR-1-001 abandoned (sealed when read)
	require.NoError(t, err)

	r.offline = true
	_, err = b.Update(context.Background(), 1, func(l *ledger.Ledger) error {
		_ = l.Whole() // opens CLR-1-001, changes nothing in it
		l.Clarifications = append(l.Clarifications, sharedRecord(l.NextID(), "offline on b"))
		return nil
	})
	require.NoError(t, err)
	st, err := ReadSync(b.Store, 1)
	require.NoError(t, err)
	require.Len(t, st.Pending, 1)
	assert.Equal(t, "CLR-1-003 asked by engineer of architect", st.Pending[0].Message)
	require.Len(t, st.Pending[0].Records, 1, "only the new record is queued")

	r.offline = false
	_, err = sharedAsk(a, "from a meanwhile")
	require.NoError(t, err)
	_, err = b.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	final, err := ledger.Decode("mem", r.head(1).Data)
	require.NoError(t, err)
	var topics []string
	for _, c := range final.Clarifications {
		topics = append(topics, c.Topic)
	}
	assert.Equal(t, []string{"TTL?", "first on b", "from a meanwhile", "offline on b"}, topics, "the abandoned question once")
}

// TestSyncReached: Sync says whether the remote was reached and now holds
// the outbox: not when it is offline (or --offline), whatever the outbox
// holds.
func TestSyncReached(t *testing.T) {
	r := &memRemote{chains: map[int][]Commit{}}
	a := sharedHost(t, r)
	_, err := sharedAsk(a, "TTL?")
	require.NoError(t, err)
	ctx := context.Background()

	reached, err := a.Sync(ctx, 1, nil)
	require.NoError(t, err)
	assert.True(t, reached)

	r.offline = true
	reached, err = a.Sync(ctx, 1, nil)
	require.NoError(t, err)
	assert.False(t, reached, "offline, an empty outbox")
	_, err = sharedAsk(a, "queued")
	require.NoError(t, err)
	reached, err = a.Sync(ctx, 1, nil)
	require.NoError(t, err)
	assert.False(t, reached, "offline, the outbox holding a change")

	r.offline = false
	a.SetOffline(true)
	reached, err = a.Sync(ctx, 1, nil)
	require.NoError(t, err)
	assert.False(t, reached, "--offline")
	a.SetOffline(false)
	reached, err = a.Sync(ctx, 1, nil)
	require.NoError(t, err)
	assert.True(t, reached, "delivered")
	assert.Len(t, r.chains[1], 2)
}

// linkAfterPush is a remote that, once a push has landed, puts a symbolic
// link where the local ledger is: agentx then cannot write its local copy.
type linkAfterPush struct {
	*memRemote
	path string
}

func (r linkAfterPush) Push(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error) {
	snap, err := r.memRemote.Push(ctx, issue, base, commits)
	if err == nil {
		_ = os.Remove(r.path)
		_ = os.Symlink(r.path+".elsewhere", r.path)
	}
	return snap, err
}

// TestAcknowledgedChangeStands: once a change is published (or durable in
// the outbox), a failure to write the local copy does not fail the
// command, which a caller would retry, asking twice; it is noted, and the
// next command brings the local copy up to date.
func TestAcknowledgedChangeStands(t *testing.T) {
	mem := &memRemote{chains: map[int][]Commit{}}
	s := sharedHost(t, mem)
	_, err := sharedAsk(s, "first")
	require.NoError(t, err)

	path := s.Path(1)
	s.transport = linkAfterPush{mem, path}
	id, err := sharedAsk(s, "published, not kept here")
	require.NoError(t, err, "the change is on the remote: the command succeeds")
	require.Len(t, s.Notes(), 1)
	assert.Contains(t, s.Notes()[0], "local copy was not updated")
	shared, err := ledger.Decode("remote", mem.head(1).Data)
	require.NoError(t, err)
	require.NotNil(t, shared.Find(id), "published")

	require.NoError(t, os.Remove(path))
	s.transport = mem
	_, err = sharedAsk(s, "third")
	require.NoError(t, err)
	l, err := s.Read(1)
	require.NoError(t, err)
	require.Len(t, l.Clarifications, 3, "the local copy caught up, nothing twice")

	// Offline: the outbox is durable first; the local copy cannot be written.
	mem.offline = true
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".copy", data, 0o644))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(path+".copy", path))
	queued, err := sharedAsk(s, "queued")
	require.NoError(t, err, "the change is in the outbox: the command succeeds")
	assert.Len(t, s.Unsynced(), 1)
	require.Len(t, s.Notes(), 2)
	assert.Contains(t, s.Notes()[1], "in the outbox")
	issues, err := OutboxIssues(s.Store)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, issues)

	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Rename(path+".copy", path))
	mem.offline = false
	reached, err := s.Sync(context.Background(), 1, nil)
	require.NoError(t, err)
	assert.True(t, reached)
	shared, err = ledger.Decode("remote", mem.head(1).Data)
	require.NoError(t, err)
	assert.NotNil(t, shared.Find(queued), "delivered")
	assert.Len(t, shared.Clarifications, 4)
}

// slowFetch is a remote whose fetches wait until released.
type slowFetch struct {
	*memRemote
	entered chan struct{}
	release chan struct{}
}

func (r slowFetch) Fetch(ctx context.Context, issue int) (Snapshot, error) {
	r.entered <- struct{}{}
	<-r.release
	return r.memRemote.Fetch(ctx, issue)
}

// TestFetchBeforeTheLock: a remote slow to answer holds up the command
// waiting on it, not the issue's lock: another writer on this host takes
// the lock meanwhile; the change then lands as usual.
func TestFetchBeforeTheLock(t *testing.T) {
	mem := &memRemote{chains: map[int][]Commit{}}
	r := slowFetch{memRemote: mem, entered: make(chan struct{}, 4), release: make(chan struct{})}
	s := sharedHost(t, r)
	done := make(chan error, 1)
	go func() {
		_, err := sharedAsk(s, "asked while the remote is slow")
		done <- err
	}()
	<-r.entered
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	lk, err := lock.Acquire(ctx, s.Path(1), lock.Options{Wait: time.Second})
	require.NoError(t, err, "the lock is free while the fetch waits")
	require.NoError(t, lk.Release())
	close(r.release)
	require.NoError(t, <-done)
	shared, err := ledger.Decode("remote", mem.head(1).Data)
	require.NoError(t, err)
	assert.Len(t, shared.Clarifications, 1)
}

// overtaken is a remote on which another host's question lands just
// before each of this host's first pushes: they are refused.
type overtaken struct {
	*memRemote
	refuse int
}

func (o *overtaken) Push(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error) {
	o.mu.Lock()
	if o.refuse > 0 {
		o.refuse--
		l := &ledger.Ledger{IssueNumber: issue}
		if h := o.head(issue); h.Version != "" {
			var err error
			if l, err = ledger.Decode("mem", h.Data); err != nil {
				o.mu.Unlock()
				return Snapshot{}, err
			}
		}
		l.Clarifications = append(l.Clarifications, sharedRecord(l.NextID(), "elsewhere"))
		data, err := ledger.Encode(l)
		if err != nil {
			o.mu.Unlock()
			return Snapshot{}, err
		}
		o.chains[issue] = append(o.chains[issue], Commit{Data: data, Message: "another host"})
	}
	o.mu.Unlock()
	return o.memRemote.Push(ctx, issue, base, commits)
}

// TestRetryWaitsOnlyAfterRepeatedLosses: a push refused because another
// host's change landed is fetched and tried again at once; only from the
// second refusal in a row does the write wait (a little, growing) first.
func TestRetryWaitsOnlyAfterRepeatedLosses(t *testing.T) {
	for _, tc := range []struct {
		refused int
		pauses  []int // the losses in a row each wait followed
	}{
		{0, nil},
		{1, nil},
		{2, []int{1}},
		{4, []int{1, 2, 3}},
	} {
		t.Run(strconv.Itoa(tc.refused), func(t *testing.T) {
			var pauses []int
			was := pause
			pause = func(_ context.Context, losses int) error { pauses = append(pauses, losses); return nil }
			defer func() { pause = was }()
			r := &overtaken{memRemote: &memRemote{chains: map[int][]Commit{}}, refuse: tc.refused}
			id, err := sharedAsk(sharedHost(t, r), "mine")
			require.NoError(t, err)
			assert.Equal(t, ledger.FormatID(1, tc.refused+1), id, "asked after the others' questions")
			assert.Equal(t, tc.refused, r.moved)
			assert.Equal(t, tc.pauses, pauses)
		})
	}
}

// counts are a memRemote's fetches, pushes and refused pushes since the
// last call.
func (m *memRemote) counts() (fetches, pushes, moved int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fetches, pushes, moved = m.fetches, m.pushes, m.moved
	m.fetches, m.pushes, m.moved = 0, 0, 0
	return
}

// TestFastWrite: a write on an issue whose local copy is the shared
// ledger this host last settled is made on the copy and pushed, with no
// fetch; when it is not (another host has written since, the copy was
// changed, the change does not apply to the copy or changes nothing
// there), the shared ledger is fetched and the change made on it, and
// the result is the same as if the fast try had not been.
func TestFastWrite(t *testing.T) {
	r := &memRemote{chains: map[int][]Commit{}}
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	a, b := clockedHost(t, r, &now), clockedHost(t, r, &now)
	counts := func(what string, fetches, pushes, moved int) {
		t.Helper()
		f, p, m := r.counts()
		assert.Equal(t, [3]int{fetches, pushes, moved}, [3]int{f, p, m}, "%s: fetches, pushes, refused", what)
	}

	_, err := sharedAsk(a, "first")
	require.NoError(t, err)
	counts("a first write", 1, 1, 0)
	id, err := sharedAsk(a, "second")
	require.NoError(t, err)
	assert.Equal(t, "CLR-1-002", id)
	counts("a write on the settled copy", 0, 1, 0)

	_, err = sharedAsk(b, "b's")
	require.NoError(t, err)
	counts("b's first write", 1, 1, 0)
	id, err = sharedAsk(a, "third")
	require.NoError(t, err)
	assert.Equal(t, "CLR-1-004", id, "made again on the shared ledger, after b's question")
	counts("a write on a copy b has moved past", 1, 2, 1)
	_, err = sharedAsk(a, "fourth")
	require.NoError(t, err)
	counts("another host wrote lately: fetch first", 1, 1, 0)

	now = now.Add(fastAfter)
	_, err = sharedAsk(a, "fifth")
	require.NoError(t, err)
	counts("no other host lately", 0, 1, 0)

	// The copy changed by something else than this host's writes.
	data, err := os.ReadFile(a.Path(1))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(a.Path(1), append(data, '\n'), 0o644))
	_, err = sharedAsk(a, "sixth")
	require.NoError(t, err)
	counts("a copy changed elsewhere", 1, 1, 0)

	// A change that does not apply to the copy: b answers the question a
	// resolves, which a's copy has still pending.
	require.NoError(t, sharedAnswer(b, "CLR-1-006", "yes"))
	r.counts()
	now = now.Add(fastAfter)
	_, err = a.Update(context.Background(), 1, func(l *ledger.Ledger) error {
		c := l.Find("CLR-1-006")
		if c.Status != ledger.Answered {
			return errors.New("not answered")
		}
		return c.Move(ledger.Resolved)
	})
	require.NoError(t, err, "judged on the shared ledger, where it is answered")
	counts("a change the copy refuses", 1, 1, 0)

	// A change that changes nothing on the copy is looked for on the
	// shared ledger.
	_, err = sharedAsk(b, "b's second")
	require.NoError(t, err)
	r.counts()
	now = now.Add(fastAfter)
	seen := 0
	_, err = a.Update(context.Background(), 1, func(l *ledger.Ledger) error {
		seen = len(l.Clarifications)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 8, seen, "the last run saw b's second question")
	counts("a change with nothing to change on the copy", 1, 0, 0)

	final, err := ledger.Decode("mem", r.head(1).Data)
	require.NoError(t, err)
	for i, c := range final.Clarifications {
		assert.Equal(t, ledger.FormatID(1, i+1), c.ID)
	}
	assert.Equal(t, ledger.Resolved, final.Find("CLR-1-006").Status)
}

// TestSharedLedgersTakeNoTurns: a shared ledger's lock hands over
// straight, with no window for the AgentX tools (whose change to a local
// copy the next write would replace), however the workspace sets [lock].
func TestSharedLedgersTakeNoTurns(t *testing.T) {
	s := ledger.NewStore(t.TempDir(), lock.Options{Fair: lock.Fairness{Bound: 400 * time.Millisecond, Window: 400 * time.Millisecond}}, nil)
	h := host{s, Attach(s, &memRemote{chains: map[int][]Commit{}})}
	for range 2 {
		_, err := sharedAsk(h, "q")
		require.NoError(t, err)
	}
	q, err := os.ReadFile(s.Path(1) + lock.Suffix + lock.QueueSuffix)
	require.NoError(t, err)
	assert.NotContains(t, string(q), "agentx-run", "a shared ledger's lock takes no turns")
}

// warmRemote is memRemote with settings to read (warmer), counted.
type warmRemote struct {
	*memRemote
	warmed chan struct{}
}

func (w *warmRemote) warm(context.Context) { w.warmed <- struct{}{} }

// TestWarm: a command about to write has the settings read in the
// background, on the remote, not offline, not without a remote.
func TestWarm(t *testing.T) {
	w := &warmRemote{memRemote: &memRemote{chains: map[int][]Commit{}}, warmed: make(chan struct{}, 4)}
	h := sharedHost(t, w)
	h.Warm(context.Background())
	select {
	case <-w.warmed:
	case <-time.After(10 * time.Second):
		t.Fatal("not warmed")
	}
	h.Warm(context.Background()) // once: the second call starts nothing
	h.SetOffline(true)
	h.Warm(context.Background())
	var none *Replicator
	none.Warm(context.Background()) // no remote: nothing, no panic
	time.Sleep(50 * time.Millisecond)
	assert.Empty(t, w.warmed, "read once, and offline: nothing read")
	off := sharedHost(t, w)
	off.SetOffline(true)
	off.Warm(context.Background())
	time.Sleep(50 * time.Millisecond)
	assert.Empty(t, w.warmed, "offline: nothing read")
}

// duringPush is a remote that calls during, with the change it is about
// to take, before each push.
type duringPush struct {
	*memRemote
	during func(issue int, commits []Commit)
}

func (r duringPush) Push(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error) {
	r.during(issue, commits)
	return r.memRemote.Push(ctx, issue, base, commits)
}

// TestCopyWrittenDuringPush: on the settled copy, the local copy's next
// version is written, beside it, while the push runs; it takes the copy's
// place once the push has landed, and is dropped when it has not
// (refused, or the remote out of reach): a reader never sees a version
// the remote did not take.
func TestCopyWrittenDuringPush(t *testing.T) {
	mem := &memRemote{chains: map[int][]Commit{}}
	now := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	a, b := clockedHost(t, mem, &now), clockedHost(t, mem, &now)
	_, err := sharedAsk(a, "first")
	require.NoError(t, err)
	path := a.Path(1)
	tmp := atomicfile.LockedTemp(path)

	type seen struct{ copy, beside []byte }
	var pushes []seen
	a.transport = duringPush{mem, func(_ int, commits []Commit) {
		// the push goes out once the new version is written beside the copy
		var s seen
		s.copy, _ = os.ReadFile(path)
		for range 200 {
			if data, err := os.ReadFile(tmp); err == nil && bytes.Equal(data, commits[len(commits)-1].Data) {
				s.beside = data
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		pushes = append(pushes, s)
	}}
	settled := func() []byte {
		t.Helper()
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		return data
	}

	before := settled()
	_, err = sharedAsk(a, "second")
	require.NoError(t, err)
	require.Len(t, pushes, 1)
	assert.Equal(t, before, pushes[0].copy, "during the push, readers see the settled copy")
	assert.NotNil(t, pushes[0].beside, "the next version was written beside it while the push ran")
	assert.Equal(t, mem.head(1).Data, settled(), "the push landed: the copy is the shared ledger")
	assert.NoFileExists(t, tmp)

	// Refused: b wrote since. The early version is dropped, the change is
	// made again on the shared ledger, and that one is the copy.
	_, err = sharedAsk(b, "b's")
	require.NoError(t, err)
	pushes = nil
	id, err := sharedAsk(a, "third")
	require.NoError(t, err)
	assert.Equal(t, "CLR-1-004", id)
	require.Len(t, pushes, 2, "refused, then made again on the shared ledger")
	assert.NotNil(t, pushes[0].beside)
	assert.Equal(t, mem.head(1).Data, settled())
	assert.NoFileExists(t, tmp)

	// Out of reach: the early version is dropped; the change waits in
	// the outbox, and the copy holds it from there.
	now = now.Add(fastAfter)
	mem.offline = true
	pushes = nil
	before = settled()
	_, err = sharedAsk(a, "offline")
	require.NoError(t, err)
	require.Len(t, pushes, 1)
	assert.NotNil(t, pushes[0].beside)
	assert.NoFileExists(t, tmp)
	st, err := ReadSync(a.Store, 1)
	require.NoError(t, err)
	assert.Len(t, st.Pending, 1)
	assert.NotEqual(t, before, settled())
	assert.NotEqual(t, mem.head(1).Data, settled())
}
