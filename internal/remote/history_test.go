package remote_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/remote"
)

// ask asks a question on issue from host i and returns its id.
func (w *world) ask(i, issue int, topic string, blocking bool) string {
	t := w.t
	t.Helper()
	args := []string{"clarify", "ask", "--issue", fmt.Sprint(issue), "--from", "engineer", "--to", "architect", "--topic", topic, "--question", topic + "?", "--json"}
	if !blocking {
		args = append(args, "--non-blocking")
	}
	r := w.run(i, "", args...)
	require.Equal(t, 0, r.code, r.stderr)
	return data(t, r.stdout)["id"].(string)
}

// topics lists host i's local copy of issue: id and topic, in order.
func (w *world) topics(i, issue int) []string {
	t := w.t
	t.Helper()
	r := w.run(i, "", "clarify", "list", "--issue", fmt.Sprint(issue), "--all", "--offline", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var doc struct {
		Data []struct{ ID, Topic string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	var out []string
	for _, c := range doc.Data {
		out = append(out, c.ID+" "+c.Topic)
	}
	return out
}

func (w *world) ref(issue int) string {
	return fmt.Sprintf("refs/agentx/clarifications/issue-%d", issue)
}

// TestRewoundRefIsRefused: host 0 asks three questions; the remote's ref is
// moved back to the first (a restored backup, a force push from an older
// clone); host 1 asks and is given CLR-5-002. Host 0 refuses the rewound
// ref (exit 7 naming both commits), keeps its copy, records an event, and
// doctor reports it; sync --republish puts its chain back with host 1's
// question kept as CLR-5-004, which host 1 then adopts. No record is lost
// and no id names two questions.
func TestRewoundRefIsRefused(t *testing.T) {
	w := newWorld(t, 2, "", "")
	w.ask(0, 5, "first", true)
	first := git(t, w.bare, "rev-parse", w.ref(5))
	require.Equal(t, 0, w.run(1, "", "sync").code)
	w.ask(0, 5, "second", true)
	w.ask(0, 5, "third", true)
	settled := git(t, w.bare, "rev-parse", w.ref(5))

	git(t, w.bare, "update-ref", w.ref(5), first) // the backup is restored
	assert.Equal(t, "CLR-5-002", w.ask(1, 5, "other", true), "host 1 knows only the first")
	rewound := git(t, w.bare, "rev-parse", w.ref(5))

	r := w.run(0, "", "clarify", "ask", "--issue", "5", "--from", "engineer", "--to", "architect", "--topic", "fourth", "--question", "fourth?")
	require.Equal(t, 7, r.code, r.stderr)
	assert.Contains(t, r.stderr, rewound)
	assert.Contains(t, r.stderr, settled)
	assert.Contains(t, r.stderr, "sync --republish")
	assert.Equal(t, []string{"CLR-5-001 first", "CLR-5-002 second", "CLR-5-003 third"}, w.topics(0, 5), "host 0 keeps its copy")
	assert.Equal(t, rewound, git(t, w.bare, "rev-parse", w.ref(5)), "nothing written")

	r = w.run(0, "", "ready", "--issue", "5")
	assert.Equal(t, 7, r.code, "the gate fails closed: %s", r.stderr)
	r = w.run(0, "", "sync")
	assert.Equal(t, 7, r.code, "sync fails while a ref stays refused: %s", r.stderr)
	assert.Contains(t, r.stderr, "sync --republish")
	r = w.run(0, "", "doctor")
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stdout+r.stderr, "moved back or rewritten")
	evs := w.events(0)
	assert.Equal(t, 1, refusals(evs), "one event per refusal, however often it is met: %v", evs)

	r = w.run(0, "", "sync", "--republish", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "CLR-5-002 as CLR-5-004")
	want := []string{"CLR-5-001 first", "CLR-5-002 second", "CLR-5-003 third", "CLR-5-004 other"}
	head := git(t, w.bare, "rev-parse", w.ref(5))
	assert.Equal(t, settled, git(t, w.bare, "rev-parse", head+"^1"), "this host's chain is the first parent")
	assert.Equal(t, rewound, git(t, w.bare, "rev-parse", head+"^2"), "the other chain the second")
	assert.Equal(t, want, w.topics(0, 5))

	// Host 1, which settled on the rewound chain, adopts the merge.
	require.Equal(t, 0, w.run(1, "", "sync").code)
	assert.Equal(t, want, w.topics(1, 5))
	r = w.run(1, "", "sync", "--status", "--json")
	assert.Contains(t, r.stdout, `"as": "CLR-5-004"`, "host 1 is told its question's id now: %s", r.stdout)
	assert.Equal(t, "CLR-5-005", w.ask(1, 5, "fifth", true), "ids are never handed out again")
	r = w.run(0, "", "doctor")
	assert.NotContains(t, r.stdout, "moved back or rewritten", "the refusal is over")
}

// TestMirrorPushIsRefused: git push --mirror from a clone that has no
// refs/agentx/* deletes the shared ledgers. The host that holds two
// blocking questions refuses (exit 7), its gate is not READY, and it
// keeps its copy; a host with no copy starts the issue afresh; sync
// --republish puts the two back with the fresh host's question after them.
func TestMirrorPushIsRefused(t *testing.T) {
	w := newWorld(t, 2, "", "")
	w.ask(0, 70, "one", true)
	w.ask(0, 70, "two", true)
	held := git(t, w.bare, "rev-parse", w.ref(70))

	clone := filepath.Join(t.TempDir(), "clone")
	git(t, filepath.Dir(clone), "clone", "--quiet", w.bare, clone)
	git(t, clone, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "--quiet", "--allow-empty", "-m", "work")
	git(t, clone, "push", "--quiet", "--mirror", "origin")
	assert.Empty(t, git(t, w.bare, "for-each-ref", "refs/agentx/"), "the mirror push deleted them")

	r := w.run(0, "", "ready", "--issue", "70")
	assert.Equal(t, 7, r.code, r.stderr)
	assert.Contains(t, r.stderr, "was deleted on the remote")
	assert.Contains(t, r.stderr, held)
	r = w.run(0, "", "sync")
	assert.Contains(t, r.stderr, "was deleted on the remote", "a refresh reports it too")
	assert.Equal(t, []string{"CLR-70-001 one", "CLR-70-002 two"}, w.topics(0, 70))

	assert.Equal(t, "CLR-70-001", w.ask(1, 70, "fresh", false), "a host with no copy cannot know")
	r = w.run(0, "", "ready", "--issue", "70")
	assert.Equal(t, 7, r.code, "the new chain does not descend from what host 0 holds: %s", r.stderr)

	r = w.run(0, "", "sync", "--republish")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "CLR-70-001 as CLR-70-003")
	assert.Equal(t, []string{"CLR-70-001 one", "CLR-70-002 two", "CLR-70-003 fresh"}, w.topics(0, 70))
	require.Equal(t, 0, w.run(1, "", "sync").code)
	assert.Equal(t, []string{"CLR-70-001 one", "CLR-70-002 two", "CLR-70-003 fresh"}, w.topics(1, 70))
	r = w.run(1, "", "ready", "--issue", "70")
	assert.Equal(t, 9, r.code, "two blocking questions: %s", r.stdout)
}

// forge commits on issue's ref in the bare repository a version of its
// ledger that edit made, with a host line, and returns the commit.
func (w *world) forge(issue int, host string, edit func(l map[string]any)) string {
	t := w.t
	ref := w.ref(issue)
	head := git(t, w.bare, "rev-parse", ref)
	raw := git(t, w.bare, "cat-file", "blob", head+":"+fmt.Sprintf("issue-%d.json", issue))
	var l map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &l))
	edit(l)
	data, err := json.MarshalIndent(l, "", "  ")
	require.NoError(t, err)
	tmp := filepath.Join(t.TempDir(), "ledger.json")
	require.NoError(t, os.WriteFile(tmp, data, 0o644))
	blob := git(t, w.bare, "hash-object", "-w", tmp)
	tree := gitIn(t, w.bare, "100644 blob "+blob+"\t"+fmt.Sprintf("issue-%d.json", issue)+"\n", "mktree")
	c := gitIn(t, w.bare, "forged\n\nhost: "+host+"\n", "-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", tree, "-p", head)
	git(t, w.bare, "update-ref", ref, c)
	return c
}

// TestForgedCommitIsRefused: a fast-forward commit that rewrites a past
// question and adds a person's resolution to a pending one is refused by
// every host (exit 7 naming the commit and its host), and remote log
// marks it.
func TestForgedCommitIsRefused(t *testing.T) {
	w := newWorld(t, 2, "", "")
	w.ask(0, 9, "drop", true)
	w.ask(0, 9, "keep", true)
	require.Equal(t, 0, w.run(1, "", "sync").code)
	for _, tc := range []struct {
		name string
		edit func(l map[string]any)
		why  string
	}{
		{"a rewritten question", func(l map[string]any) {
			c := l["clarifications"].([]any)[0].(map[string]any)
			c["thread"].([]any)[0].(map[string]any)["body"] = "may I drop the users table?"
		}, "rewrites thread entry 0"},
		{"a person's resolution of a pending question", func(l map[string]any) {
			c := l["clarifications"].([]any)[1].(map[string]any)
			c["status"] = "resolved"
			c["thread"] = append(c["thread"].([]any), map[string]any{"round": 1, "from": "human", "type": "resolution", "body": "ok", "timestamp": "2026-02-26T10:00:00Z"})
		}, "cannot become resolved"},
		{"a dropped question", func(l map[string]any) {
			l["clarifications"] = l["clarifications"].([]any)[:1]
		}, "may not be deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := git(t, w.bare, "rev-parse", w.ref(9))
			bad := w.forge(9, "mallory", tc.edit)
			for h := range 2 {
				r := w.run(h, "", "ready", "--issue", "9")
				assert.Equal(t, 7, r.code, "host %d: %s", h, r.stderr)
				assert.Contains(t, r.stderr, bad)
				assert.Contains(t, r.stderr, "host: mallory")
				assert.Contains(t, r.stderr, tc.why)
				assert.Equal(t, []string{"CLR-9-001 drop", "CLR-9-002 keep"}, w.topics(h, 9))
			}
			r := w.run(1, "", "remote", "log", "--issue", "9")
			assert.Contains(t, r.stdout, "[REFUSED:", r.stdout)
			evs := w.events(1)
			assert.Positive(t, refusals(evs))
			// Put the good chain back as a person would: the hosts adopt it.
			git(t, w.bare, "update-ref", w.ref(9), good)
			for h := range 2 {
				assert.Equal(t, 9, w.run(h, "", "ready", "--issue", "9").code)
			}
		})
	}
}

// gitIn runs git in dir with stdin.
func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), remote.TestGitIdentity...) // whatever the developer's git says
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// refusals counts the remote-refused events.
func refusals(evs []map[string]any) int {
	n := 0
	for _, e := range evs {
		if e["type"] == "remote-refused" {
			n++
		}
	}
	return n
}

// plant puts on issue's ref in the bare repository a commit whose tree
// mktree makes from lines (git mktree input), with blobs written from
// files: the remote as anyone who can push may leave it.
func (w *world) plant(issue int, lines string) string {
	t := w.t
	tree := gitIn(t, w.bare, lines, "mktree")
	c := gitIn(t, w.bare, "planted\n\nhost: mallory\n", "-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", tree)
	git(t, w.bare, "update-ref", w.ref(issue), c)
	return c
}

func (w *world) blob(content []byte) string {
	t := w.t
	tmp := filepath.Join(t.TempDir(), "blob")
	require.NoError(t, os.WriteFile(tmp, content, 0o644))
	return git(t, w.bare, "hash-object", "-w", tmp)
}

// TestGateFailsClosed: on a host with no local copy, ready --issue N is
// not READY when the issue's shared ledger exists but cannot be read: exit
// 7 naming the ref and the commit, with a repair hint. The whole-workspace
// ready and clarify list name the issue they could not read.
func TestGateFailsClosed(t *testing.T) {
	w := newWorld(t, 1, "", "interval = \"0s\"\n") // every read fetches
	good := w.blob([]byte(`{"issueNumber": 11, "clarifications": []}`))
	big := make([]byte, 65<<20)
	copy(big, `{"issueNumber": 11, "clarifications": [], "pad": "`)
	for i := 50; i < len(big)-2; i++ {
		big[i] = 'x'
	}
	copy(big[len(big)-2:], `"}`)
	for _, tc := range []struct {
		name, tree, why string
	}{
		{"truncated JSON", "100644 blob " + w.blob([]byte(`{"issueNumber": 11, "clarifications": [{"id": "CLR-11-001", "st`)) + "\tissue-11.json\n", "issue-11"},
		{"a symbolic link", "120000 blob " + w.blob([]byte("/etc/passwd")) + "\tissue-11.json\n", "symbolic link"},
		{"an extra entry", "100644 blob " + good + "\tissue-11.json\n100644 blob " + good + "\tz.json\n", `"z.json" besides`},
		{"over the size limit", "100644 blob " + w.blob(big) + "\tissue-11.json\n", "more than the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := w.plant(11, tc.tree)
			r := w.run(0, "", "ready", "--issue", "11")
			assert.Equal(t, 7, r.code, r.stdout+r.stderr)
			assert.NotContains(t, r.stdout, "READY")
			assert.Contains(t, r.stderr, "refs/agentx/clarifications/issue-11")
			assert.Contains(t, r.stderr, c)
			assert.Contains(t, r.stderr, tc.why)
			assert.Contains(t, r.stderr, "hint: git log")
			r = w.run(0, "", "ready")
			assert.Contains(t, r.stderr, "issue-11", "the whole-workspace ready says which issue it could not read")
			r = w.run(0, "", "clarify", "list")
			assert.Contains(t, r.stderr, "issue-11", "so does list")
		})
	}
}

// TestRequireSigned: hosts whose git signs commits (SSH keys) are adopted
// by a host with [remote] require_signed = true, which verifies each
// pulled commit with git verify-commit against its allowed-signers file;
// a host that does not sign has its commit refused there (exit 7 naming
// it).
func TestRequireSigned(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed (apt-get install openssh-client)")
	}
	w := newWorld(t, 3, "", "require_signed = true\n")
	keys := t.TempDir()
	key := filepath.Join(keys, "host0")
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "host0", "-f", key).CombinedOutput()
	require.NoError(t, err, "%s", out)
	pub, err := os.ReadFile(key + ".pub")
	require.NoError(t, err)
	allowed := filepath.Join(keys, "allowed_signers")
	require.NoError(t, os.WriteFile(allowed, []byte("agentx@* "+string(pub)), 0o644))
	git(t, w.hosts[0], "config", "gpg.format", "ssh")
	git(t, w.hosts[0], "config", "user.signingKey", key+".pub")
	git(t, w.hosts[0], "config", "commit.gpgSign", "true")
	for _, h := range w.hosts {
		git(t, h, "config", "gpg.ssh.allowedSignersFile", allowed)
	}

	w.ask(0, 4, "signed", true)
	head := git(t, w.bare, "rev-parse", w.ref(4))
	git(t, w.hosts[0], "verify-commit", head) // agentx signed it as git is configured to
	require.Equal(t, 0, w.run(1, "", "sync").code)
	r := w.run(1, "", "ready", "--issue", "4")
	assert.Equal(t, 9, r.code, "the signed question is adopted: %s", r.stderr)

	require.Equal(t, 0, w.run(2, "", "sync").code)
	w.ask(2, 4, "unsigned", true) // host 2 does not sign
	bad := git(t, w.bare, "rev-parse", w.ref(4))
	r = w.run(1, "", "ready", "--issue", "4")
	assert.Equal(t, 7, r.code, r.stderr)
	assert.Contains(t, r.stderr, bad)
	assert.Contains(t, r.stderr, "require_signed")
	assert.Equal(t, []string{"CLR-4-001 signed"}, w.topics(1, 4))
}

// TestFreshHostVerifiesTheWholeChain: a host with no copy of the issue (a
// fresh CI runner: the merge gate) checks the whole chain from its root
// before it adopts it, as a settled host checks what it pulls: a forged
// person's resolution of a pending question, or an unsigned commit under
// require_signed, is refused (exit 7 naming the commit), not READY.
func TestFreshHostVerifiesTheWholeChain(t *testing.T) {
	w := newWorld(t, 3, "", "")
	w.ask(0, 9, "drop", true)
	w.ask(0, 9, "keep", true)
	good := git(t, w.bare, "rev-parse", w.ref(9))
	// the good chain is adopted by a fresh host: its blocking questions hold it up
	r := w.run(2, "", "ready", "--issue", "9")
	assert.Equal(t, 9, r.code, "a sound chain is adopted: %s", r.stderr)

	git(t, w.bare, "update-ref", w.ref(9), good)
	bad := w.forge(9, "mallory", func(l map[string]any) {
		c := l["clarifications"].([]any)[1].(map[string]any)
		c["status"] = "resolved"
		c["thread"] = append(c["thread"].([]any), map[string]any{"round": 1, "from": "human", "type": "resolution", "body": "ok", "timestamp": "2026-02-26T10:00:00Z"})
	})
	w.forge(9, "mallory", func(l map[string]any) {}) // and a sound commit on top of it
	r = w.run(1, "", "ready", "--issue", "9")
	assert.Equal(t, 7, r.code, "the fresh host refuses the forged chain: %s %s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, bad)
	assert.Contains(t, r.stderr, "host: mallory")
	assert.Contains(t, r.stderr, "cannot become resolved")
	assert.Contains(t, r.stderr, "no copy of issue #9")
	assert.NotContains(t, r.stdout, "READY")
}
