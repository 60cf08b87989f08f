package remote_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtectHook runs the update hook docs/remote.md shows in a real
// bare repository: refs/agentx/* may be created and moved forward, never
// moved back by a force push nor deleted by git push --mirror from a clone
// without them; other refs are left alone.
func TestProtectHook(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	bare := filepath.Join(root, "remote.git")
	git(t, root, "init", "--quiet", "--bare", bare)
	hook, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "agentx-refs-update-hook.sh"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bare, "hooks", "update"), hook, 0o755))

	host := filepath.Join(root, "host")
	git(t, root, "init", "--quiet", host)
	git(t, host, "remote", "add", "origin", bare)
	commit := func(msg string, parents ...string) string {
		args := []string{"-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-m", msg}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		return git(t, host, args...)
	}
	push := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", host, "push", "--porcelain"}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	const ref = "refs/agentx/clarifications/issue-1"
	one := commit("one")
	two := commit("two", one)
	other := commit("other")
	_, err = push("origin", one+":"+ref)
	require.NoError(t, err, "created")
	_, err = push("origin", two+":"+ref)
	require.NoError(t, err, "moved forward")

	out, err := push("--force", "origin", one+":"+ref)
	assert.Error(t, err, "moved back: %s", out)
	assert.Contains(t, out, "does not descend from")
	out, err = push("--force", "origin", other+":"+ref)
	assert.Error(t, err, "rewritten: %s", out)

	git(t, host, "update-ref", "refs/heads/main", other)
	out, err = push("--mirror", "origin")
	assert.Contains(t, out, "is never deleted", "a mirror push from a clone without refs/agentx/*")
	assert.Error(t, err)
	assert.Equal(t, two, git(t, bare, "rev-parse", ref), "the ledger's ref is untouched")
	assert.Equal(t, other, git(t, bare, "rev-parse", "refs/heads/main"), "other refs pass")

	// Waiters come and go.
	const waiter = "refs/agentx/clarifications-queue/issue-1/1795831167008-1-host"
	_, err = push("origin", two+":"+waiter)
	require.NoError(t, err, "a waiter joins")
	_, err = push("origin", ":"+waiter)
	require.NoError(t, err, "and leaves")

	// A republished chain descends from both: it passes.
	merged := commit("republished", other, two)
	_, err = push("--force", "origin", merged+":"+ref)
	assert.NoError(t, err)
	assert.True(t, strings.HasPrefix(git(t, bare, "rev-parse", ref), merged))
}

// TestIntentRefused: a remote whose rules refuse the intents' refs (a
// hook) still takes a contended ask: the ask, its intent refused, is made
// as a transaction on the shared ledger, published (not left in the
// outbox), under the next id.
func TestIntentRefused(t *testing.T) {
	w := newWorld(t, 2, "", "")
	hook := "#!/bin/sh\ncase $1 in refs/agentx/clarifications-queue/*/intent/*) echo 'no intents here' >&2; exit 1 ;; esac\nexit 0\n"
	require.NoError(t, os.WriteFile(filepath.Join(w.bare, "hooks", "update"), []byte(hook), 0o755))
	ask := func(i int, topic string) result {
		t.Helper()
		r := w.run(i, "", "clarify", "ask", "--issue", "4", "--from", "engineer", "--to", "architect", "--topic", topic, "--question", topic+"?", "--non-blocking", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		return r
	}
	ask(0, "one")
	ask(1, "two")
	ask(0, "three") // its try on the copy refused: the issue is contended from now on
	r := ask(0, "four")
	assert.NotContains(t, r.stdout, "unsynced", "published, not kept in the outbox")
	assert.Equal(t, "CLR-4-004", data(t, r.stdout)["id"])
	assert.Equal(t, []string{"CLR-4-001 one", "CLR-4-002 two", "CLR-4-003 three", "CLR-4-004 four"}, w.topics(0, 4))
	assert.Empty(t, queueLeft(t, w.bare))
}
