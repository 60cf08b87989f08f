// Package words holds the small wording helpers the commands and their
// packages share.
package words

import "strings"

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
