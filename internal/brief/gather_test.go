package brief

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// repo makes a repository root with a workspace whose feature workflow
// scopes the engineer to src/ and docs/, and the files given.
func repo(t *testing.T, files map[string]string) (string, *workflow.Set) {
	t.Helper()
	root := t.TempDir()
	files[".agentx/workflows/feature.toml"] = `[workflow]
name = "feature"
[[steps]]
id = "architecture"
agent = "architect"
output = "docs/adr/ADR-{{issue_number}}.md"
[[steps]]
id = "implement"
agent = "engineer"
needs = ["architecture"]
can_clarify = ["architect"]
scope = ["src/**", "docs/**"]
`
	if _, ok := files[".agentx/config.toml"]; !ok {
		files[".agentx/config.toml"] = "default_workflow = \"feature\"\n"
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	rules, err := workflow.Load(filepath.Join(root, ".agentx"))
	require.NoError(t, err)
	return root, rules
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func ask(root string, rules *workflow.Set, refs ...string) Request {
	req := Request{Root: root, Rules: rules, Step: "implement", From: "engineer", To: "architect", Issue: 42}
	for _, s := range refs {
		r, err := ParseRef("--ref", s)
		if err != nil {
			panic(err)
		}
		req.Refs = append(req.Refs, r)
	}
	return req
}

// TestGatherHostile: every file agentx must not read is refused with a
// note that says why, and nothing of it is given; the question is asked
// all the same.
func TestGatherHostile(t *testing.T) {
	root, rules := repo(t, map[string]string{
		"docs/ok.md":      numbered(5),
		"secrets/key.txt": "hunter2\n",
		"src/code.go":     "package x\n",
	})
	outside := filepath.Join(t.TempDir(), "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("secret outside\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "docs", "link-out.md")))
	require.NoError(t, os.Symlink("../../..", filepath.Join(root, "docs", "up")))
	require.NoError(t, os.Symlink("ok.md", filepath.Join(root, "docs", "link-in.md")))
	require.NoError(t, os.Symlink("../secrets/key.txt", filepath.Join(root, "docs", "link-scope.md")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "docs", "logo.png"), []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0o644))
	big := filepath.Join(root, "docs", "big.log")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30)) // 1 GB, sparse: reading it whole would show
	require.NoError(t, f.Close())
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[remote]\nurl = https://token@host\n"), 0o644))

	for _, tt := range []struct {
		ref, why string
	}{
		{"../../etc/passwd", "../../etc/passwd: outside the repository: not read"},
		{"/etc/passwd", "/etc/passwd: outside the repository: not read"},
		{"docs/../../x", "docs/../../x: outside the repository: not read"},
		{outside, "outside the repository: not read"},
		{"docs/link-out.md", "docs/link-out.md: a symbolic link leading outside the repository: not read"},
		{"docs/up/etc/passwd", "docs/up/etc/passwd: "},
		{"docs/link-scope.md", "docs/link-scope.md: outside the scope of engineer's step implement (src/**, docs/**): not read"},
		{"secrets/key.txt", "secrets/key.txt: outside the scope of engineer's step implement (src/**, docs/**): not read"},
		{"docs/logo.png", "docs/logo.png: binary (it holds NUL bytes): not read"},
		{"docs/big.log", "docs/big.log: too large (1073741824 bytes; agentx reads at most 1048576): not read"},
		{".git/config", ".git/config: inside .git: not read"},
		{"docs", "docs: not a regular file: not read"},
		{"docs/missing.md", "docs/missing.md: not found"},
		{"docs/ok.md:50-60", "docs/ok.md:50-60: the file has 5 lines: nothing given"},
	} {
		t.Run(tt.ref, func(t *testing.T) {
			start := time.Now()
			cx := Gather(context.Background(), ask(root, rules, tt.ref))
			require.NotNil(t, cx)
			assert.Empty(t, cx.Refs, "nothing of it given")
			require.Len(t, cx.Omitted, 1)
			assert.Contains(t, cx.Omitted[0], tt.why)
			assert.Less(t, time.Since(start), 5*time.Second, "not read whole")
			k := Build(Source{Root: root, Rules: rules}, 42, &ledger.Clarification{ID: "CLR-42-001", From: "engineer", To: "architect", Topic: "t",
				X: &ledger.Extra{Step: "implement", Workflow: "feature", Context: cx}}, nil)
			card := k.Render(Text, Options{})
			assert.Contains(t, card, "Left out:\n  - ")
			assert.Contains(t, card, tt.why)
			for _, secret := range []string{"hunter2", "secret outside", "root:", "token@", "PNG"} {
				assert.NotContains(t, card, secret)
			}
		})
	}

	// a link that stays inside (and inside the scope) is followed; the
	// ledger names the file as the asker did (the lines around line 2 are
	// the whole file)
	cx := Gather(context.Background(), ask(root, rules, "docs/link-in.md:2"))
	require.Len(t, cx.Refs, 1)
	assert.Equal(t, ledger.ContextRef{Kind: KindRef, Path: "docs/link-in.md", SHA256: sha(numbered(5))}, cx.Refs[0])
	assert.Empty(t, cx.Omitted)
}

// TestGatherReadCap: a file larger than the read cap is not read, and one
// within it is; with a small cap the check is cheap to see.
func TestGatherReadCap(t *testing.T) {
	root, rules := repo(t, map[string]string{"docs/a.md": strings.Repeat("x", 100) + "\n", "docs/b.md": "small\n"})
	req := ask(root, rules, "docs/a.md", "docs/b.md")
	req.ReadCap = 50
	cx := Gather(context.Background(), req)
	require.Len(t, cx.Refs, 1)
	assert.Equal(t, "docs/b.md", cx.Refs[0].Path)
	assert.Equal(t, []string{"docs/a.md: too large (101 bytes; agentx reads at most 50): not read"}, cx.Omitted)
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestGatherStory: the excerpt around the lines named, the asked agent's
// artifact, the issue's text and the commit; what the budget leaves out
// is noted.
func TestGatherStory(t *testing.T) {
	adr := numbered(30)
	root, rules := repo(t, map[string]string{
		"docs/adr/ADR-42.md":   adr,
		".agentx/issues/42.md": "# Cache invalidation\n\nUsers see stale prices.\n",
	})
	cx := Gather(context.Background(), ask(root, rules, "docs/adr/ADR-42.md:10-20"))
	require.NotNil(t, cx)
	assert.Equal(t, []ledger.ContextRef{
		{Kind: KindRef, Path: "docs/adr/ADR-42.md", Lines: "7-23", SHA256: sha(adr)},
		{Kind: KindIssue, Path: ".agentx/issues/42.md", SHA256: sha("# Cache invalidation\n\nUsers see stale prices.\n")},
		{Kind: KindArtifact, Path: "docs/adr/ADR-42.md", SHA256: sha(adr)},
	}, cx.Refs)
	assert.Empty(t, cx.Omitted)
	assert.Empty(t, cx.Commit, "no git repository: no commit")

	c := &ledger.Clarification{ID: "CLR-42-002", From: "engineer", To: "architect", Topic: "Cache TTL", Blocking: true,
		Created: ledger.T(time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)),
		Thread:  []ledger.ThreadEntry{{Type: ledger.Question, From: "engineer", Body: "Which TTL?"}},
		X:       &ledger.Extra{Workflow: "feature", Step: "implement", Options: []string{"60 s", "5 min (default)"}, Context: cx}}
	at := ledger.T(time.Date(2026, 2, 26, 9, 0, 0, 0, time.UTC))
	later := ledger.T(time.Date(2026, 2, 26, 11, 0, 0, 0, time.UTC))
	prior := &ledger.Clarification{ID: "CLR-42-001", Topic: "Store", Status: ledger.Resolved, ResolvedAt: &at,
		Thread: []ledger.ThreadEntry{{Type: ledger.Answer, Body: "Use Redis. It is there already."}}}
	after := &ledger.Clarification{ID: "CLR-42-003", Topic: "After", Status: ledger.Resolved, ResolvedAt: &later,
		Thread: []ledger.ThreadEntry{{Type: ledger.Answer, Body: "Decided later."}}}
	k := Build(Source{Root: root, Rules: rules}, 42, c, []*ledger.Clarification{prior, c, after})
	assert.Equal(t, []Decision{{ID: "CLR-42-001", Topic: "Store", Text: "Use Redis."}}, k.Decisions, "only what was decided before it was asked")
	got := k.Render(Text, Options{})
	want := `Decision card: engineer asks architect on issue #42 · topic: Cache TTL · blocking · CLR-42-002
Question:
  Which TTL?
Options:
  1. 60 s
  2. 5 min (default) [default: engineer's proposal]
Context given with the question:
  - docs/adr/ADR-42.md, lines 7-23 (named by engineer):
     7 | line 7
`
	assert.True(t, strings.HasPrefix(got, want), got)
	for _, s := range []string{
		"    23 | line 23\n",
		"  - Issue #42: Cache invalidation (.agentx/issues/42.md):\n    | Users see stale prices.\n",
		"  - docs/adr/ADR-42.md (architect's artifact):\n     1 | line 1\n",
		"Decisions so far on issue #42 (newest first):\n  - CLR-42-001 (Store): Use Redis.\n",
	} {
		assert.Contains(t, got, s)
	}
	assert.NotContains(t, got, "Left out")
	assert.NotContains(t, got, "Decided later")

	// compact: the context alone
	compact := k.Render(Text, Options{Compact: true})
	assert.True(t, strings.HasPrefix(compact, "Context given with the question:\n"), compact)
	assert.NotContains(t, compact, "Which TTL?")

	// the file changes: the card does not show what the answerer did not see
	require.NoError(t, os.WriteFile(filepath.Join(root, "docs/adr/ADR-42.md"), []byte("rewritten\n"), 0o644))
	got = Build(Source{Root: root, Rules: rules}, 42, c, nil).Render(Text, Options{})
	assert.NotContains(t, got, "rewritten")
	assert.Contains(t, got, "  - docs/adr/ADR-42.md:7-23: changed since the question was asked (its SHA-256 differs): not shown\n")
}

// TestGatherBudget: the padding goes first, then the lines named from the
// end; a file that fits not at all is left out; each cut is a note.
func TestGatherBudget(t *testing.T) {
	root, rules := repo(t, map[string]string{
		".agentx/config.toml": "default_workflow = \"feature\"\n[context]\nbudget = 40\n",
		"docs/a.md":           numbered(20), // "line N\n": 7 or 8 bytes
		"docs/b.md":           numbered(20),
	})
	cx := Gather(context.Background(), ask(root, rules, "docs/a.md:10-14", "docs/b.md"))
	require.Len(t, cx.Refs, 1)
	assert.Equal(t, "10-14", cx.Refs[0].Lines, "the padding left out first")
	assert.Contains(t, cx.Omitted, "docs/b.md: left out to keep within the context budget (40 bytes)")

	root, rules = repo(t, map[string]string{
		".agentx/config.toml": "default_workflow = \"feature\"\n[context]\nbudget = 30\n",
		"docs/a.md":           numbered(20),
	})
	cx = Gather(context.Background(), ask(root, rules, "docs/a.md:10-14", "docs/a.md"))
	require.Len(t, cx.Refs, 1)
	assert.Equal(t, "10-12", cx.Refs[0].Lines)
	assert.Equal(t, []string{
		"docs/a.md: lines 13-14 left out to keep within the context budget (30 bytes)",
		"docs/a.md: left out to keep within the context budget (30 bytes)",
	}, cx.Omitted)

	// budget 0: no file text, every file noted
	root, rules = repo(t, map[string]string{
		".agentx/config.toml": "default_workflow = \"feature\"\n[context]\nbudget = 0\n",
		"docs/a.md":           "x\n",
	})
	cx = Gather(context.Background(), ask(root, rules, "docs/a.md"))
	assert.Empty(t, cx.Refs)
	assert.Equal(t, []string{"docs/a.md: left out to keep within the context budget (0 bytes)"}, cx.Omitted)
}

// TestGatherNothing: a question with no file named, no artifact, no issue
// text and no git repository records no context.
func TestGatherNothing(t *testing.T) {
	root, rules := repo(t, map[string]string{})
	assert.Nil(t, Gather(context.Background(), ask(root, rules)))
	assert.Nil(t, Gather(context.Background(), Request{From: "a", To: "b"}), "no root, no rules")
}

// TestCommit: the asker's commit, in a git repository with one.
func TestCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, rules := repo(t, map[string]string{"docs/a.md": "a\n"})
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	assert.Empty(t, Commit(context.Background(), root), "no commit yet")
	git("add", "docs/a.md")
	git("commit", "-q", "-m", "a")
	head := git("rev-parse", "HEAD")
	cx := Gather(context.Background(), ask(root, rules))
	require.NotNil(t, cx)
	assert.Equal(t, head, cx.Commit)
	got, ok := headFromFiles(root)
	assert.True(t, ok, "read from the ref file, no git process")
	assert.Equal(t, head, got)

	// packed, then detached: the same commit, still from the files
	git("pack-refs", "--all")
	got, ok = headFromFiles(root)
	assert.True(t, ok)
	assert.Equal(t, head, got, "from packed-refs")
	git("checkout", "-q", "--detach")
	got, ok = headFromFiles(root)
	assert.True(t, ok)
	assert.Equal(t, head, got, "a detached HEAD")
	assert.Equal(t, head, Commit(context.Background(), root))
}
