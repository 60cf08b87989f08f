package router

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/ledger"
)

// TestAskCarriesContext: a question records what it carried (the lines
// named, the architect's ADR, the text) and its responder's prompt
// shows them, with a decision made on the issue before; a file outside the
// repository is a note, and none of it reaches the prompt.
func TestAskCarriesContext(t *testing.T) {
	h, fr := newTestHub(t, "[agents.architect]\ncommand = [\"respond\"]\ntimeout = \"5s\"\n")
	write := func(name, text string) {
		p := filepath.Join(h.Dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	var adr strings.Builder
	for i := 1; i <= 30; i++ {
		adr.WriteString("ADR line " + string(rune('A'+i%26)) + "\n")
	}
	write("docs/adr/ADR-42.md", adr.String())
	write(".agentx/issues/42.md", "# Local database\n\nDevelopers need a database that starts in a second.\n")
	ctx := context.Background()

	fr.results = []fakeResult{{answer: "Use the repository pattern."}, {answer: "SQLite."}}
	first, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	_, err = h.Resolve(ctx, first.ID, "engineer", "Use the repository pattern. SQLite in dev.")
	require.NoError(t, err)

	req := askReq("engineer", "architect")
	req.Question = "Which driver?"
	for _, s := range []string{"docs/adr/ADR-42.md:10-20", "../../etc/passwd"} {
		r, err := brief.ParseRef("--ref", s)
		require.NoError(t, err)
		req.Refs = append(req.Refs, r)
	}
	rec, err := h.Ask(ctx, req)
	require.NoError(t, err)
	cx := rec.X.Context
	require.NotNil(t, cx)
	require.Len(t, cx.Refs, 3)
	assert.Equal(t, ledger.ContextRef{Kind: "ref", Path: "docs/adr/ADR-42.md", Lines: "7-23", SHA256: cx.Refs[2].SHA256}, cx.Refs[0])
	assert.Equal(t, "issue", cx.Refs[1].Kind)
	assert.Equal(t, "artifact", cx.Refs[2].Kind)
	assert.Len(t, cx.Refs[2].SHA256, 64)
	assert.Equal(t, []string{"../../etc/passwd: outside the repository: not read"}, cx.Omitted)
	assert.Equal(t, "Which driver?", rec.Thread[0].Body, "the question itself is unchanged")

	got, err := h.Get(rec.ID)
	require.NoError(t, err)
	assert.Equal(t, cx, got.X.Context, "recorded in the ledger")

	require.Len(t, fr.calls, 2)
	p := fr.calls[1].Prompt
	for _, s := range []string{
		"Which driver?",
		"  - docs/adr/ADR-42.md, lines 7-23 (named by engineer):\n     7 | ADR line H\n",
		"  - Issue #42: Local database (.agentx/issues/42.md):\n    | Developers need a database that starts in a second.\n",
		"  - docs/adr/ADR-42.md (architect's artifact):\n",
		"Decisions so far on issue #42 (newest first):\n  - CLR-42-001 (Database adapter): Use the repository pattern.\n",
		"Left out:\n  - ../../etc/passwd: outside the repository: not read\n",
	} {
		assert.Contains(t, p, s)
	}
	assert.NotContains(t, p, "root:")
}
