package slackmode

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// MetaType is the event type of the metadata agentx attaches to every
// message it posts: which thread entry (or assumption) the message carries.
const MetaType = "agentx_clarification"

// Meta is that metadata.
type Meta struct {
	ID         string // the clarification
	Entry      int    // the thread entry's index; -1 for an assumption
	Assumption int    // the assumption's index, when Entry is -1
}

func (m Meta) slack() slack.SlackMetadata {
	p := map[string]any{"id": m.ID, "entry": m.Entry}
	if m.Entry < 0 {
		p["assumption"] = m.Assumption
	}
	return slack.SlackMetadata{EventType: MetaType, EventPayload: p}
}

// metaOf reads agentx's metadata from a message's, or nil.
func metaOf(sm slack.SlackMetadata) *Meta {
	id, entry, ok := payload(sm, MetaType)
	if _, _, err := ledger.ParseID(id); err != nil || !ok {
		return nil
	}
	m := &Meta{ID: id, Entry: entry}
	if entry < 0 {
		if m.Assumption, ok = number(sm.EventPayload["assumption"]); !ok || m.Assumption < 0 {
			return nil
		}
	}
	return m
}

// payload is the id and entry of metadata of event type typ (ok false
// for another type, or no entry from -1 on).
func payload(sm slack.SlackMetadata, typ string) (id string, entry int, ok bool) {
	if sm.EventType != typ {
		return "", 0, false
	}
	id, _ = sm.EventPayload["id"].(string)
	entry, ok = number(sm.EventPayload["entry"])
	return id, entry, ok && entry >= -1
}

func number(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	case int:
		return n, true
	}
	return 0, false
}

// escape is untrusted text for Slack's mrkdwn: &, < and > escaped as
// Slack asks (so no <!channel>, <@user> or <url|label> can be forged),
// controls and invisible characters shown as escapes (safetext), and @
// kept from reading as a mention.
func escape(s string) string {
	s = safetext.Block(s)
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "@", "@\u200b").Replace(s)
	return s
}

// line is untrusted text for one line.
func line(s string) string { return escape(safetext.Line(s)) }

// quote is untrusted text as a quote block, every line of it.
func quote(s string) string {
	return "> " + strings.ReplaceAll(escape(strings.TrimRight(s, "\n")), "\n", "\n> ")
}

// maxText is the longest message agentx posts, in bytes: Slack takes
// 40,000 characters; a ledger body may hold 64 KiB.
const maxText = 35000

// date is t as Slack shows it to each reader in their own time zone, with
// a UTC fallback.
func date(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} at {time}|%s>", t.Unix(), t.UTC().Format("2006-01-02 15:04 UTC"))
}

// who names the author of entry i: an agent, or a person (a Slack user by
// their member id as plain text, which notifies nobody; any other name,
// an email from git config, is not published in the channel).
func who(c *ledger.Clarification, i int) string {
	e := c.Thread[i]
	if e.From != ledger.Human {
		return line(e.From)
	}
	if id, ok := strings.CutPrefix(c.PersonAt(i), PersonPrefix); ok {
		return "a person (" + line(id) + " in Slack)"
	}
	return "a person"
}

// Render is the message that carries thread entry i of clarification c of
// issue issue. first is whether it opens the thread. The first question's
// message ends with what card (nil: none) adds to it: the files and lines
// it came with, the decisions before it, what was left out.
func Render(issue int, c *ledger.Clarification, i int, first bool, card *brief.Card) string {
	e := c.Thread[i]
	var b strings.Builder
	head := func() {
		kind := "blocking"
		if !c.Blocking {
			kind = "non-blocking"
		}
		fmt.Fprintf(&b, "%s · %s asks %s · topic: %s · %s\n", words.Issue(issue), line(c.From), line(c.To), line(c.Topic), kind)
	}
	switch e.Type {
	case ledger.Question:
		if e.Round > 1 {
			fmt.Fprintf(&b, "*Follow-up %s, round %d of %d* from %s\n%s\n", line(c.ID), e.Round, c.MaxRounds, line(e.From), quote(e.Body))
		} else {
			fmt.Fprintf(&b, ":question: *Clarification %s* for a person\n", line(c.ID))
			head()
			fmt.Fprintf(&b, "%s\n", quote(e.Body))
		}
		if c.X != nil && len(c.X.Options) > 0 && i == firstQuestion(c) {
			writeOptions(&b, relay.OptionsAt(c, i), "*Options*: reply with `#N` (a note may follow: `#2 but only on weekends`), the number alone, or the label:\n")
		}
		b.WriteString("Reply in this thread to answer: the first reply from an answerer is the answer, later replies add to it.\n")
		fmt.Fprintf(&b, "If nobody answers by %s, %s proceeds on its best judgment.\n", date(c.StaleAfter.Time), line(c.From))
	case ledger.Answer:
		fmt.Fprintf(&b, "*Answer* (round %d) from %s, given outside this thread\n%s\n", e.Round, who(c, i), quote(e.Body))
	case ledger.Resolution:
		label := "Resolved"
		switch {
		case strings.HasPrefix(e.Body, "Abandoned: cancelled"):
			label = "Cancelled: no answer is needed any more"
		case strings.HasPrefix(e.Body, "Abandoned"):
			label = "Abandoned: no answer will be used"
		}
		fmt.Fprintf(&b, "*%s* (%s, by %s)\n%s\n", label, line(c.ID), who(c, i), quote(e.Body))
	case ledger.Escalation:
		fmt.Fprintf(&b, ":rotating_light: *ESCALATED: %s needs a human decision* · %s\n", line(c.ID), line(router.EscalationReason(c)))
		if first {
			head()
		}
		fmt.Fprintf(&b, "%s\n", quote(e.Body))
		if opts := relay.OptionsAt(c, i); len(opts) > 0 {
			fmt.Fprintf(&b, "To pick one of its %d options, reply with `#N` (an option that asks for your decision takes it after the number: `#%d your decision`).\n", len(opts), len(opts))
		}
		b.WriteString("Reply in this thread with your decision: the first reply from an answerer settles it.\n")
	default:
		fmt.Fprintf(&b, "*%s* from %s\n%s\n", line(string(e.Type)), who(c, i), quote(e.Body))
	}
	if card != nil && e.Type == ledger.Question && i == firstQuestion(c) && card.HasContext() {
		// within the message's limit, the rest of it first
		room := maxText - b.Len()
		b.WriteString(card.Render(Mrkdwn, brief.Options{Compact: true, Limit: max(room, 0), Show: "agentx clarify show " + c.ID}))
	}
	return cut(b.String(), c.ID)
}

// Mrkdwn is how a message writes a decision card: its text escaped as
// every body is (escape: no links, mentions or broadcasts), a file's lines
// quoted, each numbered.
var Mrkdwn = brief.Style{
	Line: line,
	Para: func(s string) string { return quote(s) + "\n" },
	Code: func(ls []string, first int) string { return brief.Numbered(ls, first, "> ", line) },
	Head: func(s string) string { return "*" + s + "*" },
	Item: "• ",
}

// writeOptions lists numbered options after head (nothing when there are
// none).
func writeOptions(b *strings.Builder, opts []router.Option, head string) {
	if len(opts) == 0 {
		return
	}
	b.WriteString(head)
	for _, o := range opts {
		fmt.Fprintf(b, "%d. %s\n", o.N, line(o.Text))
	}
}

// RenderAssumption tells the thread that the asker proceeded on
// assumption k of c.
func RenderAssumption(c *ledger.Clarification, k int) string {
	a := c.X.Assumptions[k]
	return cut(fmt.Sprintf("*%s proceeds on its own* (round %d): it assumes\n%s\nA reply here still answers: it reaches %s marked as late, beside this assumption.\n",
		line(a.By), a.Round, quote(a.Body), line(a.By)), c.ID)
}

// cut bounds a message about clarification id, at a rune boundary,
// saying where the rest is.
func cut(text, id string) string {
	return cutAt(text, "`agentx clarify show "+line(id)+"`")
}

// cutAt bounds a message, at a rune boundary, saying that the command show
// shows the rest.
func cutAt(text, show string) string {
	if len(text) <= maxText {
		return text
	}
	n := maxText
	for n > 0 && text[n]&0xC0 == 0x80 {
		n--
	}
	return text[:n] + "\n_(cut here: the whole text is in the ledger, " + show + ")_\n"
}

// firstQuestion is the index of c's first question, or -1.
func firstQuestion(c *ledger.Clarification) int {
	for i, e := range c.Thread {
		if e.Type == ledger.Question {
			return i
		}
	}
	return -1
}

// Notice is the ephemeral message a reply that was not taken gets.
func Notice(why string) string {
	return "agentx did not take your reply: " + line(why)
}
