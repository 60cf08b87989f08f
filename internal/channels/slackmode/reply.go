package slackmode

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// ErrEmpty is a reply with no text (a file or an emoji reaction alone): it
// asks nothing of agentx.
var ErrEmpty = errors.New("the reply has no text")

// ParseReply reads a reply's text (Slack's mrkdwn, with &, < and >
// escaped) as a reply to a clarification offering options (router.Options;
// none: free text), as every mode reads one (relay.PickReply): "#2",
// "option 2" or "2" alone picks option 2, "#2 but only on weekends" picks
// it with a note, an option's text alone picks it, and anything else is
// the reply as written, unescaped. An error says why a reply cannot be
// taken: too long, not UTF-8, or (ErrEmpty) no text.
func ParseReply(text string, options []router.Option) (router.Reply, error) {
	if len(text) > ledger.MaxBodyLen {
		return router.Reply{}, fmt.Errorf("the reply is %d bytes; agentx reads at most %d", len(text), ledger.MaxBodyLen)
	}
	if !utf8.ValidString(text) {
		return router.Reply{}, errors.New("the reply is not valid UTF-8")
	}
	text = strings.TrimSpace(unescape(strings.ReplaceAll(text, "\r\n", "\n")))
	if text == "" {
		return router.Reply{}, ErrEmpty
	}
	return relay.PickReply(text, options), nil
}

// unescape undoes Slack's escaping of &, < and >.
func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}
