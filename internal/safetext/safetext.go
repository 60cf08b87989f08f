package safetext

import (
	"strings"
	"unicode/utf8"
)

// Line returns s fit for one line of a terminal: a topic, an agent name, a
// table cell. Every control character (newline, carriage return and tab
// included), DEL, the 8-bit C1 controls, bidirectional overrides and
// isolates, invisible separators and each byte of invalid UTF-8 is replaced
// by a visible escape (\n, \r, \t, \x1b, \u009b, \u202e, \xff). Everything
// else, emoji, CJK and accents included, is kept as is. The result holds no
// byte below 0x20 and is valid UTF-8; Line(Line(s)) == Line(s).
func Line(s string) string { return clean(s, false) }

// Block returns s fit for a multi-line body on a terminal: as Line, except
// that line feeds and tabs are kept (a CRLF pair becomes a line feed). The
// caller prefixes each line (see Indent) so that a line of the body cannot
// pass for a line of the renderer's own structure.
func Block(s string) string { return clean(s, true) }

// Indent renders body with Block, first before its first line and rest
// before each following one, trailing blanks and line breaks trimmed, each
// line ending in a newline.
func Indent(body, first, rest string) string {
	lines := strings.Split(strings.TrimRight(Block(body), "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		b.WriteString(strings.TrimRight(p+l, " ") + "\n")
	}
	return b.String()
}

// Markdown returns s fit for the text of a markdown paragraph (a chat
// message, a pull request comment): neutralised as Block, with a backslash
// before each character that could start markup (emphasis, code, links,
// raw HTML, entities, tables, math) and before each one that could open a
// block at the start of a line (headings, lists, quotes, rules, fences).
// Line breaks are kept; a blank line becomes a lone backslash (a hard
// break), so the text stays one paragraph and no line of it can start a
// block of its own (an indented code block after a blank line, say). For a
// table cell, see MarkdownLine.
func Markdown(s string) string {
	s = strings.TrimRight(Block(s), " \t\n") // a blank last line would end the paragraph
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	lineStart := true // at the start of a line, before any non-blank
	digits := false   // the line so far is blanks then digits
	for i, r := range s {
		switch {
		case r == '\n':
			if lineStart && i > 0 { // a blank line would end the paragraph
				b.WriteByte('\\')
			}
			b.WriteByte('\n')
			lineStart, digits = true, false
			continue
		case r == ' ' || r == '\t':
			b.WriteRune(r)
			if !lineStart {
				digits = false
			}
			continue
		case strings.ContainsRune(markdownAlways, r),
			lineStart && strings.ContainsRune(markdownLineStart, r),
			digits && (r == '.' || r == ')'):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
		digits = (lineStart || digits) && r >= '0' && r <= '9'
		lineStart = false
	}
	return b.String()
}

// MarkdownLine is Markdown(Line(s)): text for one line of markdown, such as
// a table cell or a label, where a line break would end the row.
func MarkdownLine(s string) string { return Markdown(Line(s)) }

// markdownAlways are escaped wherever they stand: they open inline markup
// (or, for | and >, tables and quotes). markdownLineStart are escaped at
// the start of a line only, where they open a block.
const (
	markdownAlways    = "\\`*_[]<>|~&$"
	markdownLineStart = "#+-="
)

// clean escapes what Line escapes; block keeps line feeds and tabs.
func clean(s string, block bool) string {
	if safe(s, block) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			hexByte(&b, `\x`, s[i])
		case block && (r == '\n' || r == '\t'):
			b.WriteByte(byte(r))
		case block && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CRLF: the LF that follows is kept
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			hexByte(&b, `\x`, byte(r))
		case hidden(r):
			hexByte(&b, `\u`, byte(r>>8))
			hexByte(&b, "", byte(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hexByte writes prefix and c in two lowercase hex digits.
func hexByte(b *strings.Builder, prefix string, c byte) {
	const digits = "0123456789abcdef"
	b.WriteString(prefix)
	b.WriteByte(digits[c>>4])
	b.WriteByte(digits[c&0xf])
}

// safe reports whether clean would return s unchanged.
func safe(s string, block bool) bool { return Index(s, block) < 0 }

// Index returns the byte offset of the first character of s that Line
// (block: Block) would escape or drop, or -1 when there is none: -1 means
// s is safe to print as it is.
func Index(s string, block bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && !(block && (c == '\n' || c == '\t'))) || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || hidden(r) {
			return i
		}
		i += size
	}
	return -1
}

// hidden reports whether r is a non-ASCII rune a terminal would act on or
// not show: the C1 controls (U+0080-U+009F, among them the 8-bit CSI and
// OSC), bidirectional marks, embeddings, overrides and isolates, and the
// invisible separators and joiners that hide or reorder text. The zero-width
// joiner and non-joiner (U+200D, U+200C) are kept: emoji sequences and
// several scripts need them.
func hidden(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x180e, r == 0x200b, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x2028 && r <= 0x202e: // line and paragraph separators, bidi embeddings and overrides
		return true
	case r >= 0x2060 && r <= 0x206f: // word joiner, invisible operators, bidi isolates, deprecated format controls
		return true
	case r == 0xfeff, r >= 0xfff9 && r <= 0xfffb:
		return true
	}
	return false
}
