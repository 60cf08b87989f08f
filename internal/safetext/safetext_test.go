package safetext

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

// cases are the hostile (and the harmless) inputs the neutraliser must get
// right, each with what Line and Block make of it.
var cases = []struct {
	name        string
	in          string
	line, block string
}{
	{"plain ascii", "Database adapter", "Database adapter", "Database adapter"},
	{"accents", "café déjà vu, Ærøskøbing", "café déjà vu, Ærøskøbing", "café déjà vu, Ærøskøbing"},
	{"cjk", "数据库适配器 データベース 데이터베이스", "数据库适配器 データベース 데이터베이스", "数据库适配器 データベース 데이터베이스"},
	{"emoji with joiners and selectors", "ship it 🚀 👩‍💻 ❤️ 🏳️‍🌈", "ship it 🚀 👩‍💻 ❤️ 🏳️‍🌈", "ship it 🚀 👩‍💻 ❤️ 🏳️‍🌈"},
	{"backslash kept", `C:\new\x1b`, `C:\new\x1b`, `C:\new\x1b`},
	{"ESC alone", "a\x1bb", `a\x1bb`, `a\x1bb`},
	{"CSI clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
	{"CSI colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
	{"OSC title set (BEL)", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
	{"OSC title set (ST)", "\x1b]2;pwned\x1b\\", `\x1b]2;pwned\x1b\`, `\x1b]2;pwned\x1b\`},
	{"OSC 52 clipboard", "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07", `\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07`, `\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07`},
	{"OSC 8 hyperlink", "\x1b]8;;https://evil\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;https://evil\x1b\click\x1b]8;;\x1b\`, `\x1b]8;;https://evil\x1b\click\x1b]8;;\x1b\`},
	{"BEL", "ding\a", `ding\x07`, `ding\x07`},
	{"NUL", "a\x00b", `a\x00b`, `a\x00b`},
	{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
	{"backspace", "secret\b\b\b\b\b\bpublic", `secret\x08\x08\x08\x08\x08\x08public`, `secret\x08\x08\x08\x08\x08\x08public`},
	{"LF", "one\ntwo", `one\ntwo`, "one\ntwo"},
	{"CR", "safe\rEVIL", `safe\rEVIL`, `safe\rEVIL`},
	{"CRLF", "one\r\ntwo", `one\r\ntwo`, "one\ntwo"},
	{"tab", "a\tb", `a\tb`, "a\tb"},
	{"forged list row", "x\nCLR-42-999\t42\tresolved\thuman", `x\nCLR-42-999\t42\tresolved\thuman`, "x\nCLR-42-999\t42\tresolved\thuman"},
	{"C1 CSI (UTF-8)", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
	{"C1 NEL and OSC", "\u0085\u009d0;t\u009c", `\u0085\u009d0;t\u009c`, `\u0085\u009d0;t\u009c`},
	{"C1 CSI (raw byte)", "a\x9b2Jb", `a\x9b2Jb`, `a\x9b2Jb`},
	{"bidi override", "admin\u202etxt.exe", `admin\u202etxt.exe`, `admin\u202etxt.exe`},
	{"bidi embeddings and marks", "\u202a\u202b\u202c\u202d\u200e\u200f\u061c", `\u202a\u202b\u202c\u202d\u200e\u200f\u061c`, `\u202a\u202b\u202c\u202d\u200e\u200f\u061c`},
	{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`, `\u2066a\u2067b\u2068c\u2069`},
	{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
	{"zero width", "zero\u200bwidth\u2060\ufeff", `zero\u200bwidth\u2060\ufeff`, `zero\u200bwidth\u2060\ufeff`},
	{"invalid UTF-8", "ok\xff\xfe\xc3(", `ok\xff\xfe\xc3(`, `ok\xff\xfe\xc3(`},
	{"surrogate half", "a\xed\xa0\x80b", `a\xed\xa0\x80b`, `a\xed\xa0\x80b`},
	{"replacement char kept", "a\ufffdb", "a\ufffdb", "a\ufffdb"},
	{"empty", "", "", ""},
}

func TestLineAndBlock(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Line(c.in); got != c.line {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
			}
			if got := Block(c.in); got != c.block {
				t.Errorf("Block(%q) = %q, want %q", c.in, got, c.block)
			}
		})
	}
}

func TestIndent(t *testing.T) {
	tests := []struct {
		name, body, first, rest, want string
	}{
		{"one line", "Per key.", "    A: ", "       ", "    A: Per key.\n"},
		{"continuation aligned", "one\ntwo\n\nthree\n", "    Q: ", "       ", "    Q: one\n       two\n\n       three\n"},
		{"forged thread line stays indented", "ok\n  [RESOLVED] human  (2026-02-26 10:05)", "    A: ", "       ",
			"    A: ok\n         [RESOLVED] human  (2026-02-26 10:05)\n"},
		{"escapes inside lines", "a\x1b]0;t\x07\r\nb\rc", "  | ", "  | ", "  | a\\x1b]0;t\\x07\n  | b\\rc\n"},
		{"trailing blanks trimmed", "a   \n\n", "  ", "  ", "  a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Indent(tt.body, tt.first, tt.rest); got != tt.want {
				t.Errorf("Indent(%q) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain prose", "Use the repository pattern, e.g. in dev.", "Use the repository pattern, e.g. in dev."},
		{"emphasis and code", "*bold* _it_ `code`", `\*bold\* \_it\_ \` + "`code\\`"},
		{"link and image", "[x](http://e) ![i](u)", `\[x\](http://e) !\[i\](u)`},
		{"raw html and entity", "<img src=x onerror=alert(1)> &amp;", `\<img src=x onerror=alert(1)\> \&amp;`},
		{"table row", "| a | b |\n|---|---|", `\| a \| b \|` + "\n" + `\|---\|---\|`},
		{"heading forged on a new line", "ok\n# Resolved by human", "ok\n\\# Resolved by human"},
		{"list, rule, setext, quote", "- a\n+ b\n---\n===\n> q", "\\- a\n\\+ b\n\\---\n\\===\n\\> q"},
		{"ordered list", "1. one\n  2) two\nv1.2 stays", "1\\. one\n  2\\) two\nv1.2 stays"},
		{"fence", "```sh\nrm -rf /\n```", "\\`\\`\\`sh\nrm -rf /\n\\`\\`\\`"},
		{"blank line cannot end the paragraph", "a\n\n    code?\n \t\nb\n\n", "a\n\\\n    code?\n \t\\\nb"},
		{"leading line break", "\nb", "\nb"},
		{"hash mid-line kept", "see #42", "see #42"},
		{"math", "$x$", `\$x\$`},
		{"controls", "a\x1b[2J\u202eb", `a\\x1b\[2J\\u202eb`},
		{"cell: Line first", "a|b\nc", `a\|b\\nc`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if strings.HasPrefix(tt.name, "cell") {
				in = Line(in)
			}
			if got := Markdown(in); got != tt.want {
				t.Errorf("Markdown(%q) = %q, want %q", in, got, tt.want)
			}
		})
	}
}

// TestGolden renders every case through Line, Block and Markdown into
// testdata/golden.txt, so a change in any rendering shows in review
// (refresh with go test ./internal/safetext -run Golden -update).
func TestGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&b, "== %s\nin:       %q\nLine:     %s\nBlock:    %s\nMarkdown: %s\n\n",
			c.name, c.in, Line(c.in), strings.ReplaceAll(Block(c.in), "\n", "\n          "), strings.ReplaceAll(Markdown(c.in), "\n", "\n          "))
	}
	got := b.String()
	path := filepath.Join("testdata", "golden.txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("golden output changed; run with -update and review the diff\n--- got ---\n%s", got)
	}
}

func TestIndex(t *testing.T) {
	tests := []struct {
		s     string
		block bool
		want  int
	}{
		{"plain 👩‍💻", false, -1},
		{"ok\x1b[2J", false, 2},
		{"a\nb\tc", true, -1},
		{"a\nb", false, 1},
		{"a\r\nb", true, 1},
		{"é\xff", false, 2},
		{"ab\u202e", true, 2},
		{"\u0085", true, 0},
	}
	for _, tt := range tests {
		if got := Index(tt.s, tt.block); got != tt.want {
			t.Errorf("Index(%q, %v) = %d, want %d", tt.s, tt.block, got, tt.want)
		}
	}
	// Index agrees with Line and Block: -1 exactly when they change nothing
	for _, c := range cases {
		if (Index(c.in, false) < 0) != (Line(c.in) == c.in) {
			t.Errorf("Index(%q, false) = %d but Line gives %q", c.in, Index(c.in, false), Line(c.in))
		}
		if (Index(c.in, true) < 0) != (Block(c.in) == c.in) {
			t.Errorf("Index(%q, true) = %d but Block gives %q", c.in, Index(c.in, true), Block(c.in))
		}
	}
}
