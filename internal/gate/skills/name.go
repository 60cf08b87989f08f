package skills

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// The limits of Claude Code's skill format (docs/supervisor.md#skills
// cites them): a name is 1 to 64 characters, a description 1 to 1024.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
)

// reserved are words a skill name may not contain.
var reserved = []string{"anthropic", "claude"}

// NameProblem says what is wrong with a skill name, or "" when Claude Code
// and the Agent Skills specification accept it: lowercase letters, digits
// and hyphens, no hyphen at either end nor two in a row, at most 64
// characters, and neither "anthropic" nor "claude" in it. A name that
// passes is also a safe folder name: no separator, no dot, no "..".
func NameProblem(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("is %d characters, more than %d", utf8.RuneCountInString(name), MaxNameLen)
	case strings.IndexFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') }) >= 0:
		return "may hold only lowercase letters, digits and hyphens"
	case name[0] == '-' || name[len(name)-1] == '-':
		return "must not start or end with a hyphen"
	case strings.Contains(name, "--"):
		return "must not hold two hyphens in a row"
	}
	for _, w := range reserved {
		if strings.Contains(name, w) {
			return fmt.Sprintf("must not contain the reserved word %q", w)
		}
	}
	return ""
}

// xmlTag finds what Claude's skill format forbids in a description: an
// XML tag.
var xmlTag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9_.:-]*(\s[^<>]*)?/?>`) })

// DescriptionProblem says what is wrong with a description, or "".
func DescriptionProblem(desc string) string {
	n := utf8.RuneCountInString(desc)
	switch {
	case strings.TrimSpace(desc) == "":
		return "must not be empty: Claude reads it to decide when to use the skill"
	case n > MaxDescriptionLen:
		return fmt.Sprintf("is %d characters, more than %d", n, MaxDescriptionLen)
	case !utf8.ValidString(desc):
		return "is not valid UTF-8"
	}
	if tag := xmlTag().FindString(desc); tag != "" {
		return fmt.Sprintf("must not hold XML tags (%s)", tag)
	}
	return ""
}

// Slug makes a skill name out of a title: lowercase words joined by
// hyphens, reserved words dropped, cut at a word within MaxNameLen. It may
// return "" (a title of symbols only).
func Slug(title string) string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(title), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		keep := true
		for _, r := range reserved {
			if strings.Contains(w, r) {
				keep = false
			}
		}
		if keep {
			words = append(words, w)
		}
	}
	out := ""
	for _, w := range words {
		next := w
		if out != "" {
			next = out + "-" + w
		}
		if len(next) > MaxNameLen {
			if out == "" {
				out = w[:MaxNameLen]
			}
			break
		}
		out = next
	}
	return out
}
