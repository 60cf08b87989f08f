//go:build unix

package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
)

// chaosEnv sets how long TestRemoteChaos's hosts work under the chaos
// (a Go duration; default 20s, which with the checks after keeps the test
// under a minute on two busy cores).
const chaosEnv = "AGENTX_REMOTE_CHAOS"

// soakFor is how long a chaos test's hosts work under the chaos: chaosEnv,
// else def.
func soakFor(t *testing.T, def time.Duration) time.Duration {
	v := os.Getenv(chaosEnv)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "%s", chaosEnv)
	return d
}

// procsEnv sets the chaos tests' workers a host (default 2; 1 on one
// issue, where another host's worker's answers meet its asks): more meet
// at each issue's lock, and hand their questions and changes to its
// holder.
const procsEnv = "AGENTX_REMOTE_CHAOS_PROCS"

// procsFor is a chaos test's processes a host: procsEnv, else def.
func procsFor(t *testing.T, def int) int {
	v := os.Getenv(procsEnv)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s", procsEnv)
	require.Positive(t, n, "%s", procsEnv)
	return n
}

// chaos is a world whose agentx processes are killed and paused at random
// while a rewinder moves the shared refs back and deletes one.
type chaos struct {
	w      *world
	monkey testenv.Monkey // kills and pauses the agentx processes
	mu     sync.Mutex
	// acked maps the topic of every ask that exited 0 with an id to that id.
	acked map[string]string
	// unsynced maps the topic of every acknowledged ask that said
	// unsynced (kept in the outbox: its id provisional) to its host and
	// why its sync state says it was not published.
	unsynced map[string]unsyncedAsk
	issues   int // the workers ask on issues 1 to issues
	// answers: every other turn, a worker records an assumption on one
	// of its questions acknowledged before while the next host answers
	// it, at the same moment (assumed and answered map its topic to the
	// assumption and the answer, once acknowledged), then, its answer
	// acknowledged, resolves it or follows up (resolved and followed);
	// peers: the workers' hosts
	answers                  bool
	peers                    int
	answered, assumed        map[string]string
	resolved, followed       map[string]string
	answering, assuming      int
	resolving, following     int
	asks, refused, republish int
	busy                     int // asks refused as remote_busy (exit 5)
	// asks whose question the process holding the issue took (group
	// commit) and was killed before telling them: handed_lost (exit 5),
	// not acknowledged, maybe on the remote
	handedLost              int
	rewound, deleted, raced int
	failures                []string
}

func (c *chaos) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.failures) < 20 {
		c.failures = append(c.failures, fmt.Sprintf(format, args...))
	}
}

// run runs agentx in host h to its end, as one the chaos may kill (code
// -1) or pause; one still running 90 s on is a failure, and killed.
func (c *chaos) run(h int, args ...string) result {
	cmd := exec.Command(c.w.bin, args...)
	cmd.Dir = c.w.hosts[h]
	cmd.Env = append(os.Environ(), "AGENTX_NO_MONITOR=1", "AGENTX_AGENT=", "USER=tester", "GIT_TERMINAL_PROMPT=0",
		fmt.Sprintf("AGENTX_HOST=host%d", h))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code, hung, err := c.monkey.Exec(cmd, 90*time.Second)
	if hung {
		c.fail("host %d: %v still running after 90 s", h, args)
	}
	if err != nil {
		c.fail("host %d: %v: %v", h, args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// worker asks, over and over until stop, on issue 1 or 2 from host h;
// refused (exit 7: a ref moved back or deleted), it puts its chain back
// with agentx sync --republish, as docs/remote.md says to.
func (c *chaos) worker(h, p int, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(h), uint64(p)))
	var mine []string // topics of this worker's acknowledged questions, not yet answered
	for k := 0; ; k++ {
		select {
		case <-stop:
			return
		default:
		}
		if c.answers && k%2 == 1 && len(mine) > 0 {
			// the asker proceeds on an assumption as the answer comes,
			// on two hosts: both changes to the one record stand
			var both sync.WaitGroup
			topic := mine[0]
			both.Go(func() { c.assume(h, topic) })
			both.Go(func() { c.answer((h+1)%c.peers, topic) })
			both.Wait()
			mine = mine[1:]
			c.mu.Lock()
			_, answered := c.answered[topic]
			c.mu.Unlock()
			switch {
			case !answered:
			case k%4 == 1:
				c.change(h, topic, "done with "+topic, c.resolved, &c.resolving, []string{"resolve", "--from", "engineer", "--body"}, 6)
			default:
				c.change(h, topic, "and for timeouts, "+topic+"?", c.followed, &c.following, []string{"followup", "--from", "engineer", "--body"}, 6)
			}
			continue
		}
		issue := 1 + rng.IntN(max(c.issues, 1))
		topic := fmt.Sprintf("h%d-p%d-k%d", h, p, k)
		r := c.run(h, "clarify", "ask", "--issue", fmt.Sprint(issue), "--from", "engineer", "--to", "architect",
			"--topic", topic, "--question", "which retry budget applies to "+topic+"?", "--non-blocking", "--json")
		c.mu.Lock()
		c.asks++
		c.mu.Unlock()
		switch r.code {
		case -1: // killed: not acknowledged
		case 0:
			var doc struct {
				Data struct{ ID string } `json:"data"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Data.ID == "" {
				c.fail("host %d: ask exit 0 without an id: %q", h, r.stdout)
				continue
			}
			c.mu.Lock()
			c.acked[topic] = doc.Data.ID
			if strings.Contains(r.stdout, `"unsynced"`) {
				c.unsynced[topic] = unsyncedAsk{host: h, why: newestWhy(c.w.syncState(h, issue))}
			} else {
				mine = append(mine, topic)
			}
			c.mu.Unlock()
		case 7:
			c.mu.Lock()
			c.refused++
			c.mu.Unlock()
			// 5: other hosts kept moving the ref; 6, 7: another refusal or
			// overtaken change is told (what was done is reported)
			if rr := c.run(h, "sync", "--republish"); rr.code != -1 && rr.code != 0 && rr.code != 7 && rr.code != 5 && rr.code != 6 {
				c.fail("host %d: sync --republish: exit %d: %s", h, rr.code, rr.stderr)
			} else if rr.code == 0 {
				c.mu.Lock()
				c.republish++
				c.mu.Unlock()
			}
		case 5: // remote_busy: not acknowledged, nothing written
			c.mu.Lock()
			if strings.Contains(r.stderr, `"handed_lost"`) {
				c.handedLost++
			} else {
				c.busy++
			}
			c.mu.Unlock()
		default:
			c.fail("host %d: ask: exit %d: %s", h, r.code, r.stderr)
		}
	}
}

// answer has host h answer the question asked as topic, under the id its
// ask printed. Exit 0 acknowledges the answer; an answer refused because
// the question is answered already (an earlier try killed after it
// landed) or killed is not.
func (c *chaos) answer(h int, topic string) {
	c.change(h, topic, "three tries for "+topic, c.answered, &c.answering, []string{"answer", "--from", "architect", "--body"}, 3, 4)
}

// assume has host h record, as the asker, an assumption on the question
// asked as topic. Exit 0 acknowledges it.
func (c *chaos) assume(h int, topic string) {
	c.change(h, topic, "proceeding on two tries for "+topic, c.assumed, &c.assuming, []string{"assume", "--from", "engineer", "--assumption"})
}

// change has host h run clarify VERB ID ... body (how: VERB and the
// flags before body) on the question asked as topic, under the id its
// ask printed, counted in tries. Exit 0 acknowledges it (made maps topic
// to body); killed, or refused as it stands (an exit in refused), not.
func (c *chaos) change(h int, topic, body string, made map[string]string, tries *int, how []string, refused ...int) {
	c.mu.Lock()
	id := c.acked[topic]
	*tries++
	c.mu.Unlock()
	args := append([]string{"clarify", how[0], id}, how[1:]...)
	r := c.run(h, append(args, body, "--json")...)
	switch {
	case r.code == -1 || slices.Contains(refused, r.code):
	case r.code == 0:
		c.mu.Lock()
		made[topic] = body
		c.mu.Unlock()
	case r.code == 5:
		c.mu.Lock()
		if strings.Contains(r.stderr, `"handed_lost"`) {
			c.handedLost++ // handed to a holder that was killed
		} else {
			c.busy++
		}
		c.mu.Unlock()
	default:
		c.fail("host %d: %s %s: exit %d: %s", h, how[0], id, r.code, r.stderr)
	}
}

// chaos kills or pauses (for up to a second) a random agentx process
// every 150 ms until stop.
func (c *chaos) chaos(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }()
	c.monkey.Run(ctx, rand.New(rand.NewPCG(11, uint64(time.Now().UnixNano()))), 150*time.Millisecond,
		func(rng *rand.Rand) time.Duration { return time.Duration(200+rng.IntN(800)) * time.Millisecond })
}

// rewinder, from a clone of its own, force-pushes an older commit of an
// issue's ref every interval until stop, and once deletes a ref instead:
// a server restored from a backup, git push --force and git push --mirror
// from older clones.
func (c *chaos) rewinder(dir string, every time.Duration, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(5, uint64(time.Now().UnixNano())))
	gitq := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	deletedOnce := false
	// once moves one ref back (or deletes it): false when a host pushed
	// between its fetch and its push (the push is refused: git push
	// --force still names the commit it replaces), to be tried again.
	once := func(n int) bool {
		if _, err := gitq("fetch", "--quiet", "--prune", "origin", "+refs/agentx/*:refs/agentx/*"); err != nil {
			c.fail("rewinder: fetch: %v", err)
			return true
		}
		issue := 1 + rng.IntN(2)
		ref := fmt.Sprintf("refs/agentx/clarifications/issue-%d", issue)
		if !deletedOnce && n >= 2 {
			if _, err := gitq("push", "--quiet", "origin", ":"+ref); err != nil {
				return false
			}
			deletedOnce = true
			c.mu.Lock()
			c.deleted++
			c.mu.Unlock()
			return true
		}
		out, err := gitq("rev-list", "--first-parent", ref)
		chain := strings.Fields(out)
		if err != nil || len(chain) < 3 {
			return true // not there (deleted, not yet put back) or too short
		}
		old := chain[1+rng.IntN(len(chain)/2)] // back by one to half the chain
		if _, err := gitq("push", "--quiet", "--force", "origin", old+":"+ref); err != nil {
			return false
		}
		c.mu.Lock()
		c.rewound++
		c.mu.Unlock()
		return true
	}
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-time.After(every):
		}
		for try := 0; try < 5 && !once(n); try++ {
			c.mu.Lock()
			c.raced++
			c.mu.Unlock()
		}
	}
}

// TestRemoteChaos: three hosts, two agentx processes on each asking on
// two issues, killed and paused at random, while a rewinder force-pushes
// older commits of the refs and once deletes one; a host refused (exit
// 7) puts its chain back with agentx sync --republish. At the end, once
// every host has synced (and republished where it still refuses), every
// ask that printed an id and exited 0 has its question on every host and
// on the remote, once, and the ids on the remote are dense.
func TestRemoteChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos test runs for tens of seconds")
	}
	soak := soakFor(t, 20*time.Second)
	const hosts = 3
	procs := procsFor(t, 2)
	w := newWorld(t, hosts, "", "")
	c := &chaos{w: w, acked: map[string]string{}, unsynced: map[string]unsyncedAsk{}, issues: 2}
	// Every host settles both issues first, so that it can tell a ref
	// moved back from a new one.
	for i := range 2 {
		r := c.run(0, "clarify", "ask", "--issue", fmt.Sprint(i+1), "--from", "engineer", "--to", "architect", "--topic", fmt.Sprintf("seed-%d", i+1), "--question", "seed?", "--non-blocking", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		c.acked[fmt.Sprintf("seed-%d", i+1)] = "seed"
	}
	for h := range hosts {
		require.Equal(t, 0, c.run(h, "sync").code)
	}
	rewinderDir := filepath.Join(t.TempDir(), "rewinder")
	git(t, filepath.Dir(rewinderDir), "init", "--quiet", rewinderDir)
	git(t, rewinderDir, "remote", "add", "origin", w.bare)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for h := range hosts {
		for p := range procs {
			wg.Go(func() { c.worker(h, p, stop) })
		}
	}
	var side sync.WaitGroup
	side.Go(func() { c.chaos(stop) })
	side.Go(func() { c.rewinder(rewinderDir, min(soak/7, 5*time.Second), stop) })
	time.Sleep(soak)
	close(stop)
	side.Wait() // the monkey has continued every process it paused
	wg.Wait()
	for _, f := range c.failures {
		t.Error(f)
	}

	// Every host syncs; one still refused puts its chain back. Until all
	// agree on the remote's version.
	settled := false
	for round := 0; round < 12 && !settled; round++ {
		settled = true
		for h := range hosts {
			r := c.run(h, "sync")
			switch r.code {
			case 0:
			case 7, 6:
				settled = false
				rr := c.run(h, "sync", "--republish")
				assert.Contains(t, []int{0, 5, 6, 7}, rr.code, "host %d: sync --republish: %s", h, rr.stderr)
				if round >= 3 {
					t.Logf("round %d, host %d: sync: exit %d: %s\nsync --republish: exit %d: %s%s", round, h, r.code, r.stderr, rr.code, rr.stdout, rr.stderr)
				}
			default:
				settled = false
				t.Logf("host %d: sync: exit %d: %s", h, r.code, r.stderr)
			}
		}
	}
	require.True(t, settled, "the hosts did not settle on one version")

	seen := map[int]map[string]int{} // per host, every topic's count
	for h := range hosts {
		seen[h] = map[string]int{}
		for issue := 1; issue <= 2; issue++ {
			data, err := os.ReadFile(filepath.Join(w.hosts[h], ".agentx", "state", "clarifications", fmt.Sprintf("issue-%d.json", issue)))
			require.NoError(t, err)
			l, err := ledger.Decode(fmt.Sprintf("host %d issue %d", h, issue), data)
			require.NoError(t, err)
			for _, c := range l.Clarifications {
				seen[h][c.Topic]++
			}
		}
	}
	remote := map[string]int{}
	for issue := 1; issue <= 2; issue++ {
		ref := fmt.Sprintf("refs/agentx/clarifications/issue-%d", issue)
		blob := git(t, w.bare, "cat-file", "blob", ref+":"+fmt.Sprintf("issue-%d.json", issue))
		l, err := ledger.Decode(ref, []byte(blob))
		require.NoError(t, err)
		for i, c := range l.Clarifications {
			assert.Equal(t, ledger.FormatID(issue, i+1), c.ID, "issue %d: ids dense, in order", issue)
			remote[c.Topic]++
		}
	}
	lost := 0
	for topic, id := range c.acked {
		if remote[topic] != 1 {
			lost++
			t.Errorf("acknowledged %s (%s) is on the remote %d times", topic, id, remote[topic])
		}
		for h := range hosts {
			if seen[h][topic] != 1 {
				t.Errorf("acknowledged %s (%s) is on host %d %d times", topic, id, h, seen[h][topic])
			}
		}
	}
	for topic, n := range remote {
		if n > 1 {
			t.Errorf("%s is on the remote %d times", topic, n)
		}
	}
	killed, paused := c.monkey.Counts()
	t.Logf("%s of chaos: %d asks, %d acknowledged (%d lost), %d refused (exit 7), %d handed_lost, %d republished; %d SIGKILLs, %d SIGSTOPs; %d rewinds, %d deletions (%d lost a race with a host); %d records on the remote",
		soak, c.asks, len(c.acked), lost, c.refused, c.handedLost, c.republish, killed, paused, c.rewound, c.deleted, c.raced, len(remote))
	// The clocks are right: neither a ref moved back nor a chain put back
	// may read as a disagreement of clocks.
	for h := range hosts {
		data, err := os.ReadFile(filepath.Join(w.hosts[h], ".agentx", "state", "remote", "clock.json"))
		require.NoError(t, err)
		assert.NotContains(t, string(data), `"skews"`, "host %d", h)
	}
	// A writer killed while it wrote a commit's objects left none half
	// written (a tmp_obj_* file at most, which git ignores and prunes).
	for h := range hosts {
		git(t, w.hosts[h], "fsck", "--no-dangling")
	}
	assert.Positive(t, c.rewound, "the ref was moved back")
	assert.Positive(t, c.deleted, "a ref was deleted")
}

// unsyncedAsk is an acknowledged ask kept in its host's outbox.
type unsyncedAsk struct {
	host int
	why  string // why it was not published, as its sync state says
}

// syncState reads host h's sync state of issue (empty when it has none).
func (w *world) syncState(h, issue int) *remote.SyncState {
	st := &remote.SyncState{}
	if data, err := os.ReadFile(filepath.Join(w.hosts[h], ".agentx", "state", "remote", fmt.Sprintf("issue-%d.json", issue))); err == nil {
		_ = json.Unmarshal(data, st)
	}
	return st
}

// newestWhy is why the newest change in st's outbox was not published.
func newestWhy(st *remote.SyncState) string {
	if len(st.Pending) == 0 {
		return ""
	}
	return st.Pending[len(st.Pending)-1].Why
}

// sameID checks that the acknowledged ask of topic, printed as id, is on
// the remote as onRemote: an ask printed as synced is never renumbered;
// one kept in its host's outbox (unsynced: its id provisional) may be,
// and its host then records the renumbering, as its asker is told.
func (c *chaos) sameID(t *testing.T, topic, id, onRemote string) {
	t.Helper()
	u, ok := c.unsynced[topic]
	if ok {
		t.Logf("%s, printed as %s, is %s on the remote; it was kept in host %d's outbox: %s", topic, id, onRemote, u.host, u.why)
	}
	if id == onRemote {
		return
	}
	if !ok {
		t.Errorf("%s: printed as %s, synced, but %s on the remote", topic, id, onRemote)
		return
	}
	to, told := c.w.syncState(u.host, 1).RenumberedTo(id)
	assert.True(t, told && to == onRemote, "%s: printed as %s (unsynced), %s on the remote: host %d records it renumbered to %q", topic, id, onRemote, u.host, to)
}

// TestRemoteChaosOneIssue: eight hosts, one agentx process on each, all
// asking on one issue (the intents: every ask posted on a ref of its own
// and merged by the oldest waiting host), killed and paused at random.
// At the end every ask that printed an id and exited 0 is on the remote
// once, under that id, with its question; the ids are dense; none was
// refused as remote_busy; and a host that never wrote the issue checks
// the whole chain from its root and adopts it.
func TestRemoteChaosOneIssue(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos test runs for tens of seconds")
	}
	soak := soakFor(t, 15*time.Second)
	const hosts = 8
	w := newWorld(t, hosts+1, "", "") // the last one only checks, at the end
	c := &chaos{w: w, acked: map[string]string{}, unsynced: map[string]unsyncedAsk{}, issues: 1, answers: true, peers: hosts,
		answered: map[string]string{}, assumed: map[string]string{}, resolved: map[string]string{}, followed: map[string]string{}}
	r := c.run(0, "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "seed", "--question", "seed?", "--non-blocking", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	c.acked["seed"] = "CLR-1-001"

	stop := make(chan struct{})
	var wg sync.WaitGroup
	procs := procsFor(t, 1)
	for h := range hosts {
		for p := range procs {
			wg.Go(func() { c.worker(h, p, stop) })
		}
	}
	var side sync.WaitGroup
	side.Go(func() { c.chaos(stop) })
	time.Sleep(soak)
	close(stop)
	side.Wait()
	wg.Wait()
	for _, f := range c.failures {
		t.Error(f)
	}
	assert.Zero(t, c.busy, "asks refused as remote_busy")
	assert.Zero(t, c.refused, "asks refused (exit 7)")
	// Every host syncs, as the next command there would: an ask kept in
	// an outbox is delivered, and where its id was taken, renumbered.
	for h := range hosts {
		r := c.run(h, "sync")
		require.Equal(t, 0, r.code, "host %d: sync: %s", h, r.stderr)
	}

	ref := "refs/agentx/clarifications/issue-1"
	l, err := ledger.Decode(ref, []byte(git(t, w.bare, "cat-file", "blob", ref+":issue-1.json")))
	require.NoError(t, err)
	onRemote := map[string][]*ledger.Clarification{}
	for i, rec := range l.Clarifications {
		assert.Equal(t, ledger.FormatID(1, i+1), rec.ID, "ids dense, in order")
		onRemote[rec.Topic] = append(onRemote[rec.Topic], rec)
	}
	lost := 0
	for topic, id := range c.acked {
		recs := onRemote[topic]
		if len(recs) != 1 {
			lost++
			t.Errorf("acknowledged %s (%s) is on the remote %d times", topic, id, len(recs))
			continue
		}
		c.sameID(t, topic, id, recs[0].ID)
		if topic != "seed" && assert.NotEmpty(t, recs[0].Thread, topic) {
			assert.Equal(t, "which retry budget applies to "+topic+"?", recs[0].Thread[0].Body, "%s: its question", topic)
		}
	}
	for topic, recs := range onRemote {
		if len(recs) > 1 {
			t.Errorf("%s is on the remote %d times", topic, len(recs))
		}
		answers := 0
		for _, e := range recs[0].Thread {
			if e.Type == ledger.Answer {
				answers++
			}
		}
		if answers > 1 {
			t.Errorf("%s is answered %d times", topic, answers)
		}
		if x := recs[0].X; x != nil && len(x.Assumptions) > 1 {
			t.Errorf("%s holds %d assumptions: %+v", topic, len(x.Assumptions), x.Assumptions)
		}
	}
	for topic, body := range c.assumed {
		recs := onRemote[topic]
		if len(recs) != 1 {
			continue // reported above
		}
		if x := recs[0].X; x == nil || len(x.Assumptions) != 1 || x.Assumptions[0].Body != body {
			lost++
			t.Errorf("acknowledged assumption on %s (%s) is not on the remote: %+v", topic, recs[0].ID, x)
		}
	}
	for topic, body := range c.answered {
		recs := onRemote[topic]
		if len(recs) != 1 {
			continue // reported above
		}
		if n := len(recs[0].Thread); n < 2 || recs[0].Thread[1].Type != ledger.Answer || recs[0].Thread[1].Body != body {
			lost++
			t.Errorf("acknowledged answer to %s (%s) is not on the remote: %+v", topic, recs[0].ID, recs[0].Thread)
		}
	}
	// a resolution or follow-up once, after its answer (exit 6: refused,
	// its host not yet holding the answer, kept in another's outbox)
	for topic, body := range c.resolved {
		if recs := onRemote[topic]; len(recs) == 1 && !endsWith(recs[0], ledger.Resolved, ledger.Resolution, body) {
			lost++
			t.Errorf("acknowledged resolution of %s (%s) is not on the remote: %s %+v", topic, recs[0].ID, recs[0].Status, recs[0].Thread)
		}
	}
	for topic, body := range c.followed {
		if recs := onRemote[topic]; len(recs) == 1 && !endsWith(recs[0], ledger.Pending, ledger.Question, body) {
			lost++
			t.Errorf("acknowledged follow-up on %s (%s) is not on the remote: %s %+v", topic, recs[0].ID, recs[0].Status, recs[0].Thread)
		}
	}
	// A host with no copy checks every commit from the root, then adopts
	// the head.
	fresh := c.run(hosts, "sync")
	assert.Equal(t, 0, fresh.code, "a fresh host adopts the chain: %s", fresh.stderr)
	killed, paused := c.monkey.Counts()
	t.Logf("%s of chaos on one issue, %d hosts: %d asks, %d acknowledged, %d assumptions, %d acknowledged, %d answers, %d acknowledged, %d resolutions, %d acknowledged, %d follow-ups, %d acknowledged (%d lost), %d remote_busy, %d handed_lost; %d SIGKILLs, %d SIGSTOPs; %d records on the remote",
		soak, hosts, c.asks, len(c.acked), c.assuming, len(c.assumed), c.answering, len(c.answered), c.resolving, len(c.resolved), c.following, len(c.followed), lost, c.busy, c.handedLost, killed, paused, len(l.Clarifications))
	for h := range hosts {
		git(t, w.hosts[h], "fsck", "--no-dangling")
	}
}

// endsWith reports whether c is in status st, its thread holding one
// entry of type t with body, its last (a record resolved, or followed up
// and not answered since).
func endsWith(c *ledger.Clarification, st ledger.Status, t ledger.EntryType, body string) bool {
	n := 0
	for _, e := range c.Thread {
		if e.Type == t && e.Body == body {
			n++
		}
	}
	last := c.Thread[len(c.Thread)-1]
	return c.Status == st && n == 1 && last.Type == t && last.Body == body
}
