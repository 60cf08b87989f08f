package inbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/router"
)

// TestQuestionCard: a question waiting for the agent comes with its card:
// the lines it came with, the decision made on the issue before, what was
// left out; within the look's limit, cut like any body.
func TestQuestionCard(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	require.NoError(t, os.MkdirAll(filepath.Join(w.hub.Dir, "docs"), 0o755))
	var adr strings.Builder
	for i := 0; i < 400; i++ {
		adr.WriteString("the ADR says something on this line\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.hub.Dir, "docs", "adr.md"), []byte(adr.String()), 0o644))
	first := w.ask(t, 42, "engineer", "architect", "Store", "Where?")
	_, err := w.hub.Answer(ctx, first, "architect", "In Redis. Nowhere else.")
	require.NoError(t, err)
	_, err = w.hub.Resolve(ctx, first, "engineer", "")
	require.NoError(t, err)

	refs, err := brief.ParseRefs("--ref", []string{"docs/adr.md:2", "../secret"})
	require.NoError(t, err)
	rec, err := w.hub.Ask(ctx, router.AskRequest{Issue: 42, From: "engineer", To: "architect", Topic: "TTL", Question: "Per key?", Refs: refs})
	require.NoError(t, err)

	src := &brief.Source{Root: w.hub.Dir, Rules: w.hub.Rules()}
	res := w.check(t, "architect", peek, func(o *Options) { o.Source = src })
	require.Len(t, res.Items, 1)
	it := res.Items[0]
	assert.Equal(t, rec.ID, it.ID)
	for _, s := range []string{
		"Context given with the question:\n  - docs/adr.md, lines 1-5 (named by engineer):\n    1 | the ADR says",
		"Decisions so far on issue #42 (newest first):\n",
		"Left out:\n  - ../secret: outside the repository: not read\n",
	} {
		assert.Contains(t, it.Card, s)
	}
	text := Text(res)
	assert.Contains(t, text, "    Q: Per key?\n    Context given with the question:\n      - docs/adr.md, lines 1-5 (named by engineer):\n")
	assert.Contains(t, text, "      - ../secret: outside the repository: not read\n  Next: answer it")

	// without a source, no card: as before
	res = w.check(t, "architect", peek)
	assert.Empty(t, res.Items[0].Card)

	// a card past the look's limit is cut, as a body is
	cut := w.check(t, "architect", peek, func(o *Options) { o.Source = src; o.Limit = 600 })
	require.Len(t, cut.Items, 1)
	assert.True(t, cut.Items[0].Clipped)
	assert.LessOrEqual(t, size(Text(cut)), 600)
	assert.Contains(t, Text(cut), "(Cut short to fit here: agentx clarify show "+rec.ID+" has it all.)")
}
