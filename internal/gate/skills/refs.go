package skills

import (
	"bytes"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Ref is a file a skill's Markdown links to: [text](target), ![alt](target)
// or a reference definition [label]: target.
type Ref struct {
	Target string // as written
	Line   int    // in the file, 1-based
}

// Refs returns the links of a Markdown body whose first line is line
// first of the file. Links inside code (fenced blocks, `spans`) and HTML
// comments are not links; escaped brackets (\[) are text.
func Refs(body []byte, first int) []Ref {
	var out []Ref
	fence := ""      // the open code fence, "" outside one
	comment := false // inside <!-- -->
	for i, raw := range bytes.Split(body, []byte("\n")) {
		line := string(bytes.TrimSuffix(raw, []byte("\r")))
		n := first + i
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		if !comment && len(line)-len(trimmed) < 4 {
			if f := fenceOf(trimmed); f != "" {
				fence = f
				continue
			}
			if m := refDef().FindStringSubmatch(line); m != nil {
				if t := target(m[1]); t != "" {
					out = append(out, Ref{Target: t, Line: n})
				}
				continue
			}
		}
		out, comment = inlineRefs(line, n, out, comment)
	}
	return out
}

// refDef is a link reference definition: [label]: target.
var refDef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}\[[^\]\\]+\]:\s*(\S.*)$`) })

// fenceOf returns the fence a line opens (``` or ~~~, or longer), or "".
func fenceOf(l string) string {
	for _, c := range []string{"`", "~"} {
		n := len(l) - len(strings.TrimLeft(l, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// inlineRefs appends the targets of the inline links of one line.
func inlineRefs(line string, n int, out []Ref, comment bool) ([]Ref, bool) {
	open := 0 // unescaped "[" not closed yet
	for i := 0; i < len(line); i++ {
		if comment {
			end := strings.Index(line[i:], "-->")
			if end < 0 {
				return out, true
			}
			i += end + 2
			comment = false
			continue
		}
		switch c := line[i]; {
		case c == '\\':
			i++ // an escaped character is text
		case strings.HasPrefix(line[i:], "<!--"):
			comment = true
			i += 3
		case c == '`':
			ticks := len(line[i:]) - len(strings.TrimLeft(line[i:], "`"))
			end := strings.Index(line[i+ticks:], strings.Repeat("`", ticks))
			if end < 0 {
				i += ticks - 1
				continue
			}
			i += ticks + end + ticks - 1
		case c == '[':
			open++
		case c == ']' && open > 0:
			open--
			if i+1 < len(line) && line[i+1] == '(' {
				if t := target(line[i+2:]); t != "" {
					out = append(out, Ref{Target: t, Line: n})
				}
			}
		}
	}
	return out, comment
}

// target reads a link destination at the start of s: <...>, or up to a
// blank or the ) that closes the link.
func target(s string) string {
	s = strings.TrimLeft(s, " \t")
	if strings.HasPrefix(s, "<") {
		if end := strings.IndexByte(s, '>'); end > 0 {
			return s[1:end]
		}
		return ""
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return s[:i]
			}
			depth--
		case ' ', '\t':
			return s[:i]
		}
	}
	return s
}

// scheme starts a URL: http:, mailto:...
var scheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]+:`) })

// RefProblem says what is wrong with a link of the skill in folder dir,
// or "" when it is fine: a URL or an anchor, or a file inside the folder
// that exists. A link out of the folder (an absolute path, "..", a
// symbolic link that leads out) is a problem: the skill would not carry
// the file with it, and agentx does not look outside.
func RefProblem(dir, t string) string {
	switch {
	case t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") || scheme().MatchString(t):
		return ""
	}
	if i := strings.IndexAny(t, "#?"); i >= 0 {
		t = t[:i]
	}
	if u, err := url.PathUnescape(t); err == nil {
		t = u
	}
	t = strings.ReplaceAll(t, `\`, "/")
	if t == "" {
		return ""
	}
	if strings.HasPrefix(t, "/") || (len(t) > 1 && t[1] == ':') || strings.ContainsRune(t, 0) {
		return "is an absolute path: link files inside the skill folder, relative to it"
	}
	clean := path.Clean(t)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "points outside the skill folder: a skill carries its files with it"
	}
	if clean == "." {
		return ""
	}
	p := filepath.Join(dir, filepath.FromSlash(clean))
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return "does not exist in the skill folder"
	} else if err != nil {
		return "cannot be read: " + err.Error()
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "is a symbolic link that leads nowhere"
	}
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "cannot be read: " + err.Error()
	}
	if rel, err := filepath.Rel(base, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "is a symbolic link out of the skill folder"
	}
	return ""
}
