// Package words holds the small wording helpers the commands and their
// packages share.
package words

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// Hinter is an error that says what to do about it, in the core's words:
// the rule and its fields, never a front end's commands, flags or tools.
type Hinter interface{ Hint() string }

// Table is a front end's wording table: its words for each kind of error
// (a type with a Hint), so that the core's errors carry their kind and
// fields and each front end says what to do in its own terms (commands,
// tools, a page). An error of a kind the table does not name keeps its
// own hint.
type Table []Wording

// Wording is a table's words for one kind of error.
type Wording struct {
	kind reflect.Type
	word func(Hinter) string
}

// Word words the errors of type E with w.
func Word[E Hinter](w func(E) string) Wording {
	return Wording{kind: reflect.TypeFor[E](), word: func(h Hinter) string { return w(h.(E)) }}
}

// Hint is the hint the table gives for err: of err's chain, the first
// error that offers a hint, worded by the table. "" from the table moves
// on to the next error of the chain.
func (t Table) Hint(err error) string {
	var h Hinter
	for e := err; e != nil; e = errors.Unwrap(e) {
		if errors.As(e, &h) {
			if s := t.word(h); s != "" {
				return s
			}
		}
	}
	return ""
}

// word is the table's words for h, or h's own hint.
func (t Table) word(h Hinter) string {
	for _, w := range t {
		if w.kind == reflect.TypeOf(h) {
			return w.word(h)
		}
	}
	return h.Hint()
}

// Kinds are the types of error the table words.
func (t Table) Kinds() []reflect.Type {
	kinds := make([]reflect.Type, len(t))
	for i, w := range t {
		kinds[i] = w.kind
	}
	return kinds
}

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n with its noun, one or many as n asks: "1 command",
// "3 commands", "0 entries".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}

// Issue names issue n in a sentence: "issue #42", or "no issue" for 0,
// the number under which the questions asked on no issue are kept.
func Issue(n int) string {
	if n == 0 {
		return "no issue"
	}
	return "issue #" + strconv.Itoa(n)
}

// IssueRef is Issue's short form, for a column or brackets: "#42", or
// "no issue".
func IssueRef(n int) string {
	if n == 0 {
		return "no issue"
	}
	return "#" + strconv.Itoa(n)
}

// OnIssue says where something is: "on issue #42", or "without an issue".
func OnIssue(n int) string {
	if n == 0 {
		return "without an issue"
	}
	return "on issue #" + strconv.Itoa(n)
}

// Slug reports whether s is a name of lowercase letters and digits, and
// after the first byte also any byte of extra: agent names are
// Slug(s, "-"). A plain loop, not a regular expression, so that no
// command pays to compile one at start-up.
func Slug(s, extra string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case i > 0 && strings.IndexByte(extra, c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Closest is the name of known nearest to typed, when it is close enough
// to be what was meant (about one edit per four characters, at least
// one), else "". A name equal but for case is the closest of all.
func Closest(typed string, known []string) string {
	best, bestDist := "", max(1, len(typed)/4)+1
	for _, c := range known {
		if strings.EqualFold(c, typed) {
			return c
		}
		if dist := distance(typed, c); dist < bestDist {
			best, bestDist = c, dist
		}
	}
	return best
}

// DidYouMean is the hint for a name typed that is none of known: "did you
// mean NAME?" for the Closest one, "" when none is close: how a mistyped
// command or agent name is answered.
func DidYouMean(typed string, known []string) string {
	c := Closest(typed, known)
	switch {
	case c == "":
		return ""
	case c != typed && strings.EqualFold(c, typed):
		return "did you mean " + c + "? names are case-sensitive"
	}
	return "did you mean " + c + "?"
}

// distance is the edit distance of a and b, in bytes, with a swap of two
// neighbours one edit (optimal string alignment): "stauts" is one edit
// from "status", as a person types it.
func distance(a, b string) int {
	pprev := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pprev[j-2]+1)
			}
		}
		pprev, prev, cur = prev, cur, pprev
	}
	return prev[len(b)]
}
