package remote_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// These tests run the real thing: the system git, a bare repository as
// the remote, clones as hosts, and agentx processes in each.

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBinary()
	os.Exit(code)
}

func agentxBin(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the remote mode needs it")
	}
	return testenv.AgentxBinary(t)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), append(remote.TestGitIdentity, "GIT_TERMINAL_PROMPT=0")...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// world is a bare remote and its hosts.
type world struct {
	t     *testing.T
	bin   string
	bare  string
	hosts []string
}

// newWorld makes a bare repository and n hosts whose origin is url (""
// for the bare repository's path), each an agentx workspace with
// [remote] git = "origin".
func newWorld(t *testing.T, n int, url string, extra string) *world {
	w := &world{t: t, bin: agentxBin(t)}
	root := t.TempDir()
	w.bare = filepath.Join(root, "remote.git")
	git(t, root, "init", "--quiet", "--bare", w.bare)
	git(t, w.bare, "config", "http.receivepack", "true")
	if url == "" {
		url = w.bare
	}
	for i := range n {
		h := filepath.Join(root, fmt.Sprintf("host%d", i))
		require.NoError(t, os.MkdirAll(h, 0o755))
		git(t, h, "init", "--quiet")
		git(t, h, "remote", "add", "origin", url)
		r := w.run(i, "", "init")
		require.Equal(t, 0, r.code, r.stderr)
		cfg := filepath.Join(h, ".agentx", "config.toml")
		data, err := os.ReadFile(cfg)
		require.NoError(t, err)
		data = []byte(strings.Replace(string(data), `wait = "5s"`, `wait = "300s"`, 1))
		// no per-run question cap: these hosts ask many times in one run
		data = []byte(strings.Replace(string(data), "\nmax_questions = 3", "\nmax_questions = 0", 1))
		// The remote is reachable throughout (the outage test stops its
		// server: refused at once): a timeout is only ever a loaded machine.
		require.NoError(t, os.WriteFile(cfg, append(data, []byte("\n[remote]\ngit = \"origin\"\ntimeout = \"60s\"\n"+extra)...), 0o644))
		w.hosts = append(w.hosts, h)
	}
	return w
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs agentx in host i as agent (""; a person's shell), with the
// monitor off.
func (w *world) run(i int, agent string, args ...string) result {
	return w.runEnv(i, []string{"AGENTX_NO_MONITOR=1"}, agent, args...)
}

// runEnv is run with env added to the process's environment.
func (w *world) runEnv(i int, env []string, agent string, args ...string) result {
	dir := ""
	if i < len(w.hosts) {
		dir = w.hosts[i]
	} else {
		dir = filepath.Join(filepath.Dir(w.bare), fmt.Sprintf("host%d", i))
	}
	cmd := exec.Command(w.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "AGENTX_AGENT="+agent, "USER=tester", "GIT_TERMINAL_PROMPT=0"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return result{code, out.String(), errb.String()}
}

// chain returns the remote's versions of issue's ledger, oldest first.
func (w *world) chain(issue int) []*ledger.Ledger {
	t := w.t
	ref := fmt.Sprintf("refs/agentx/clarifications/issue-%d", issue)
	var out []*ledger.Ledger
	for _, c := range strings.Fields(git(t, w.bare, "rev-list", "--reverse", ref)) {
		data := git(t, w.bare, "cat-file", "blob", c+":"+fmt.Sprintf("issue-%d.json", issue))
		l, err := ledger.Decode(c, []byte(data))
		require.NoError(t, err)
		out = append(out, l)
	}
	return out
}

// checkChain holds every version of the chain to the lifecycle: no record
// removed, every status change an allowed move, ids dense.
func checkChain(t *testing.T, versions []*ledger.Ledger) *ledger.Ledger {
	t.Helper()
	require.NotEmpty(t, versions)
	prev := map[string]ledger.Status{}
	for v, l := range versions {
		now := map[string]ledger.Status{}
		for i, c := range l.Clarifications {
			assert.Equal(t, ledger.FormatID(l.IssueNumber, i+1), c.ID, "version %d: ids dense, in order", v)
			now[c.ID] = c.Status
			if was, ok := prev[c.ID]; ok && was != c.Status {
				assert.True(t, ledger.CanMove(was, c.Status), "version %d: %s moved %s -> %s", v, c.ID, was, c.Status)
			}
		}
		for id := range prev {
			assert.Contains(t, now, id, "version %d lost %s", v, id)
		}
		prev = now
	}
	return versions[len(versions)-1]
}

func data(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var doc struct {
		Data     map[string]any `json:"data"`
		Unsynced []string       `json:"unsynced"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	if len(doc.Unsynced) > 0 {
		doc.Data["_unsynced"] = true
	}
	return doc.Data
}

// TestHostsAtOnce: three hosts, three agentx processes on each, every one
// asking, answering and resolving on one issue at once through a bare
// remote. Every acknowledged change is in the remote's chain exactly once,
// the ids are dense, every status change is legal, and each host's ready
// agrees once it has fetched.
func TestHostsAtOnce(t *testing.T) {
	const hosts, procs, rounds = 3, 3, 2
	w := newWorld(t, hosts, "", "")
	type acked struct {
		question, id string
		answered     bool
		resolved     bool
	}
	var mu sync.Mutex
	var all []acked
	var busy []string // asks the remote stayed too busy for: not acknowledged
	var wg sync.WaitGroup
	for h := range hosts {
		for p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range rounds {
					q := fmt.Sprintf("h%d-p%d-k%d", h, p, k)
					r := w.run(h, "", "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", q, "--question", q, "--non-blocking", "--json")
					if r.code == 5 && strings.Contains(r.stderr, "remote_busy") {
						mu.Lock()
						busy = append(busy, q)
						mu.Unlock()
						continue
					}
					if !assert.Equal(t, 0, r.code, r.stderr) {
						return
					}
					assert.NotContains(t, r.stdout, "unsynced", "the remote was reachable throughout")
					a := acked{question: q, id: data(t, r.stdout)["id"].(string)}
					r = w.run(h, "architect", "clarify", "answer", a.id, "--body", "answer to "+q, "--json")
					a.answered = assert.Equal(t, 0, r.code, r.stderr)
					if k%2 == 0 {
						r = w.run(h, "engineer", "clarify", "resolve", a.id, "--body", "done "+q, "--json")
						a.resolved = assert.Equal(t, 0, r.code, r.stderr)
					}
					mu.Lock()
					all = append(all, a)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	require.Len(t, all, hosts*procs*rounds-len(busy))
	t.Logf("%d asks acknowledged, %d refused as remote_busy", len(all), len(busy))

	last := checkChain(t, w.chain(1))
	require.Len(t, last.Clarifications, len(all), "one record per acknowledged ask, none for a refused one")
	byID := map[string]*ledger.Clarification{}
	for _, c := range last.Clarifications {
		byID[c.ID] = c
	}
	for _, a := range all {
		c := byID[a.id]
		require.NotNil(t, c, a.id)
		assert.Equal(t, a.question, c.Topic, "%s is the question its ask acknowledged", a.id)
		n := map[ledger.EntryType]int{}
		for _, e := range c.Thread {
			n[e.Type]++
		}
		assert.Equal(t, 1, n[ledger.Question], a.id)
		assert.Equal(t, 1, n[ledger.Answer], "%s answered exactly once", a.id)
		if a.resolved {
			assert.Equal(t, ledger.Resolved, c.Status, a.id)
			assert.Equal(t, 1, n[ledger.Resolution], a.id)
		} else {
			assert.Equal(t, ledger.Answered, c.Status, a.id)
		}
	}

	assert.Empty(t, queueLeft(t, w.bare), "every waiter left the queue")

	// One blocking question left open on host 0: every host's gate agrees.
	r := w.run(0, "", "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "open", "--question", "still open?", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	open := data(t, r.stdout)["id"].(string)
	for h := range hosts {
		require.Equal(t, 0, w.run(h, "", "sync").code)
		r := w.run(h, "", "ready", "--issue", "1", "--json")
		assert.Equal(t, 9, r.code, "host %d: %s", h, r.stderr)
		assert.Contains(t, r.stdout, open, "host %d", h)
	}
}

// TestSuperseded: two hosts answer the same round. One wins; the other
// gets superseded (exit 6) with the winner's answer, and nothing of its own
// is written.
func TestSuperseded(t *testing.T) {
	w := newWorld(t, 3, "", "")
	r := w.run(0, "engineer", "clarify", "ask", "--issue", "7", "--to", "architect", "--topic", "Cache", "--question", "TTL?")
	require.Equal(t, 0, r.code, r.stderr)
	for h := 1; h < 3; h++ {
		require.Equal(t, 0, w.run(h, "", "sync").code) // both have seen the question
	}
	r = w.run(1, "architect", "clarify", "answer", "CLR-7-001", "--body", "Five minutes.")
	require.Equal(t, 0, r.code, r.stderr)
	r = w.run(2, "architect", "clarify", "answer", "CLR-7-001", "--body", "An hour.", "--json")
	require.Equal(t, 6, r.code, r.stderr)
	var doc struct {
		Error struct{ Code, Message string }
		Data  ledger.Clarification
	}
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &doc), r.stderr)
	assert.Equal(t, "superseded", doc.Error.Code)
	assert.Equal(t, ledger.Answered, doc.Data.Status)
	assert.Equal(t, "Five minutes.", doc.Data.RoundAnswer(), "the winner's answer")
	// Text mode says who won, and the local copy is now the shared one.
	r = w.run(2, "architect", "clarify", "answer", "CLR-7-001", "--body", "An hour.")
	assert.Equal(t, 6, r.code)
	last := checkChain(t, w.chain(7))
	assert.Equal(t, "Five minutes.", last.Clarifications[0].RoundAnswer())
	r = w.run(2, "", "clarify", "show", "CLR-7-001", "--offline")
	assert.Contains(t, r.stdout, "Five minutes.")
	assert.NotContains(t, r.stdout, "An hour.")
}

// gitServer serves the bare repositories under root over HTTP on loopback
// with git http-backend, and can be stopped and started again on the same
// address.
type gitServer struct {
	root string
	addr string
	srv  *http.Server
}

func startGitServer(t *testing.T, root, addr string) *gitServer {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git --exec-path failed: no http-backend")
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git http-backend is not available (%s): the network test needs it", backend)
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	for range 50 { // the address may take a moment to be free again
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, err)
	h := &cgi.Handler{Path: backend, Root: "/", Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	s := &gitServer{root: root, addr: ln.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

func (s *gitServer) stop() { _ = s.srv.Close() }

// TestOutageOverHTTP: two hosts talk to the remote over HTTP (git
// http-backend on loopback). The server stops mid-run: asks still succeed,
// reported unsynced, kept in the outbox. It comes back: agentx sync
// delivers every one of them, nothing lost, nothing twice, ids dense.
func TestOutageOverHTTP(t *testing.T) {
	agentxBin(t)
	root := t.TempDir()
	srv := startGitServer(t, root, "")
	defer func() { srv.stop() }()
	w := newWorld(t, 2, "", "")
	// Serve the world's bare repository: move it under the server's root.
	require.NoError(t, os.Rename(w.bare, filepath.Join(root, "remote.git")))
	w.bare = filepath.Join(root, "remote.git")
	for _, h := range w.hosts {
		git(t, h, "remote", "set-url", "origin", "http://"+srv.addr+"/remote.git")
	}
	ask := func(h int, q string) (string, bool) {
		r := w.run(h, "", "clarify", "ask", "--issue", "3", "--from", "engineer", "--to", "architect", "--topic", q, "--question", q, "--non-blocking", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		d := data(t, r.stdout)
		return d["id"].(string), d["_unsynced"] == true
	}
	var questions []string
	var wg sync.WaitGroup
	var mu sync.Mutex
	phase := func(name string, wantUnsynced bool) {
		for h := range 2 {
			for p := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range 3 {
						q := fmt.Sprintf("%s-h%d-p%d-k%d", name, h, p, k)
						_, unsynced := ask(h, q)
						assert.Equal(t, wantUnsynced, unsynced, q)
						mu.Lock()
						questions = append(questions, q)
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
	}
	phase("online", false)
	srv.stop()
	phase("outage", true)
	r := w.run(0, "", "sync", "--status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var st struct {
		Data struct {
			Pending []struct {
				Changes []struct{ Message, Why string }
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	require.Len(t, st.Data.Pending, 1)
	// two asks that met at the issue's lock are one change (the holder
	// made the other's question in its write): count the questions
	asked := 0
	for _, c := range st.Data.Pending[0].Changes {
		asked += strings.Count(c.Message, " asked by ")
	}
	assert.Equal(t, 6, asked, "host 0's six asks of the outage wait in its outbox: %+v", st.Data.Pending[0].Changes)
	r = w.run(0, "", "sync")
	assert.Equal(t, 1, r.code, "sync while the server is down: exit 1, outbox kept")
	srv = startGitServer(t, root, srv.addr)
	for h := range 2 {
		r := w.run(h, "", "sync", "--json")
		require.Equal(t, 0, r.code, r.stderr)
	}
	for h := range 2 {
		r := w.run(h, "", "sync", "--status", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		mark, _ := filepath.Glob(filepath.Join(w.hosts[h], ".agentx", "state", "remote", "outbox", "*"))
		assert.Empty(t, mark, "host %d has nothing pending", h)
	}
	last := checkChain(t, w.chain(3))
	seen := map[string]int{}
	for _, c := range last.Clarifications {
		seen[c.Topic]++
	}
	assert.Len(t, last.Clarifications, len(questions))
	for _, q := range questions {
		assert.Equal(t, 1, seen[q], "%s delivered exactly once", q)
	}
}

// TestOneMachineRunsNoGit: without [remote], asking, answering and the
// gate run no git command at all (a git on PATH that records its calls
// records none).
func TestOneMachineRunsNoGit(t *testing.T) {
	bin := agentxBin(t)
	dir := t.TempDir()
	fake := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.MkdirAll(fake, 0o755))
	calls := filepath.Join(dir, "git-calls")
	require.NoError(t, os.WriteFile(filepath.Join(fake, "git"), []byte("#!/bin/sh\necho \"$@\" >> "+calls+"\nexit 1\n"), 0o755))
	env := append(os.Environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"), "AGENTX_AGENT=")
	for _, args := range [][]string{
		{"init"},
		{"clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "t", "--question", "q"},
		{"clarify", "answer", "CLR-1-001", "--from", "architect", "--body", "a"},
		{"ready", "--issue", "1"},
		{"sync", "--status"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
	}
	assert.NoFileExists(t, calls, "no git command ran")
}

// gitCalls puts a git on PATH for host runs that records each command
// agentx runs (its subcommand) and runs the real one; calls returns and
// forgets what it recorded.
func gitCalls(t *testing.T) (env []string, calls func() []string) {
	real, err := exec.LookPath("git")
	require.NoError(t, err)
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script := "#!/bin/sh\nfor a in \"$@\"; do case $skip in 1) skip=;; *) case $a in -C|-c) skip=1;; *) echo \"$a\" >> '" + log + "'; break;; esac;; esac; done\nexec '" + real + "' \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755))
	env = []string{"AGENTX_NO_MONITOR=1", "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
	return env, func() []string {
		data, _ := os.ReadFile(log)
		_ = os.Remove(log)
		return strings.Fields(string(data))
	}
}

// TestUncontendedAskPushesOnly: an ask on an issue this host wrote last
// runs one git command, push (git's settings as a process before read
// them, the commit's objects written by agentx, nothing fetched, and the
// push moves the local ref itself; the first ask on a host, and the first
// after git's configuration changed, read the settings with git config);
// after another host's change it tries
// the push, fetches, and asks again on the shared ledger; ids stay dense
// and every host's local ref is the remote's.
func TestUncontendedAskPushesOnly(t *testing.T) {
	w := newWorld(t, 2, "", "")
	env, calls := gitCalls(t)
	ask := func(i int, topic string) string {
		t.Helper()
		r := w.runEnv(i, env, "", "clarify", "ask", "--issue", "3", "--from", "engineer", "--to", "architect", "--topic", topic, "--question", topic+"?", "--non-blocking", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		return data(t, r.stdout)["id"].(string)
	}
	// git's settings, as git config found them, are kept for the next
	// process unless a file they come from changed too shortly
	// before: the hosts' configuration files were written just now
	past := time.Now().Add(-time.Hour)
	for _, h := range w.hosts {
		require.NoError(t, os.Chtimes(filepath.Join(h, ".git", "config"), past, past))
	}
	assert.Equal(t, "CLR-3-001", ask(0, "first"))
	assert.Contains(t, calls(), "config", "the first ask on a host reads git's settings")
	assert.Equal(t, "CLR-3-002", ask(0, "second"))
	assert.Equal(t, []string{"push"}, calls(), "an uncontended ask")
	local := func(i int) string { return git(t, w.hosts[i], "rev-parse", w.ref(3)) }
	assert.Equal(t, git(t, w.bare, "rev-parse", w.ref(3)), local(0), "the push moved the local ref")

	assert.Equal(t, "CLR-3-003", ask(1, "other host's"))
	calls()
	assert.Equal(t, "CLR-3-004", ask(0, "after the other host's"))
	got := calls()
	t.Logf("after another host's change: %v", got)
	assert.Equal(t, []string{"push", "fetch"}, got[:2], "tried on the copy, refused, fetched")
	assert.Contains(t, got[2:], "push", "%v", got)
	assert.NotContains(t, got, "fast-import", "%v", got)
	assert.Equal(t, git(t, w.bare, "rev-parse", w.ref(3)), local(0))
	assert.Equal(t, []string{"CLR-3-001 first", "CLR-3-002 second", "CLR-3-003 other host's", "CLR-3-004 after the other host's"}, w.topics(0, 3))

	// The other host answers: its read of the id brings the question in
	// (one fetch), and the answer is pushed on that copy, not fetched again.
	r := w.runEnv(1, env, "architect", "clarify", "answer", "CLR-3-004", "--body", "yes", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	got = calls()
	count := func(cmd string) int {
		return len(slices.DeleteFunc(slices.Clone(got), func(c string) bool { return c != cmd }))
	}
	assert.Equal(t, 1, count("fetch"), "%v", got)
	assert.Equal(t, 1, count("push"), "%v", got)

	// A change to git's configuration is seen by the next write.
	git(t, w.hosts[0], "config", "commit.gpgsign", "false")
	assert.Equal(t, "CLR-3-005", ask(0, "after a change of settings"))
	assert.Contains(t, calls(), "config")

	// A waiter a killed process left in the issue's queue: sync removes
	// it; a live one stays.
	head := git(t, w.bare, "rev-parse", w.ref(3))
	stale := fmt.Sprintf("refs/agentx/clarifications-queue/issue-3/%013d-1-gone", time.Now().Add(-time.Minute).UnixMilli())
	live := fmt.Sprintf("refs/agentx/clarifications-queue/issue-3/%013d-2-alive", time.Now().UnixMilli())
	git(t, w.bare, "update-ref", stale, head)
	git(t, w.bare, "update-ref", live, head)
	require.Equal(t, 0, w.run(0, "", "sync").code)
	assert.Equal(t, live, queueLeft(t, w.bare))
}

// queueLeft lists the refs left in the queues of the repository dir (the
// waiters and intents), one a line, but the intents' marks, which stay.
func queueLeft(t *testing.T, dir string) string {
	t.Helper()
	var left []string
	for _, ref := range strings.Fields(git(t, dir, "for-each-ref", "--format=%(refname)", "refs/agentx/clarifications-queue/")) {
		if !strings.HasSuffix(ref, "/mark") {
			left = append(left, ref)
		}
	}
	return strings.Join(left, "\n")
}
