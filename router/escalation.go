package router

import (
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
)

// EscalationBody is the text of an escalation entry: what a human needs to
// decide without reading the whole thread. askerLatest, when set, is the
// asker's newest position if it is not in the thread (a follow-up refused
// at the round limit).
func EscalationBody(issue int, c *ledger.Clarification, reason, askerLatest string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s\n", ledger.EscalationPrefix, clip(reason, maxQuoted))
	fmt.Fprintf(&b, "Topic: %s (%s, %s)\n", c.Topic, words.Issue(issue), c.ID)
	fmt.Fprintf(&b, "Rounds used: %d of %d\n\n", c.Round, c.MaxRounds)

	q := askerLatest
	if q == "" {
		if e := c.Current(ledger.Question); e != nil {
			q = e.Body
		}
	}
	fmt.Fprintf(&b, "%s (asker), latest question:\n%s\n", c.From, quote(q))
	if a := c.Current(ledger.Answer); a != nil {
		fmt.Fprintf(&b, "%s (asked), latest answer:\n%s\n", a.From, quote(a.Body))
	} else {
		fmt.Fprintf(&b, "%s (asked) has not answered.\n", c.To)
	}
	b.WriteString("\nA human decides. Options:\n")
	if a := c.Current(ledger.Answer); a != nil {
		fmt.Fprintf(&b, "  1. Accept %s's answer.\n", a.From)
		if askerProposed(c, q) {
			fmt.Fprintf(&b, "  2. Accept %s's proposal.\n", c.From)
			b.WriteString("  3. Give a new decision.\n")
		} else {
			b.WriteString("  2. Give a new decision.\n")
		}
	} else {
		fmt.Fprintf(&b, "  1. Answer %s's question yourself.\n", c.From)
		b.WriteString("  2. Give a new decision.\n")
	}
	fmt.Fprintf(&b, "\nA person resolves it, at a terminal of their own:\n  agentx clarify resolve %s --body \"decision: ...\"", c.ID)
	return b.String()
}

// maxQuoted is the most of one position an escalation entry quotes: two
// positions, the reason and the rest stay within ledger.MaxBodyLen.
const maxQuoted = 16 << 10

func quote(s string) string {
	if strings.TrimSpace(s) == "" {
		return "  > (none)"
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  > " + l
	}
	q := strings.Join(lines, "\n")
	if len(q) > maxQuoted {
		q = clip(q, maxQuoted) + fmt.Sprintf("\n  [... cut: %d bytes in all, the whole text is in the thread]", len(s))
	}
	return q
}

// EscalationReason is c.EscalationReason.
func EscalationReason(c *ledger.Clarification) string { return c.EscalationReason() }
