// Package words holds the small wording helpers the commands and their
// packages share.
package words

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
