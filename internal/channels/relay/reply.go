package relay

import (
	"strconv"
	"strings"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// PickReply reads what a person wrote on a service (trimmed, unescaped)
// against the options the clarification offers (router.Options), the same
// way in every mode:
//
//   - "#N" or "option N" (any case), alone or followed by a note ("#2 but
//     only on weekends", "option 2: ..."), picks option N;
//   - the number alone ("2", "2.") picks option N too;
//   - an option's text alone (any case) picks it;
//   - anything else is free text, and so is everything when the
//     clarification offers no options.
//
// A number it does not offer is still a pick: the hub refuses it, naming
// the options (*router.OptionError).
func PickReply(text string, options []router.Option) router.Reply {
	text = strings.TrimSpace(text)
	if len(options) == 0 {
		return router.Reply{Body: text}
	}
	bare := strings.TrimRight(text, ".!")
	for _, o := range options {
		if strings.EqualFold(strings.TrimRight(strings.TrimSpace(o.Text), ".!"), bare) {
			return router.Reply{Option: o.N}
		}
	}
	if n, ok := number(bare); ok {
		return router.Reply{Option: n}
	}
	rest, marked := strings.CutPrefix(text, "#")
	if !marked {
		if len(text) > len("option ") && strings.EqualFold(text[:len("option ")], "option ") {
			rest, marked = strings.TrimLeft(text[len("option "):], " "), true
		}
	}
	if !marked {
		return router.Reply{Body: text}
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, ok := number(rest[:end])
	if !ok || (end < len(rest) && !strings.ContainsRune(" \t\n.):,;-", rune(rest[end]))) {
		return router.Reply{Body: text}
	}
	return router.Reply{Option: n, Body: strings.TrimSpace(strings.TrimLeft(rest[end:], " \t\n.):,;-"))}
}

// number reads an option number: digits only, at most 4, from 1.
func number(s string) (int, bool) {
	if s == "" || len(s) > 4 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// OptionsAt are the options clarification c offered when thread entry i
// was written: what a message carrying that entry lists, the same
// whatever happened since (so a rendering does not change after it).
func OptionsAt(c *ledger.Clarification, i int) []router.Option {
	at := *c
	at.Thread = c.Thread[:i+1]
	if c.Thread[i].Type == ledger.Escalation {
		at.Status = ledger.Escalated
	} else {
		at.Status = ledger.Pending
	}
	return router.Options(&at)
}
