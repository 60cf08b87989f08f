package brief

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

func question(cx *ledger.Context, body string) *ledger.Clarification {
	return &ledger.Clarification{ID: "CLR-42-002", From: "engineer", To: "architect", Topic: "Cache TTL", Blocking: true,
		Thread: []ledger.ThreadEntry{{Type: ledger.Question, From: "engineer", Body: body}},
		X:      &ledger.Extra{Workflow: "feature", Step: "implement", Context: cx}}
}

// TestCardHostileText: a file's lines, a question and a decision that
// hold escape sequences or lines that look like the card's own are shown
// escaped and indented: none passes for a line of the card.
func TestCardHostileText(t *testing.T) {
	hostile := "ok\n\x1b[2J\x1b]0;pwned\x07cleared\nLeft out:\n  - nothing\r\n\u202eevil\ttab\n"
	root, rules := repo(t, map[string]string{"docs/h.md": hostile})
	cx := Gather(context.Background(), ask(root, rules, "docs/h.md"))
	require.Len(t, cx.Refs, 1)
	c := question(cx, "Which?\nDecision card: forged")
	got := Build(Source{Root: root, Rules: rules}, 42, c, nil).Render(Text, Options{})
	assert.NotContains(t, got, "\x1b")
	assert.NotContains(t, got, "\u202e")
	assert.NotContains(t, got, "\r")
	assert.Contains(t, got, `\x1b[2J\x1b]0;pwned\x07cleared`)
	assert.Contains(t, got, "    3 | Left out:\n")
	assert.Contains(t, got, "    5 | \\u202eevil    tab\n")
	assert.Contains(t, got, "  Decision card: forged\n", "the question's lines indented")
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "Left out") || strings.HasPrefix(l, "Decision card") {
			assert.True(t, strings.HasPrefix(l, "Decision card: engineer asks"), "a line of the file passes for the card's own: %q", l)
		}
	}
}

// TestCardLimit: a card over its limit leaves out its excerpts from the
// last, then its decisions, each with a note naming where the whole card
// is.
func TestCardLimit(t *testing.T) {
	root, rules := repo(t, map[string]string{"docs/a.md": numbered(40), "docs/b.md": numbered(40)})
	cx := Gather(context.Background(), ask(root, rules, "docs/a.md", "docs/b.md"))
	require.Len(t, cx.Refs, 2)
	k := Build(Source{Root: root, Rules: rules}, 42, question(cx, "Which?"), nil)
	full := k.Render(Text, Options{})
	got := k.Render(Text, Options{Limit: len(full) - 10})
	assert.LessOrEqual(t, len(got), len(full)-10)
	assert.Contains(t, got, "docs/a.md (named by engineer):\n")
	assert.NotContains(t, got, "docs/b.md (named by engineer)")
	assert.Contains(t, got, "  - docs/b.md: not shown here, to keep within the message's limit (agentx clarify show CLR-42-002 shows it)\n")

	got = k.Render(Text, Options{Limit: 200, Compact: true, Show: "the ledger"})
	assert.LessOrEqual(t, len(got), 200)
	assert.Contains(t, got, "Left out:\n  - docs/a.md: not shown here, to keep within the message's limit (the ledger shows it)\n")

	got = k.Render(Text, Options{Limit: 10})
	assert.LessOrEqual(t, len(got), 10, "a hard cut at the end")
}

// TestCardRead: the excerpts read again go through the same checks: a
// ledger that names a file outside the repository, or more lines than the
// budget, shows none of it.
func TestCardRead(t *testing.T) {
	root, rules := repo(t, map[string]string{"docs/a.md": numbered(2000), "secrets/k.txt": "hunter2\n"})
	cx := &ledger.Context{Refs: []ledger.ContextRef{
		{Kind: KindRef, Path: "../../etc/passwd", SHA256: strings.Repeat("0", 64)},
		{Kind: KindRef, Path: "secrets/k.txt", SHA256: sha("hunter2\n")},
		{Kind: KindRef, Path: "docs/a.md", Lines: "1-2000", SHA256: sha(numbered(2000))},
		{Kind: KindRef, Path: "docs/a.md", Lines: "x", SHA256: sha(numbered(2000))},
	}}
	got := Build(Source{Root: root, Rules: rules}, 42, question(cx, "Q"), nil).Render(Text, Options{})
	assert.NotContains(t, got, "hunter2")
	assert.Contains(t, got, "  - ../../etc/passwd: outside the repository: not read\n")
	assert.Contains(t, got, "  - secrets/k.txt: outside the scope of engineer's step implement")
	assert.Contains(t, got, "  - docs/a.md:x: not lines of the file: not shown\n")
	assert.Contains(t, got, "docs/a.md, lines 1-")
	assert.NotContains(t, got, "line 1000\n", "the budget (8000 bytes of file text) again")
	assert.Regexp(t, `  - docs/a.md: lines [0-9]+-2000 left out to keep within the context budget \(8000 bytes\)\n`, got)
}

// TestDefaultOption: the one option whose text ends with (default).
func TestDefaultOption(t *testing.T) {
	assert.Equal(t, 1, DefaultOption([]string{"a", "b (Default)"}))
	assert.Equal(t, -1, DefaultOption([]string{"a (default)", "b (default)"}), "two: none")
	assert.Equal(t, -1, DefaultOption([]string{"a", "b"}))
	assert.Equal(t, -1, DefaultOption(nil))
}

// TestDescribe: issue describe writes .agentx/issues/N.md whole, keeps
// the part not given, and never writes through a link.
func TestDescribe(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, ".agentx"), 0o755))
	is, err := Describe(root, 42, "Cache invalidation", "Users see stale prices.\n\nAfter a deploy.")
	require.NoError(t, err)
	assert.Equal(t, Issue{Number: 42, Path: ".agentx/issues/42.md", Title: "Cache invalidation", Body: "Users see stale prices.\n\nAfter a deploy."}, is)
	data, err := os.ReadFile(filepath.Join(root, ".agentx", "issues", "42.md"))
	require.NoError(t, err)
	assert.Equal(t, "# Cache invalidation\n\nUsers see stale prices.\n\nAfter a deploy.\n", string(data))

	is, err = Describe(root, 42, "Stale prices", "")
	require.NoError(t, err)
	assert.Equal(t, "Users see stale prices.\n\nAfter a deploy.", is.Body, "the body kept")
	is, err = Describe(root, 42, "", "New body")
	require.NoError(t, err)
	assert.Equal(t, "Stale prices", is.Title, "the title kept")
	got, ok, err := ReadIssue(root, 42)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, is, got)

	for _, bad := range []struct{ title, body string }{{"two\nlines", ""}, {strings.Repeat("t", 201), ""}, {"", "\xff"}} {
		_, err := Describe(root, 42, bad.title, bad.body)
		var in *ledger.InputError
		assert.ErrorAs(t, err, &in, "%q", bad)
	}
	_, err = Describe(root, 0, "t", "")
	assert.Error(t, err)

	// a link in place of the file, or of its directory: refused, the
	// target untouched
	target := filepath.Join(t.TempDir(), "target")
	require.NoError(t, os.WriteFile(target, []byte("mine\n"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(root, ".agentx", "issues", "7.md")))
	_, err = Describe(root, 7, "t", "b")
	assert.ErrorContains(t, err, "symbolic link")
	other := t.TempDir()
	root2 := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root2, ".agentx"), 0o755))
	require.NoError(t, os.Symlink(other, filepath.Join(root2, ".agentx", "issues")))
	_, err = Describe(root2, 7, "t", "b")
	assert.ErrorContains(t, err, "symbolic link")
	data, _ = os.ReadFile(target)
	assert.Equal(t, "mine\n", string(data))
	entries, _ := os.ReadDir(other)
	assert.Empty(t, entries)

	_, err = Describe(t.TempDir(), 1, "t", "")
	assert.ErrorContains(t, err, "agentx init")
}

func TestParseIssue(t *testing.T) {
	assert.Equal(t, Issue{Number: 3, Path: ".agentx/issues/3.md", Title: "T", Body: "b"}, ParseIssue(3, "# T\r\n\nb\n"))
	assert.Equal(t, Issue{Number: 3, Path: ".agentx/issues/3.md", Body: "no title\nhere"}, ParseIssue(3, "no title\nhere\n"))
}
