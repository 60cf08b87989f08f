package brief

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentx-cli/agentx/internal/safetext"
)

// Style is how a surface writes a card: its escaping of untrusted text
// (every name, topic, question, path, excerpt and decision comes from
// outside agentx) and its markup. Each function escapes what it is given.
type Style struct {
	Line func(s string) string // untrusted text on one line
	Para func(s string) string // untrusted text of several lines, as a block of the card, ending in a line break
	// Code is untrusted file lines numbered from first (0: not numbered),
	// as a block no line of which passes for a line of the card, ending in
	// a line break.
	Code   func(lines []string, first int) string
	Head   func(s string) string // a heading of agentx's own, on one line
	Item   string                // what begins an item of a list
	Indent string                // what begins a numbered item (an option)
}

// Text is the style of a terminal and of a responder's stdin: each line of
// a question or a file indented, and escaped by safetext, so that no line
// of it passes for one of the card.
var Text = Style{
	Line:   safetext.Line,
	Para:   func(s string) string { return safetext.Indent(s, "  ", "  ") },
	Code:   func(ls []string, first int) string { return Numbered(ls, first, "    ", safetext.Line) },
	Head:   func(s string) string { return s },
	Item:   "  - ",
	Indent: "  ",
}

// Numbered writes file lines, each after indent and its number (first 0:
// no numbers), escaped by esc (tabs kept: a tab-indented file reads as it
// is).
func Numbered(ls []string, first int, indent string, esc func(string) string) string {
	var b strings.Builder
	width := len(fmt.Sprint(first + len(ls) - 1))
	for i, l := range ls {
		line := indent
		if first > 0 {
			line += fmt.Sprintf("%*d | ", width, first+i)
		} else {
			line += "| "
		}
		line += esc(strings.ReplaceAll(strings.TrimSuffix(l, "\r"), "\t", "    "))
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// Options tune Render.
type Options struct {
	// Limit bounds the card, in bytes (0: none): excerpts, then decisions,
	// then the question are left out to keep within it, each with a note.
	Limit int
	// Compact leaves out the summary line, the question and its options,
	// for a surface that shows them already (a comment that carries the
	// question): the context, the decisions and what was left out.
	Compact bool
	// Show is the command that shows the whole card, named by a note when
	// the limit cut it ("" for clarify show ID).
	Show string
}

// Render writes the card in style s.
func (k *Card) Render(s Style, o Options) string {
	if o.Show == "" {
		o.Show = "agentx clarify show " + k.ID
	}
	out := k.render(s, o, len(k.Excerpts), len(k.Decisions), true, nil)
	if o.Limit <= 0 || len(out) <= o.Limit {
		return out
	}
	// Cut: excerpts from the last, then decisions, then the question.
	var cuts []string
	for n := len(k.Excerpts) - 1; n >= 0; n-- {
		e := k.Excerpts[n]
		cuts = append([]string{fmt.Sprintf("%s: not shown here, to keep within the message's limit (%s shows it)", e.name(), o.Show)}, cuts...)
		if out = k.render(s, o, n, len(k.Decisions), true, cuts); len(out) <= o.Limit {
			return out
		}
	}
	if len(k.Decisions) > 0 {
		cuts = append(cuts, fmt.Sprintf("the decisions so far on the issue: not shown here, to keep within the message's limit (%s shows them)", o.Show))
		if out = k.render(s, o, 0, 0, true, cuts); len(out) <= o.Limit {
			return out
		}
	}
	if !o.Compact {
		cuts = append(cuts, fmt.Sprintf("the question: not shown here, to keep within the message's limit (%s shows it)", o.Show))
		if out = k.render(s, o, 0, 0, false, cuts); len(out) <= o.Limit {
			return out
		}
	}
	return cutAt(out, o.Limit)
}

// name is how a note names an excerpt.
func (e Excerpt) name() string {
	if r := e.Range(); r != "" {
		return e.Path + ":" + r
	}
	return e.Path
}

// render writes the card with its first nx excerpts and nd decisions, the
// question if question, and the notes of what the limit cut.
func (k *Card) render(s Style, o Options, nx, nd int, question bool, cuts []string) string {
	var b strings.Builder
	if !o.Compact {
		where := "no issue"
		if k.Issue > 0 {
			where = fmt.Sprintf("issue #%d", k.Issue)
		}
		kind := "blocking"
		if !k.Blocking {
			kind = "non-blocking"
		}
		fmt.Fprintf(&b, "%s %s asks %s on %s · topic: %s · %s · %s\n", s.Head("Decision card:"), s.Line(k.From), s.Line(k.To), where, s.Line(k.Topic), kind, s.Line(k.ID))
		if question {
			b.WriteString(s.Head("Question:") + "\n")
			b.WriteString(s.Para(k.Question))
		}
		if len(k.Options) > 0 {
			b.WriteString(s.Head("Options:") + "\n")
			for _, op := range k.Options {
				mark := ""
				if op.Default {
					mark = fmt.Sprintf(" [default: %s's proposal]", s.Line(k.From))
				}
				fmt.Fprintf(&b, "%s%d. %s%s\n", s.Indent, op.N, s.Line(op.Text), mark)
			}
		}
	}
	if nx > 0 || k.Commit != "" && len(k.Excerpts) > 0 {
		head := "Context given with the question"
		if k.Commit != "" {
			head += fmt.Sprintf(" (%s's commit %s)", s.Line(k.From), s.Line(short(k.Commit)))
		}
		b.WriteString(s.Head(head+":") + "\n")
		for _, e := range k.Excerpts[:nx] {
			b.WriteString(s.Item + k.label(s, e) + ":\n")
			first, ls := e.First, e.Lines
			if e.Kind == KindIssue {
				first = 0 // its text, not code
				if e.Title != "" && e.First == 1 {
					ls = ls[1:] // the title, in the label
					for len(ls) > 0 && strings.TrimSpace(ls[0]) == "" {
						ls = ls[1:]
					}
				}
			}
			if len(ls) > 0 {
				b.WriteString(s.Code(ls, first))
			}
		}
	}
	if nd > 0 {
		where := "the issue"
		if k.Issue > 0 {
			where = fmt.Sprintf("issue #%d", k.Issue)
		}
		b.WriteString(s.Head(fmt.Sprintf("Decisions so far on %s (newest first):", where)) + "\n")
		for _, d := range k.Decisions[:nd] {
			fmt.Fprintf(&b, "%s%s (%s): %s\n", s.Item, s.Line(d.ID), s.Line(d.Topic), s.Line(d.Text))
		}
	}
	if notes := append(append([]string(nil), k.Omitted...), cuts...); len(notes) > 0 {
		b.WriteString(s.Head("Left out:") + "\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "%s%s\n", s.Item, s.Line(n))
		}
	}
	return b.String()
}

// label names an excerpt: its path and lines, and where it comes from.
func (k *Card) label(s Style, e Excerpt) string {
	where := s.Line(e.Path)
	if r := e.Range(); r != "" {
		where += ", lines " + r
	}
	switch e.Kind {
	case KindIssue:
		if e.Title != "" {
			return fmt.Sprintf("Issue #%d: %s (%s)", k.Issue, s.Line(e.Title), where)
		}
		return fmt.Sprintf("Issue #%d (%s)", k.Issue, where)
	case KindArtifact:
		return fmt.Sprintf("%s (%s's artifact)", where, s.Line(k.To))
	}
	return fmt.Sprintf("%s (named by %s)", where, s.Line(k.From))
}

// short is a commit id as people quote it.
func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// cutAt bounds text to n bytes at a rune boundary.
func cutAt(text string, n int) string {
	if len(text) <= n {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n]
}
