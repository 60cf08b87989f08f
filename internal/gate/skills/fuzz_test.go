package skills

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFrontMatter: ParseFrontMatter never panics on a SKILL.md; what it
// reads is consistent with the file (the body is the file's end, the
// closing fence's line is within it, the lines of the keys are inside the
// front matter); and the checks that follow (names, descriptions, links)
// take whatever it returns.
func FuzzFrontMatter(f *testing.F) {
	for _, s := range []string{
		good,
		"---\nname: a\ndescription: d\n---\n",
		"---\r\nname: a\r\ndescription: >\r\n  folded\r\n  text\r\n---\r\nbody\r\n",
		"\ufeff---\nname: a\n---\n",
		"---\n---\n",
		"---\nname: [a, b]\ndescription: {x: y}\n---\n",
		"---\na: &x [*x]\nname: *x\n---\n",
		"---\nname: a\nname: b\n---\n",
		"---\n- list\n---\n",
		"---\nname: a\ndescription: d\n",
		"no front matter\n",
		"---\nname: \"\\x1b]0;t\\a\"\ndescription: \"<system>x</system>\"\nmetadata: {agentx-proposal: PROP-001}\n---\n[a](b.md) ![c](../d) [e]: /f\n",
		"---\ndisable-model-invocation: yes\n? [complex]\n: key\n---\n",
		"---\nname: a\ndescription: |\n  " + strings.Repeat("x", 2000) + "\n---\n",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, body, problems, err := ParseFrontMatter(data)
		src := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
		if !bytes.HasSuffix(src, body) {
			t.Fatalf("the body %q is not the end of the file", body)
		}
		lines := bytes.Count(src, []byte("\n")) + 1
		if err != nil {
			if fm != nil {
				t.Fatalf("an error (%v) with front matter %+v", err, fm)
			}
			if fe, ok := err.(*FrontMatterError); !ok || fe.Msg == "" || fe.Line < 0 {
				t.Fatalf("err = %#v, want a *FrontMatterError", err)
			}
			return
		}
		if fm == nil || fm.End < 2 || fm.End > lines {
			t.Fatalf("front matter %+v ends outside the file's %d lines", fm, lines)
		}
		for _, at := range []int{fm.NameLine, fm.DescLine} {
			if at != 0 && (at < 2 || at >= fm.End) {
				t.Fatalf("a key at line %d, outside the front matter (lines 2 to %d)", at, fm.End-1)
			}
		}
		for _, p := range problems {
			if p.Msg == "" || p.Line < 2 || p.Line >= fm.End {
				t.Fatalf("problem %+v: no message, or outside the front matter", p)
			}
		}
		if fm.HasName && NameProblem(fm.Name) == "" && (strings.ContainsAny(fm.Name, "/\\.") || len(fm.Name) > MaxNameLen) {
			t.Fatalf("name %q passes but is no safe folder name", fm.Name)
		}
		if fm.HasDesc && DescriptionProblem(fm.Description) == "" && (utf8.RuneCountInString(fm.Description) > MaxDescriptionLen || !utf8.ValidString(fm.Description)) {
			t.Fatalf("description %q passes but is out of bounds", fm.Description)
		}
		for _, r := range Refs(body, fm.End+1) {
			if r.Line <= fm.End || r.Line > lines {
				t.Fatalf("link %+v outside the body", r)
			}
			_ = RefProblem(dir, r.Target)
		}
	})
}
