package wake

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
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

// clocked is a workspace whose stores share a clock the test moves.
type clocked struct {
	dir      string
	hub      *router.Hub
	base     time.Time
	offset   atomic.Int64
	s        started
	failWake bool
	mu       sync.Mutex
	notified []string // "ID#entry"
}

func newClocked(t *testing.T) *clocked {
	t.Helper()
	dir, rules := testenv.Workspace(t, "")
	c := &clocked{dir: dir, base: time.Now()}
	c.hub = router.New(c.store(), rules, dir)
	return c
}

func (c *clocked) now() time.Time { return c.base.Add(time.Duration(c.offset.Load())) }

// at moves the clock to d after the start.
func (c *clocked) at(d time.Duration) { c.offset.Store(int64(d)) }

// store is one process's store (its own: the locks are files).
func (c *clocked) store() *ledger.Store {
	return ledger.NewStore(filepath.Join(c.dir, ".agentx", "state"), lock.Options{}, c.now)
}

func (c *clocked) notify(_ context.Context, _ int, cl *ledger.Clarification, r inbox.Receipt) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notified = append(c.notified, cl.ID+"#"+string(rune('0'+r.Entry)))
	return nil
}

func (c *clocked) notifies() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.notified)
}

// scan is one process's overdue scan, past the throttle.
func (c *clocked) scan(t *testing.T, agents map[string]workflow.AgentConfig, notify bool) []Overdue {
	t.Helper()
	wk := c.waker(t, agents)
	require.NoError(t, removeIfExists(filepath.Join(c.dir, ".agentx", "state", filepath.FromSlash(ScannedFile))))
	var n NotifyFunc
	if notify {
		n = c.notify
	}
	return wk.Undelivered(context.Background(), n)
}

func (c *clocked) waker(t *testing.T, agents map[string]workflow.AgentConfig) *Waker {
	start := c.s.start
	if c.failWake {
		start = func([]string, string, []string, string, string) error { return errors.New("no such command") }
	}
	return &Waker{Store: c.store(), Agents: agents, Root: c.dir, Start: start, Warn: func(err error) {
		if !c.failWake {
			t.Errorf("warning: %v", err)
		}
	}}
}

func actions(done []Overdue) []string {
	var out []string
	for _, o := range done {
		out = append(out, o.Action)
	}
	return out
}

func TestUndelivered(t *testing.T) {
	type step struct {
		at   time.Duration
		want []string // the actions of the scan then
	}
	tests := []struct {
		name     string
		agents   map[string]workflow.AgentConfig
		session  bool
		failWake bool
		notify   bool
		after    func(t *testing.T, c *clocked, id string) // after the answer
		steps    []step
	}{
		{name: "not overdue yet", agents: resume, session: true, notify: true,
			steps: []step{{5 * time.Minute, nil}, {9 * time.Minute, nil}}},
		{name: "resume and session: woken once more, delivered by it", agents: resume, session: true, notify: true,
			steps: []step{{11 * time.Minute, []string{ActionWoke}}, {12 * time.Minute, nil}, {25 * time.Minute, nil}}},
		{name: "the wake could not start: notified after another period", agents: resume, session: true, failWake: true, notify: true,
			steps: []step{{11 * time.Minute, []string{ActionWoke}}, {15 * time.Minute, nil}, {22 * time.Minute, []string{ActionNotified}}, {40 * time.Minute, nil}}},
		{name: "no resume: notified once", notify: true,
			steps: []step{{11 * time.Minute, []string{ActionNotified}}, {12 * time.Minute, nil}, {30 * time.Minute, nil}}},
		{name: "resume without a session here: notified once", agents: resume, notify: true,
			steps: []step{{11 * time.Minute, []string{ActionNotified}}, {30 * time.Minute, nil}}},
		{name: "no resume, no notify: nothing", steps: []step{{11 * time.Minute, nil}}},
		{name: "delivered: nothing", agents: resume, session: true, notify: true,
			after: func(t *testing.T, c *clocked, id string) {
				cl, err := c.hub.Store.Get(id)
				require.NoError(t, err)
				require.NoError(t, inbox.MarkSeen(context.Background(), c.hub.Store, "engineer", cl, inbox.ViaInbox))
			},
			steps: []step{{11 * time.Minute, nil}, {30 * time.Minute, nil}}},
		{name: "consumed (resolved): nothing", notify: true,
			after: func(t *testing.T, c *clocked, id string) {
				_, err := c.hub.Resolve(context.Background(), id, "engineer", "")
				require.NoError(t, err)
			},
			steps: []step{{11 * time.Minute, nil}}},
		{name: "consumed (a follow-up): nothing", notify: true,
			after: func(t *testing.T, c *clocked, id string) {
				_, err := c.hub.Followup(context.Background(), id, "engineer", "And the cache?")
				require.NoError(t, err)
			},
			steps: []step{{11 * time.Minute, nil}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClocked(t)
			c.failWake = tc.failWake
			ctx := context.Background()
			if tc.session {
				require.NoError(t, RecordSession(ctx, c.hub.Store, "engineer", issue(7), Session{ID: "s-7"}))
			}
			rec, err := c.hub.Ask(ctx, router.AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "Design", Question: "Which pattern?"})
			require.NoError(t, err)
			_, err = c.hub.Answer(ctx, rec.ID, "architect", "Repository")
			require.NoError(t, err)
			if tc.after != nil {
				tc.after(t, c, rec.ID)
			}
			woke, notified := 0, 0
			for _, s := range tc.steps {
				c.at(s.at)
				got := c.scan(t, tc.agents, tc.notify)
				assert.Equal(t, s.want, actions(got), "at +%s", s.at)
				for _, o := range got {
					switch o.Action {
					case ActionWoke:
						woke++
						assert.Equal(t, rec.ID, o.ID)
					case ActionNotified:
						notified++
					}
				}
			}
			if !tc.failWake {
				assert.Equal(t, woke, c.s.count(), "each retry starts the resume command once")
			}
			assert.Equal(t, notified, c.notifies())
			if woke > 0 && !tc.failWake {
				assert.Contains(t, c.s.runs[0].stdin, "Repository")
				assert.Equal(t, []string{"claude", "-p", "--resume", "s-7", "--", "7:" + rec.ID + ":engineer"}, c.s.runs[0].argv)
				cl, err := c.hub.Store.Get(rec.ID)
				require.NoError(t, err)
				rs, err := inbox.Receipts(c.hub.Store, cl)
				require.NoError(t, err)
				assert.Equal(t, inbox.ReceiptDelivered, rs[0].State)
				assert.Equal(t, inbox.ViaResume, rs[0].Via)
			}
		})
	}
}

// TestUndeliveredRetryAfterAWake: an answer whose first wake claimed it
// and could not start its command is woken once more (a claim of its own).
func TestUndeliveredRetryAfterAWake(t *testing.T) {
	c := newClocked(t)
	ctx := context.Background()
	require.NoError(t, RecordSession(ctx, c.hub.Store, "engineer", nil, Session{ID: "s"}))
	rec, err := c.hub.Ask(ctx, router.AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "Design", Question: "Which?"})
	require.NoError(t, err)
	_, err = c.hub.Answer(ctx, rec.ID, "architect", "This.")
	require.NoError(t, err)
	c.failWake = true
	assert.Empty(t, c.waker(t, resume).Run(ctx), "the command could not start")
	c.failWake = false
	assert.Empty(t, c.waker(t, resume).Run(ctx), "the Waker wakes for an item once")

	c.at(11 * time.Minute)
	got := c.scan(t, resume, false)
	require.Equal(t, []string{ActionWoke}, actions(got))
	require.NotNil(t, got[0].Woke)
	assert.Equal(t, 1, c.s.count())
	c.at(30 * time.Minute)
	assert.Empty(t, c.scan(t, resume, false))
	assert.Empty(t, c.waker(t, resume).Run(ctx))
	assert.Equal(t, 1, c.s.count())
}

// TestUndeliveredOnceAcrossProcesses: many processes (each its own
// store) scanning at once act once per answer.
func TestUndeliveredOnceAcrossProcesses(t *testing.T) {
	for _, wakeable := range []bool{true, false} {
		c := newClocked(t)
		ctx := context.Background()
		agents := map[string]workflow.AgentConfig{}
		if wakeable {
			agents = resume
			require.NoError(t, RecordSession(ctx, c.hub.Store, "engineer", nil, Session{ID: "s"}))
		}
		for n := 1; n <= 3; n++ {
			rec, err := c.hub.Ask(ctx, router.AskRequest{Issue: n, From: "engineer", To: "architect", Topic: "T", Question: "Q?"})
			require.NoError(t, err)
			_, err = c.hub.Answer(ctx, rec.ID, "architect", "A.")
			require.NoError(t, err)
		}
		c.at(11 * time.Minute)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var all []Overdue
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// every process past the throttle: the state file alone decides
				got := c.waker(t, agents).Undelivered(ctx, c.notify)
				mu.Lock()
				all = append(all, got...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		// the throttle lets the first process scan; the others may or may
		// not: scan again, past it, to be sure nothing is done twice
		all = append(all, c.scan(t, agents, true)...)
		assert.Len(t, all, 3, "wakeable=%v", wakeable)
		if wakeable {
			assert.Equal(t, 3, c.s.count())
			assert.Zero(t, c.notifies())
		} else {
			assert.Equal(t, 3, c.notifies())
		}
	}
}

// TestUndeliveredThrottle: the scan runs at most once per ScanEvery, and
// not at all where nothing could act.
func TestUndeliveredThrottle(t *testing.T) {
	c := newClocked(t)
	ctx := context.Background()
	rec, err := c.hub.Ask(ctx, router.AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "T", Question: "Q?"})
	require.NoError(t, err)
	_, err = c.hub.Answer(ctx, rec.ID, "architect", "A.")
	require.NoError(t, err)
	scanned := filepath.Join(c.dir, ".agentx", "state", filepath.FromSlash(ScannedFile))

	assert.Empty(t, c.waker(t, nil).Undelivered(ctx, c.notify), "scanned: nothing overdue yet")
	assert.FileExists(t, scanned, "scanned even with no notify nor resume: lost events are everyone's")
	c.at(11 * time.Minute)
	assert.Len(t, c.waker(t, nil).Undelivered(ctx, c.notify), 1, "a minute later: scanned")
	// a second answer, overdue, waits for the next scan
	rec2, err := c.hub.Ask(ctx, router.AskRequest{Issue: 8, From: "engineer", To: "architect", Topic: "T", Question: "Q?"})
	require.NoError(t, err)
	_, err = c.hub.Answer(ctx, rec2.ID, "architect", "A.")
	require.NoError(t, err)
	c.at(21*time.Minute + 30*time.Second)
	assert.Len(t, c.waker(t, nil).Undelivered(ctx, c.notify), 1)
	assert.Empty(t, c.waker(t, nil).Undelivered(ctx, c.notify), "within the minute: not scanned")
}

// BenchmarkUndeliveredNotDue is what the overdue scan costs a command when
// it is not due: one stat of the throttle file.
func BenchmarkUndeliveredNotDue(b *testing.B) {
	dir, _ := testenv.Workspace(b, "")
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, time.Now)
	w := &Waker{Store: store, Agents: resume, Root: dir}
	notify := func(context.Context, int, *ledger.Clarification, inbox.Receipt) error { return nil }
	w.Undelivered(context.Background(), notify) // the scan, once
	b.ReportAllocs()
	for b.Loop() {
		if w.Undelivered(context.Background(), notify) != nil {
			b.Fatal("scanned again")
		}
	}
}

func removeIfExists(p string) error {
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// TestLostEventIsAppendedAgain: an answer whose event never reached the
// log (its process was killed between the ledger write and the append) is
// found by the overdue scan, which appends the event again, once; then the
// asker is woken as for any answer.
func TestLostEventIsAppendedAgain(t *testing.T) {
	c := newClocked(t)
	ctx := context.Background()
	require.NoError(t, RecordSession(ctx, c.hub.Store, "engineer", nil, Session{ID: "s"}))
	rec, err := c.hub.Ask(ctx, router.AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "Design", Question: "Which?"})
	require.NoError(t, err)
	log := filepath.Join(c.dir, ".agentx", "state", "events.jsonl")
	before, err := os.ReadFile(log)
	require.NoError(t, err)
	_, err = c.hub.Answer(ctx, rec.ID, "architect", "This one.")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(log, before, 0o644)) // the answer's event is lost
	assert.Empty(t, c.waker(t, resume).Run(ctx), "nothing in the log: nothing to wake for")

	c.at(20 * time.Second)
	assert.Empty(t, c.scan(t, resume, false), "too young to call the event lost")
	c.at(40 * time.Second)
	got := c.scan(t, resume, false)
	require.Equal(t, []string{ActionReemitted}, actions(got), "found within a scan or two, not after ten minutes")
	after, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, string(after[len(before):]), `"type":"clarification-answered"`)
	assert.Contains(t, string(after[len(before):]), rec.ID)

	woke := c.waker(t, resume).Run(ctx)
	require.Len(t, woke, 1, "the event is back: the asker is woken")
	assert.Contains(t, c.s.runs[0].stdin, "This one.")
	c.at(12 * time.Minute)
	assert.Empty(t, c.scan(t, resume, false), "delivered now: nothing more")

	// a fresh clone: the asker never worked on this machine (no inbox, no
	// session here): its history is not replayed
	c2 := newClocked(t)
	rec2, err := c2.hub.Ask(ctx, router.AskRequest{Issue: 3, From: "engineer", To: "architect", Topic: "T", Question: "Q?"})
	require.NoError(t, err)
	log2 := filepath.Join(c2.dir, ".agentx", "state", "events.jsonl")
	before2, err := os.ReadFile(log2)
	require.NoError(t, err)
	_, err = c2.hub.Answer(ctx, rec2.ID, "architect", "A.")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(log2, before2, 0o644))
	c2.at(time.Hour)
	assert.Empty(t, c2.scan(t, nil, false))
	after2, err := os.ReadFile(log2)
	require.NoError(t, err)
	assert.Equal(t, before2, after2)
	size := len(after)
	after, err = os.ReadFile(log)
	require.NoError(t, err)
	assert.Len(t, after, size, "appended once")
}
