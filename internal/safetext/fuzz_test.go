package safetext

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// checkSafe fails unless out is valid UTF-8 with no control character but
// those allowed (line feed and tab in a block), no bidi control, no line
// or paragraph separator and no hidden rune. It checks each rune against
// Unicode's own categories rather than trust hidden or Index alone.
func checkSafe(t *testing.T, fn, in, out string, block bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%q) = %q: not valid UTF-8", fn, in, out)
	}
	for _, r := range out {
		control := unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Bidi_Control, r) || r == 0x2028 || r == 0x2029
		if control && !(block && (r == '\n' || r == '\t')) || hidden(r) {
			t.Fatalf("%s(%q) = %q: holds %U", fn, in, out, r)
		}
	}
	if i := Index(out, block); i >= 0 {
		t.Fatalf("Index(%q) = %d for the output of %s(%q)", out, i, fn, in)
	}
}

func addSeeds(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in)
	}
}

// neutralise runs Line or Block (block) on s and checks what both promise:
// a safe result, idempotence, and s itself when it needs nothing escaped.
func neutralise(t *testing.T, s string, block bool) string {
	t.Helper()
	fn, name := Line, "Line"
	if block {
		fn, name = Block, "Block"
	}
	out := fn(s)
	checkSafe(t, name, s, out, block)
	if again := fn(out); again != out {
		t.Fatalf("%s not idempotent: %s(%q) = %q, and of that %q", name, name, s, out, again)
	}
	if safe(s, block) && out != s {
		t.Fatalf("%s(%q) = %q: changed safe text", name, s, out)
	}
	return out
}

// FuzzLine: Line's output is one safe line, idempotent, and s itself when
// s needs nothing escaped.
func FuzzLine(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) { neutralise(t, s, false) })
}

// FuzzBlock: Block's output keeps only line feeds and tabs, is idempotent,
// and has exactly one line per line of s (CRLF counted once), each the Line
// of that line but for its tabs.
func FuzzBlock(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		out := neutralise(t, s, true)
		in := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
		got := strings.Split(out, "\n")
		if len(in) != len(got) {
			t.Fatalf("Block(%q) = %q: %d lines, want %d", s, out, len(got), len(in))
		}
		for i := range in {
			if want := strings.ReplaceAll(Line(in[i]), `\t`, "\t"); strings.ReplaceAll(got[i], `\t`, "\t") != want {
				t.Fatalf("Block(%q) line %d = %q, want %q", s, i, got[i], want)
			}
		}
		ind := Indent(s, "  > ", "    ")
		checkSafe(t, "Indent", s, ind, true)
		for _, l := range strings.Split(strings.TrimSuffix(ind, "\n"), "\n") {
			if l != "  >" && !strings.HasPrefix(l, "  > ") && l != "" && !strings.HasPrefix(l, "    ") {
				t.Fatalf("Indent(%q): line %q lost its prefix", s, l)
			}
		}
	})
}

// FuzzMarkdown: Markdown's output is safe, one paragraph (no blank line
// after the first), and no line of it can open a block: each starts (after
// blanks) with a backslash escape, a character that opens nothing, or
// digits not followed by . or ). No markup character stands unescaped.
func FuzzMarkdown(f *testing.F) {
	addSeeds(f)
	f.Add("ok\n# heading\n- item\n1. one\n> quote\n```\n| a | b |")
	f.Fuzz(func(t *testing.T, s string) {
		out := Markdown(s)
		checkSafe(t, "Markdown", s, out, true)
		for i, l := range strings.Split(out, "\n") {
			rest := strings.TrimLeft(l, " \t")
			if rest == "" {
				if i > 0 {
					t.Fatalf("Markdown(%q) = %q: line %d is blank: it would end the paragraph", s, out, i)
				}
				continue
			}
			if strings.ContainsRune(markdownLineStart+markdownAlways, rune(rest[0])) && rest[0] != '\\' {
				t.Fatalf("Markdown(%q) line %d = %q: starts with markup", s, i, l)
			}
			if d := strings.TrimLeft(rest, "0123456789"); d != rest && d != "" && (d[0] == '.' || d[0] == ')') {
				t.Fatalf("Markdown(%q) line %d = %q: starts an ordered list", s, i, l)
			}
		}
		for i := 0; i < len(out); i++ {
			c := out[i]
			if c == '\\' {
				i++ // an escape pair
				continue
			}
			if strings.IndexByte(markdownAlways, c) >= 0 {
				t.Fatalf("Markdown(%q) = %q: unescaped %q at byte %d", s, out, c, i)
			}
		}
	})
}
