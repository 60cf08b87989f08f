package ghmirror

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// Meta is the hidden metadata agentx puts in every comment it posts, as an
// HTML comment GitHub does not show: which thread entry the comment
// carries, or which comment it replies to.
type Meta struct {
	ID    string `json:"id,omitempty"`    // the clarification
	Round int    `json:"round,omitempty"` // the entry's round
	Entry *int   `json:"entry,omitempty"` // the entry's index in the thread
	Reply int64  `json:"reply,omitempty"` // a reply to this comment (a refusal)
}

const (
	metaOpen  = "<!-- agentx: "
	metaClose = " -->"
	// maxMeta bounds the metadata read from a comment.
	maxMeta = 256
)

// String is the metadata as it ends a comment.
func (m Meta) String() string {
	b, _ := json.Marshal(m)
	return metaOpen + string(b) + metaClose
}

// ParseMeta finds agentx's metadata in a comment's body. ok is false when
// there is none, or it does not parse.
func ParseMeta(body string) (m Meta, ok bool) {
	i := strings.LastIndex(body, metaOpen)
	if i < 0 {
		return Meta{}, false
	}
	rest := body[i+len(metaOpen):]
	j := strings.Index(rest, metaClose)
	if j < 0 || j > maxMeta {
		return Meta{}, false
	}
	if err := json.Unmarshal([]byte(rest[:j]), &m); err != nil {
		return Meta{}, false
	}
	if m.Entry != nil && (*m.Entry < 0 || m.ID == "") {
		return Meta{}, false
	}
	return m, m.Entry != nil || m.Reply > 0
}

// maxComment is the longest comment agentx posts, in bytes: GitHub takes
// 65,536 characters; a ledger body may hold 64 KiB before escaping.
const maxComment = 60000

// mention neutralises @mentions in text that came from agents or people:
// only the configured people are mentioned, never whoever a body names.
func mention(s string) string { return strings.ReplaceAll(s, "@", "@\u200b") }

// md is untrusted text for a markdown paragraph: no markup, no mentions.
func md(s string) string { return mention(safetext.Markdown(s)) }

// mdLine is untrusted text for one line of markdown.
func mdLine(s string) string { return mention(safetext.MarkdownLine(s)) }

// personOf is how a comment names the person behind a human entry: a
// GitHub login (github:alice) as such; any other name (an email from git
// config) is not published on the issue.
func personOf(c *ledger.Clarification, i int) string {
	name := c.PersonAt(i)
	if login, ok := strings.CutPrefix(name, PersonPrefix); ok {
		return "human (" + mdLine(PersonPrefix+login) + ")"
	}
	return "human"
}

// Render is the comment that carries thread entry i of clarification c on
// issue issue: the PRD's markdown (**[engineer -> architect] Clarification
// ...**), the body as text, for a question to a human or an escalation the
// people to @mention and how to act from GitHub, and the metadata. The
// first question's comment ends with what card (nil: none) adds to it: the
// files and lines it came with, the decisions before it, what was left out.
func Render(issue int, c *ledger.Clarification, i int, mentions []string, card *brief.Card) string {
	e := c.Thread[i]
	var b strings.Builder
	from := mdLine(e.From)
	if e.From == ledger.Human {
		from = personOf(c, i)
	}
	id := mdLine(c.ID)
	to := mdLine(c.To)
	switch e.Type {
	case ledger.Question:
		label := "Clarification"
		if e.Round > 1 {
			label = fmt.Sprintf("Follow-up, round %d of %d", e.Round, c.MaxRounds)
		}
		kind := "blocking"
		if !c.Blocking {
			kind = "non-blocking"
		}
		fmt.Fprintf(&b, "**[%s -> %s] %s %s** · %s · %s\n\n", from, to, label, id, mdLine(c.Topic), kind)
		fmt.Fprintf(&b, "%s\n", md(e.Body))
		if c.To == ledger.Human {
			if len(mentions) > 0 {
				fmt.Fprintf(&b, "\n%s: a person is asked.", strings.Join(mentions, " "))
			}
			fmt.Fprintf(&b, "\nAnswer with a comment `/answer %s <your answer>` (or a plain reply while it is the only question on this issue waiting on a person).\n", c.ID)
			if opts := relay.OptionsAt(c, i); len(opts) > 0 && e.Round == 1 {
				writeOptions(&b, opts)
				fmt.Fprintf(&b, "Pick one with `/answer %s #N` (a note may follow: `/answer %s #2 but only on weekends`).\n", c.ID, c.ID)
			}
		}
	case ledger.Answer:
		fmt.Fprintf(&b, "**[%s -> %s] Answer %s** · round %d\n\n%s\n", from, mdLine(c.From), id, e.Round, md(e.Body))
	case ledger.Resolution:
		label := "Resolved"
		if strings.HasPrefix(e.Body, "Abandoned") {
			label = "Abandoned"
		}
		fmt.Fprintf(&b, "**[%s] %s %s**\n\n%s\n", from, label, id, md(e.Body))
	case ledger.Escalation:
		fmt.Fprintf(&b, "**[ESCALATED] %s needs a human decision** · %s\n\n", id, mdLine(router.EscalationReason(c)))
		if len(mentions) > 0 {
			fmt.Fprintf(&b, "%s: please decide.\n\n", strings.Join(mentions, " "))
		}
		fmt.Fprintf(&b, "> %s\n\n", strings.ReplaceAll(md(e.Body), "\n", "\n> "))
		fmt.Fprintf(&b, "**To settle it from GitHub**, an allowed person comments:\n\n```\n/resolve %s decision: <your decision>\n```\n", c.ID)
		if opts := relay.OptionsAt(c, i); len(opts) > 0 {
			fmt.Fprintf(&b, "\nOr pick one of its %d options: `/resolve %s #N` (an option that asks for your decision takes it after the number: `/resolve %s #%d <your decision>`).\n", len(opts), c.ID, c.ID, len(opts))
		}
	default:
		fmt.Fprintf(&b, "**[%s] %s %s**\n\n%s\n", from, mdLine(string(e.Type)), id, md(e.Body))
	}
	if card != nil && e.Type == ledger.Question && i == firstQuestion(c) && card.HasContext() {
		// within the comment's limit, the rest of it first
		room := maxComment - b.Len() - len("\n") - maxMeta
		b.WriteString("\n" + card.Render(Markdown, brief.Options{Compact: true, Limit: max(room, 0), Show: "agentx clarify show " + c.ID}))
	}
	text := cutComment(b.String(), "the ledger, `agentx clarify show "+c.ID+"`")
	entry := i
	return text + "\n" + Meta{ID: c.ID, Round: e.Round, Entry: &entry}.String()
}

// Markdown is how a comment writes a decision card: its text escaped as
// every body is (md, mdLine: no markup, no mentions), a file's lines in a
// fenced block longer than any run of backticks in them, so that none can
// close it (and their @ kept from mentioning).
var Markdown = brief.Style{
	Line: mdLine,
	Para: func(s string) string { return md(s) + "\n" },
	Code: func(ls []string, first int) string {
		body := brief.Numbered(ls, first, "", func(s string) string { return mention(safetext.Line(s)) })
		fence := "```"
		for strings.Contains(body, fence) {
			fence += "`"
		}
		return fence + "text\n" + body + fence + "\n"
	},
	Head: func(s string) string { return "**" + s + "**" },
	Item: "- ",
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

// writeOptions lists a clarification's numbered options.
func writeOptions(b *strings.Builder, opts []router.Option) {
	b.WriteString("\n**Options:**\n")
	for _, o := range opts {
		fmt.Fprintf(b, "%d. %s\n", o.N, mdLine(o.Text))
	}
	b.WriteString("\n")
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// cutComment bounds a comment at a rune boundary, saying where the whole
// text is.
func cutComment(text, where string) string {
	if len(text) <= maxComment {
		return text
	}
	cut := maxComment
	for cut > 0 && !isRuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "\n\n_(cut here: the whole text is in " + where + ")_\n"
}

// Sum is the digest kept with a posted comment, so that a rendering that
// changed is edited in place and an unchanged one is left alone.
func Sum(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:8])
}

// Reply is agentx's reply refusing comment id of login: why, and the
// metadata that keeps it from being posted twice.
func Reply(id int64, login, why string) string {
	return fmt.Sprintf("@%s agentx did not take this comment: %s\n\n%s", login, md(why), Meta{Reply: id})
}
