package slackmode

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

// TestQuestionMessageCarriesCard: the question's message ends with its
// card (the lines it came with, quoted and escaped for mrkdwn as every
// body is, the decision made before it, what was left out); a card that
// would not fit Slack's limit is cut with a note, and the message stays
// within it.
func TestQuestionMessageCarriesCard(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	write := func(name, text string) {
		p := filepath.Join(e.hub.Dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	write("docs/adr.md", "# ADR\nTTL: five minutes <!channel> <https://evil.example|click>\n> not a quote of its own\n")
	first := e.ask("architect")
	_, err := e.hub.Answer(ctx, first.ID, "architect", "Exponential, capped. Always.")
	require.NoError(t, err)
	_, err = e.hub.Resolve(ctx, first.ID, "engineer", "")
	require.NoError(t, err)

	refs, err := brief.ParseRefs("--ref", []string{"docs/adr.md:2", "../../etc/passwd"})
	require.NoError(t, err)
	rec, err := e.hub.Ask(ctx, router.AskRequest{Issue: 42, From: "engineer", To: ledger.Human, Topic: "TTL", Question: "Per key?", Refs: refs})
	require.NoError(t, err)
	e.push(e.mode())
	ms := e.fake.Messages(channel)
	require.Len(t, ms, 1, "the question to a person only")
	assert.Contains(t, ms[0].Text, "*Clarification "+rec.ID+"* for a person")
	text := ms[0].Text
	for _, s := range []string{
		"*Context given with the question:*\n• docs/adr.md (named by engineer):\n> 1 | # ADR\n> 2 | TTL: five minutes &lt;!channel&gt; &lt;https://evil.example|click&gt;\n> 3 | &gt; not a quote of its own\n",
		"*Decisions so far on issue #42 (newest first):*\n• " + first.ID + " (Retries): ",
		"*Left out:*\n• ../../etc/passwd: outside the repository: not read\n",
	} {
		assert.Contains(t, text, s)
	}
	assert.NotContains(t, text, "<!channel>")
	assert.NotContains(t, text, "root:x")

	// a long question and a card past the limit: the card cut with a note,
	// the message within Slack's 40,000 characters (posted as text, not
	// blocks: their 3,000 per section do not apply)
	var big strings.Builder
	for big.Len() < 7000 {
		big.WriteString("a line of the file that goes on for a while\n")
	}
	names := []string{"docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md", "docs/e.md", "docs/f.md"}
	for _, name := range names {
		write(name, big.String())
	}
	e.hub.Rules().Config.Context.Budget = 65536 // [context] budget = 65536
	refs, err = brief.ParseRefs("--ref", names)
	require.NoError(t, err)
	// a question at one message's limit, and files past Slack's
	long, err := e.hub.Ask(ctx, router.AskRequest{Issue: 43, From: "engineer", To: ledger.Human, Topic: "Long", Question: strings.Repeat("word ", 590), Refs: refs})
	require.NoError(t, err)
	require.Len(t, long.X.Context.Refs, len(names))
	e.push(e.mode())
	ms = e.fake.Messages(channel)
	require.Len(t, ms, 2)
	text = ms[1].Text
	assert.LessOrEqual(t, utf8.RuneCountInString(text), 40000)
	assert.Contains(t, text, "• docs/f.md: not shown here, to keep within the message's limit (agentx clarify show "+long.ID+" shows it)")
	assert.NotContains(t, text, "_(cut here", "the card was cut, not the message")
}
