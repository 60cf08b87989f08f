package ghmirror

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// TestQuestionCommentCarriesCard: the question's comment ends with its
// card (the lines it came with, in a fence no line of them can close, the
// decision made before it, what was left out), escaped as every body is;
// a card that would not fit GitHub's limit is cut with a note, and the
// comment stays within it. Syncing again edits nothing: the card is
// stable.
func TestQuestionCommentCarriesCard(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	write := func(name, text string) {
		p := filepath.Join(e.dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	write("docs/adr.md", "# ADR\nTTL: five minutes @everyone\n```\nnot a fence end\n<!-- agentx: {\"id\":\"CLR-42-009\",\"entry\":0} -->\n")
	first := e.ask("architect")
	_, err := e.hub.Answer(ctx, first.ID, "architect", "Exponential, capped. Always.")
	require.NoError(t, err)
	_, err = e.hub.Resolve(ctx, first.ID, "engineer", "")
	require.NoError(t, err)

	refs, err := brief.ParseRefs("--ref", []string{"docs/adr.md", "../../etc/passwd"})
	require.NoError(t, err)
	rec, err := e.hub.Ask(ctx, router.AskRequest{Issue: 42, From: "engineer", To: ledger.Human, Topic: "TTL", Question: "Per key?", Refs: refs,
		Options: []string{"Per key (default)", "Global"}})
	require.NoError(t, err)
	e.push(e.mirror())
	var body string
	for _, c := range e.fake.Comments(42) {
		if m, ok := ParseMeta(c.Body); ok && m.ID == rec.ID {
			body = c.Body
		}
	}
	require.NotEmpty(t, body)
	for _, s := range []string{
		"**Context given with the question:**\n- docs/adr.md (named by engineer):\n````text\n1 | # ADR\n2 | TTL: five minutes @\u200beveryone\n3 | ```\n",
		"\n````\n**Decisions so far on issue #42 (newest first):**\n- CLR-42-001 (Retries): ",
		"**Left out:**\n- ../../etc/passwd: outside the repository: not read\n",
	} {
		assert.Contains(t, body, s)
	}
	m, ok := ParseMeta(body)
	require.True(t, ok)
	assert.Equal(t, rec.ID, m.ID, "the file's metadata is not taken for the comment's")
	assert.False(t, strings.Contains(body, "root:x"), "nothing outside the repository")

	// stable: another sync edits nothing
	for _, ir := range e.push(e.mirror()).Issues {
		assert.Zero(t, ir.Edited)
		assert.Zero(t, ir.Posted)
	}

	// a long question and a card past the limit: the card cut with a
	// note, the comment within GitHub's 65,536 characters
	var big strings.Builder
	for big.Len() < 7000 {
		big.WriteString("a line of the file that goes on for a while\n")
	}
	var names []string
	for _, n := range "abcdefghij" {
		names = append(names, "docs/"+string(n)+".md")
		write(names[len(names)-1], big.String())
	}
	refs, err = brief.ParseRefs("--ref", names)
	require.NoError(t, err)
	e.hub.Rules().Config.Context.Budget = 65536 // [context] budget = 65536
	// a question at one message's limit, and ten files past the budget
	long, err := e.hub.Ask(ctx, router.AskRequest{Issue: 42, From: "engineer", To: ledger.Human, Topic: "Long", Question: strings.Repeat("word ", 590), Refs: refs})
	require.NoError(t, err)
	require.NotEmpty(t, long.X.Context.Refs)
	e.push(e.mirror())
	body = ""
	for _, c := range e.fake.Comments(42) {
		if m, ok := ParseMeta(c.Body); ok && m.ID == long.ID {
			body = c.Body
		}
	}
	require.NotEmpty(t, body)
	assert.LessOrEqual(t, utf8.RuneCountInString(body), 65536)
	assert.Contains(t, body, ": not shown here, to keep within the message's limit (agentx clarify show "+long.ID+" shows it)")
	assert.NotContains(t, body, "_(cut here", "the card was cut, not the comment")
}
