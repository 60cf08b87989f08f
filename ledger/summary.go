package ledger

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentx-cli/agentx/internal/safetext"
)

// MaxSummarySentences is how many sentences a decision's summary may have.
const MaxSummarySentences = 2

// ValidateSummary checks a decision's summary as given when resolving
// (field names where it came from: --summary, summary): not blank, one
// line of plain text (no control characters, nor the invisible or
// bidirectional marks that hide or reorder text), one or two sentences, at
// most MaxSummary bytes. Leading and trailing spaces are the caller's to
// trim. Every refusal is an *InputError.
func ValidateSummary(field, s string) error {
	advice := "say what was decided in a sentence or two; the thread keeps the rest"
	switch {
	case strings.TrimSpace(s) == "":
		return &InputError{Field: field, Value: s, Msg: "is empty", Advice: "leave it out to have the decision taken from the resolution, or " + advice}
	case !utf8.ValidString(s):
		return &InputError{Field: field, Value: s, Msg: "is not valid UTF-8"}
	case len(s) > MaxSummary:
		return &InputError{Field: field, Value: s, Msg: fmt.Sprintf("is %d bytes; the limit is %d", len(s), MaxSummary), Advice: advice}
	}
	if i := safetext.Index(s, false); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return &InputError{Field: field, Value: s, Msg: fmt.Sprintf("has a control character (%U at byte %d): a summary is one line of plain text", r, i), Advice: advice}
	}
	if n := sentences(s); n > MaxSummarySentences {
		return &InputError{Field: field, Value: s, Msg: fmt.Sprintf("is %d sentences; a summary is one or two", n), Advice: advice}
	}
	return nil
}

// sentences counts the sentences of one line of text: a sentence ends at a
// full stop, question or exclamation mark (or a run of them, and any
// closing quotes or brackets) followed by a space and a capital letter or
// a digit. So "e.g. this", "v1.2.3" and "etc. and" end none.
func sentences(s string) int {
	n := 1
	rs := []rune(strings.TrimSpace(s))
	for i := 0; i < len(rs); i++ {
		if !strings.ContainsRune(".?!", rs[i]) {
			continue
		}
		j := i + 1
		for j < len(rs) && strings.ContainsRune(".?!\"')]’”»", rs[j]) {
			j++
		}
		k := j
		for k < len(rs) && unicode.IsSpace(rs[k]) {
			k++
		}
		if k > j && k < len(rs) && (unicode.IsUpper(rs[k]) || unicode.IsDigit(rs[k])) {
			n++
		}
		i = j - 1
	}
	return n
}
