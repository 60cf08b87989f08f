package slackmode

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentx-cli/agentx/ledger"
)

// ErrEmpty is a reply with no text (a file or an emoji reaction alone): it
// asks nothing of agentx.
var ErrEmpty = errors.New("the reply has no text")

// Reply is a thread reply read as an answer.
type Reply struct {
	Text   string // what the ledger records
	Option int    // the option chosen, from 1; 0 when none was
}

// ParseReply reads a reply's text (Slack's mrkdwn, with &, < and >
// escaped) as an answer to a question offering options (none: free
// text). A reply that is an option's number ("2", "2.", "#2", "option 2")
// or its label (any case) answers with the label; a number followed by
// more ("2, but only on weekends") answers with the label and that text.
// Any other reply is the answer as written, unescaped. An error says why a
// reply cannot be an answer: too long, not UTF-8, or (ErrEmpty) no text.
func ParseReply(text string, options []string) (Reply, error) {
	if len(text) > ledger.MaxBodyLen {
		return Reply{}, fmt.Errorf("the reply is %d bytes; agentx reads at most %d", len(text), ledger.MaxBodyLen)
	}
	if !utf8.ValidString(text) {
		return Reply{}, errors.New("the reply is not valid UTF-8")
	}
	text = strings.TrimSpace(unescape(strings.ReplaceAll(text, "\r\n", "\n")))
	if text == "" {
		return Reply{}, ErrEmpty
	}
	if len(options) == 0 {
		return Reply{Text: text}, nil
	}
	for k, o := range options {
		if strings.EqualFold(strings.TrimSpace(o), strings.TrimRight(text, ".!")) {
			return Reply{Text: o, Option: k + 1}, nil
		}
	}
	s := strings.TrimPrefix(text, "#")
	if rest, ok := cutFold(s, "option "); ok {
		s = strings.TrimLeft(rest, " ")
	}
	end := 0
	for end < len(s) && end < 4 && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == 0 {
		return Reply{Text: text}, nil
	}
	n, _ := strconv.Atoi(s[:end])
	rest := s[end:]
	if n < 1 || n > len(options) || (rest != "" && !strings.ContainsRune(" \t\n.):,;-", rune(rest[0]))) {
		return Reply{Text: text}, nil
	}
	rest = strings.TrimSpace(strings.TrimLeft(rest, " \t\n.):,;-"))
	if rest == "" {
		return Reply{Text: options[n-1], Option: n}, nil
	}
	return Reply{Text: options[n-1] + ": " + rest, Option: n}, nil
}

// unescape undoes Slack's escaping of &, < and >.
func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// cutFold is strings.CutPrefix, ignoring case.
func cutFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
