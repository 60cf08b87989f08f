package remote_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/remote"
)

// events reads host i's event log as agentx events --json prints it.
func (w *world) events(i int) []map[string]any {
	w.t.Helper()
	r := w.run(i, "", "events", "--offline", "--json")
	require.Equal(w.t, 0, r.code, r.stderr)
	var doc struct{ Data []map[string]any }
	require.NoError(w.t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	return doc.Data
}

// count counts the events of type t for id, pulled from the remote or not.
func count(evs []map[string]any, t, id string, pulled bool) int {
	n := 0
	for _, e := range evs {
		if e["type"] == t && e["clarificationId"] == id && (e["via"] == "remote") == pulled {
			n++
		}
	}
	return n
}

// TestPulledAnswerReachesInbox: host A asks, host B answers; A's inbox (the
// Claude Code hook) delivers the answer once, and A's event log has it
// once, marked as pulled from the remote with B's host, even with several
// processes on A fetching at once. Each host logs as its own only the
// changes it made.
func TestPulledAnswerReachesInbox(t *testing.T) {
	w := newWorld(t, 2, "", "interval = \"0s\"\n")
	r := w.run(0, "engineer", "clarify", "ask", "--issue", "42", "--to", "architect", "--topic", "Cache", "--question", "Per-key TTL?", "--non-blocking")
	require.Equal(t, 0, r.code, r.stderr)
	r = w.run(1, "architect", "clarify", "answer", "CLR-42-001", "--body", "Per key, five minutes.")
	require.Equal(t, 0, r.code, r.stderr)
	b := w.events(1)
	assert.Equal(t, 1, count(b, "clarification-requested", "CLR-42-001", true), "B pulled A's question")
	assert.Equal(t, 1, count(b, "clarification-answered", "CLR-42-001", false), "B's own answer")
	assert.Zero(t, count(b, "clarification-answered", "CLR-42-001", true))

	// several processes on A fetch at once: the answer is logged once
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := w.run(0, "", "sync")
			assert.Equal(t, 0, r.code, r.stdout+r.stderr)
		}()
	}
	wg.Wait()
	a := w.events(0)
	assert.Equal(t, 1, count(a, "clarification-requested", "CLR-42-001", false))
	assert.Zero(t, count(a, "clarification-requested", "CLR-42-001", true), "A's own question is not pulled back")
	require.Equal(t, 1, count(a, "clarification-answered", "CLR-42-001", true))
	for _, e := range a {
		if e["via"] == "remote" {
			host, _ := os.Hostname()
			if host != "" && !strings.ContainsAny(host, " <>") {
				assert.Equal(t, host, e["host"], "the host of B's commit")
			}
			assert.Equal(t, "architect", e["by"])
		}
	}

	// A's inbox delivers the answer, once
	r = w.run(0, "engineer", "inbox", "--agent", "engineer", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var doc struct {
		Data struct {
			Items []struct{ Kind, ID, Body string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	require.Len(t, doc.Data.Items, 1, r.stdout)
	assert.Equal(t, "answer", doc.Data.Items[0].Kind)
	assert.Equal(t, "Per key, five minutes.", doc.Data.Items[0].Body)
	r = w.run(0, "engineer", "inbox", "--agent", "engineer", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	assert.Empty(t, doc.Data.Items, "delivered once")

	// the inbox fetches by itself (the hook): B resolves, A's event log has it
	r = w.run(1, "engineer", "clarify", "resolve", "CLR-42-001", "--body", "Agreed.")
	require.Equal(t, 0, r.code, r.stderr)
	r = w.run(0, "engineer", "inbox", "--agent", "engineer", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, 1, count(w.events(0), "clarification-resolved", "CLR-42-001", true), "the inbox fetched")
}

// TestLogNeutralises: a chain's commits come from the remote; Log keeps a
// message as one neutralised line and a host only if it is a plain name,
// and Hosts reads who made each clarification's newest change.
func TestLogNeutralises(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git(t, dir, "init", "--quiet")
	commit := func(parent, msg string) string {
		args := []string{"commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-m", msg}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), remote.TestGitIdentity...)
		out, err := cmd.Output()
		require.NoError(t, err)
		return strings.TrimSpace(string(out))
	}
	first := commit("", "CLR-1-001 asked by engineer of architect\n\nhost: laptop")
	second := commit(first, "CLR-1-001 answered by \x1b[2J\x1b]8;;http://x\x07architect\rSPOOF\n\nhost: evil host\x1b[31m")
	git(t, dir, "update-ref", "refs/agentx/clarifications/issue-1", second)
	g := &remote.Git{Dir: dir, Remote: "origin", Refs: "refs/agentx/clarifications", Timeout: 5 * time.Second}

	cs, more, err := g.Log(context.Background(), 1, 10)
	require.NoError(t, err)
	assert.False(t, more)
	require.Len(t, cs, 2)
	assert.Equal(t, "laptop", cs[1].Host)
	assert.Empty(t, cs[0].Host, "not a plain name")
	assert.NotContains(t, cs[0].Message, "\x1b")
	assert.NotContains(t, cs[0].Message, "\r")
	assert.True(t, strings.HasPrefix(cs[0].Message, "CLR-1-001 answered by "), cs[0].Message)

	cs, more, err = g.Log(context.Background(), 1, 1)
	require.NoError(t, err)
	assert.True(t, more)
	assert.Len(t, cs, 1)

	hosts, err := g.Hosts(context.Background(), 1, "", second)
	require.NoError(t, err)
	assert.Empty(t, hosts, "the newest change's host is not a plain name: unknown, not the older one's")
	hosts, err = g.Hosts(context.Background(), 1, "", first)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"CLR-1-001": "laptop"}, hosts)
	hosts, err = g.Hosts(context.Background(), 1, first, second)
	require.NoError(t, err)
	assert.Empty(t, hosts)
	yes, err := g.Descends(context.Background(), second, first)
	require.NoError(t, err)
	assert.True(t, yes)
	yes, err = g.Descends(context.Background(), first, second)
	require.NoError(t, err)
	assert.False(t, yes)
}
