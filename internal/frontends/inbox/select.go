package inbox

import (
	"cmp"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// HookLimit is the most a look prints for a Claude Code hook, in bytes of
// the hook's whole output. Claude Code caps the context a hook adds at
// 10,000 characters and past that gives the model only a short preview and
// a file path, so a new answer at the end would be lost; 9,000 bytes (never
// more characters than bytes) leaves room for what Claude Code wraps
// around it. Plain text looks keep to the same size.
const HookLimit = 9000

// The order items are delivered in, most important first.
const (
	rankUnblocks  = iota // an answer or decision on the agent's blocking question
	rankEscalated        // the agent's question went to a human
	rankQuestion         // a question waiting for the agent
	rankAnswer           // an answer or decision on its non-blocking question
	rankOther            // closures, decisions on questions it was asked
)

// rank is how important an item is to agent: what unblocks it first, then
// its escalations, then what others wait on it for.
func rank(it Item, agent string) int {
	mine := it.From == agent
	settles := it.Kind == KindAnswer || it.Kind == KindResolved
	switch {
	case mine && settles && it.Blocking:
		return rankUnblocks
	case mine && it.Kind == KindEscalated, told(it.Kind):
		return rankEscalated
	case it.Kind == KindQuestion:
		return rankQuestion
	case mine && settles:
		return rankAnswer
	}
	return rankOther
}

// order sorts a look's candidates for agent most important first: by rank,
// then newest first (by time, then by place in the log).
func order(cs []candidate, agent string) {
	slices.SortStableFunc(cs, func(a, b candidate) int {
		return cmp.Or(
			cmp.Compare(rank(a.item, agent), rank(b.item, agent)),
			b.item.At.Compare(a.item.At.Time),
			cmp.Compare(b.start, a.start),
		)
	})
}

// size is the length of s in a JSON string, as the hook prints it.
func size(s string) int {
	b, _ := json.Marshal(s) // a string always encodes
	return len(b) - 2
}

// fit returns the leading items whose text, with r's header and footer,
// takes at most limit bytes (see size), and how many were left out. An
// item larger than half the limit is clipped to that, so one long answer
// cannot crowd out the rest. limit 0: all of them.
func fit(items []Item, r Result, limit int) ([]Item, int) {
	if limit <= 0 || len(items) == 0 {
		return items, 0
	}
	out := make([]Item, 0, len(items))
	used := 0
	for i, it := range items {
		it = clip(it, limit/2)
		r.Items, r.More = append(out, it), len(items)-i-1
		s := 1 + size(itemText(it)) // a blank line before each item
		frame := size(header(r)) + size(footer(r))
		if used+s+frame > limit {
			if len(out) == 0 {
				// not even one fits: clip it to what is left
				if it = clip(it, limit-frame-1); 1+size(itemText(it))+frame <= limit {
					out = append(out, it)
				}
			}
			break
		}
		out = append(out, it)
		used += s
	}
	return out, len(items) - len(out)
}

// clipMark ends a body that was cut.
const clipMark = " [...]"

// clip shortens the item's bodies until its text takes at most max bytes
// (or there is nothing left to cut). What is new comes last: the item's
// context (the question it answers, the agent's own assumptions) is cut
// first, longest first, down to a gist (ctxGist bytes); then its news (an
// answer's replies, else Body), longest first; then whatever is left. So
// an answer within ledger.MaxMessageLen reaches its asker whole, beside
// the gist of its question. An answer's body is its replies: each is a
// body of its own (so one long reply does not cost a short one its
// words), and Body is joined again from what is left of them.
func clip(it Item, max int) Item {
	it.Assumptions = slices.Clone(it.Assumptions)
	it.Answers = slices.Clone(it.Answers)
	for size(itemText(it)) > max {
		var context, news []*string
		for i := range it.Answers {
			news = append(news, &it.Answers[i].Body)
		}
		if len(it.Answers) == 0 && it.Kind != KindResolved { // a decision shows Decision, not Body
			news = append(news, &it.Body)
		}
		context = append(context, &it.Question, &it.Card)
		for i := range it.Assumptions {
			context = append(context, &it.Assumptions[i].Body)
		}
		longest := longestOver(context, ctxGist)
		if longest == nil {
			longest = longestOver(news, 2*len(clipMark))
		}
		if longest == nil {
			longest = longestOver(append(news, context...), 2*len(clipMark))
		}
		if longest == nil {
			break
		}
		*longest = cut(*longest, len(*longest)/2) + clipMark
		if len(it.Answers) > 0 {
			it.Body = joinReplies(it.Answers)
		}
		it.Clipped = true
	}
	return it
}

// ctxGist is how short clip cuts an item's context before its news.
const ctxGist = 160

// longestOver is the longest of fields longer than n bytes, or nil.
func longestOver(fields []*string, n int) *string {
	var out *string
	for _, f := range fields {
		if len(*f) > n && (out == nil || len(*f) > len(*out)) {
			out = f
		}
	}
	return out
}

// cut returns s's first n bytes or fewer, ending on a whole rune.
func cut(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
