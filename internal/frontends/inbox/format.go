package inbox

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
)

// Text renders a look for an agent to read: each item with what to do next,
// most important first, then what was left out. It is "" when there is
// nothing new. Every text from the ledgers (names, ids, topics, bodies) is
// neutralised (safetext): the result is what a terminal shows and what a
// Claude Code hook adds to the agent's turn, and no body can forge an item
// or an instruction line of its own.
func Text(res Result) string {
	if len(res.Items) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(header(res))
	for _, it := range res.Items {
		b.WriteString("\n")
		b.WriteString(itemText(it))
	}
	b.WriteString(footer(res))
	return b.String()
}

// header is the first line of a look.
func header(res Result) string {
	n := len(res.Items)
	if res.More == 0 {
		return fmt.Sprintf("agentx inbox for %s: %s.\n", safetext.Line(res.Agent), words.Count(n, "new item", "new items"))
	}
	return fmt.Sprintf("agentx inbox for %s: %s, the %d most important shown.\n", safetext.Line(res.Agent), words.Count(n+res.More, "new item", "new items"), n)
}

// footer says what a look left out, if anything.
func footer(res Result) string {
	var b strings.Builder
	if res.More > 0 || res.Older != nil {
		b.WriteString("\n")
	}
	if res.More > 0 {
		fmt.Fprintf(&b, "%s, for a later look (or now: agentx inbox --agent %s --all).\n", words.Count(res.More, "more item", "more items"), safetext.Line(res.Agent))
	}
	if o := res.Older; o.Total() > 0 {
		var parts []string
		if o.Resolved > 0 {
			parts = append(parts, fmt.Sprintf("%d resolved", o.Resolved))
		}
		if o.Abandoned > 0 {
			parts = append(parts, fmt.Sprintf("%d abandoned", o.Abandoned))
		}
		fmt.Fprintf(&b, "Not shown: %s, already closed (%s): agentx clarify list --all --agent %s\n",
			words.Count(o.Total(), "older clarification", "older clarifications"), strings.Join(parts, ", "), safetext.Line(res.Agent))
	}
	return b.String()
}

// itemText renders one item.
func itemText(it Item) string {
	var b strings.Builder
	it = neutral(it)
	writeItem(&b, it)
	if it.Clipped && it.Kind == KindRevision {
		fmt.Fprintf(&b, "  (Cut short to fit here: agentx eval show %s has it all.)\n", it.ID)
	} else if it.Clipped && it.Kind != KindResolved { // a decision says where the thread is already
		fmt.Fprintf(&b, "  (Cut short to fit here: agentx clarify show %s has it all.)\n", it.ID)
	}
	return b.String()
}

// neutral is it with its one-line fields neutralised; bodies are
// neutralised where they are indented (block).
func neutral(it Item) Item {
	it.ID, it.Topic, it.By = safetext.Line(it.ID), safetext.Line(it.Topic), named(it.By, it.Person)
	return it
}

// named is who wrote an entry, neutralised: an agent by its name, a person
// by the name the ledger records with the role they acted in, "pat
// (human)"; a person whose name is not recorded is "human".
func named(by, person string) string {
	if person == "" {
		return safetext.Line(by)
	}
	return safetext.Line(person) + " (" + safetext.Line(by) + ")"
}

func where(it Item) string {
	return fmt.Sprintf("%s (%s, \"%s\")", it.ID, words.Issue(it.Issue), it.Topic)
}

func writeItem(b *strings.Builder, it Item) {
	switch it.Kind {
	case KindAnswer:
		if len(it.Answers) > 1 {
			writeReplies(b, it)
			break
		}
		if it.Late {
			fmt.Fprintf(b, "* LATE answer from %s to your question %s, round %d. It arrived after you proceeded on an assumption:\n", it.By, where(it), it.Round)
		} else {
			fmt.Fprintf(b, "* Answer from %s to your question %s, round %d:\n", it.By, where(it), it.Round)
		}
		block(b, "Q: ", it.Question)
		block(b, "A: ", it.Body)
		assumptions(b, it)
		if it.Late {
			fmt.Fprintf(b, "  Next: check whether your work still holds with this answer and redo what depended on the assumption; then resolve %s.\n", it.ID)
		} else {
			fmt.Fprintf(b, "  Next: use the answer; resolve %s (clarify_resolve, or agentx clarify resolve %s), or ask a follow-up (clarify_followup).\n", it.ID, it.ID)
		}
	case KindQuestion:
		fmt.Fprintf(b, "* Question for you from %s: %s, round %d:\n", it.By, where(it), it.Round)
		block(b, "Q: ", it.Body)
		for i, o := range it.Options {
			fmt.Fprintf(b, "    option %d: %s\n", i+1, safetext.Line(o))
		}
		block(b, "", it.Card)
		fmt.Fprintf(b, "  Next: answer it (clarify_answer, or agentx clarify answer %s --body \"...\").\n", it.ID)
	case KindResolved:
		// the decision in short, not the resolution's whole text: the
		// thread is a command away
		fmt.Fprintf(b, "* Decision by %s on %s:\n", it.By, where(it))
		block(b, "Q: ", it.Question)
		block(b, "Decision: ", it.Decision)
		fmt.Fprintf(b, "    (The whole thread: agentx clarify show %s.)\n", it.ID)
		assumptions(b, it)
		if it.Late {
			b.WriteString("  Next: follow the decision; check whether your work still holds and redo what depended on the assumption.\n")
		} else {
			b.WriteString("  Next: follow the decision.\n")
		}
	case KindEscalated:
		fmt.Fprintf(b, "* Your question %s was escalated to a human: %s\n", where(it), safetext.Line(it.Body))
		fmt.Fprintf(b, "  Next: proceed on your best judgment and record your assumption (clarify_assume, or agentx clarify assume %s --assumption \"...\"); the decision will arrive here.\n", it.ID)
	case KindRenumbered:
		fmt.Fprintf(b, "* Your question %s was asked while the remote was out of reach as %s; another host had taken %s, so %s now has id %s.\n", where(it), safetext.Line(it.Was), safetext.Line(it.Was), safetext.Line(it.Was), it.ID)
		fmt.Fprintf(b, "  Next: use %s from now on (%s on this host is refused: it is another host's question).\n", it.ID, safetext.Line(it.Was))
	case KindOvertaken:
		fmt.Fprintf(b, "* Your change to %s, made while the remote was out of reach, was not delivered: another host changed it first (%s).\n", where(it), safetext.Line(it.Body))
		fmt.Fprintf(b, "  It is now %s. Next: read it (agentx clarify show %s) and act again if your change still applies.\n", it.Status, it.ID)
	case KindRevision:
		writeRevision(b, it)
	case KindAbandoned:
		reason := it.Body
		if reason == "" {
			reason = "abandoned"
		}
		by := it.By
		if by == "" {
			by = "someone"
		}
		fmt.Fprintf(b, "* Your question %s was closed by %s: %s\n", where(it), by, safetext.Line(reason))
		b.WriteString("  Next: nobody will answer it; proceed on your best judgment.\n")
	}
}

// writeReplies renders an answer of more than one reply: each reply with
// who wrote it and when, in order.
func writeReplies(b *strings.Builder, it Item) {
	n := len(it.Answers)
	if it.Late {
		fmt.Fprintf(b, "* %d LATE answers from %s to your question %s, round %d. The latest arrived after you proceeded on an assumption:\n", n, authors(it.Answers), where(it), it.Round)
	} else {
		fmt.Fprintf(b, "* %d answers from %s to your question %s, round %d:\n", n, authors(it.Answers), where(it), it.Round)
	}
	block(b, "Q: ", it.Question)
	for _, r := range it.Answers {
		block(b, fmt.Sprintf("A (%s, %s): ", named(r.By, r.Person), stamp(r.At)), r.Body)
	}
	assumptions(b, it)
	if it.Late {
		fmt.Fprintf(b, "  Next: check whether your work still holds with these answers and redo what depended on the assumption; then resolve %s.\n", it.ID)
	} else {
		fmt.Fprintf(b, "  Next: use the answers; resolve %s (clarify_resolve, or agentx clarify resolve %s), or ask a follow-up (clarify_followup).\n", it.ID, it.ID)
	}
}

// authors names who wrote rs, each once, in order: "a", "a and b",
// "a, b and c".
func authors(rs []Reply) string {
	var names []string
	for _, r := range rs {
		if n := named(r.By, r.Person); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// stamp is how a look shows a time: to the minute, in UTC.
func stamp(t ledger.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func assumptions(b *strings.Builder, it Item) {
	for _, a := range it.Assumptions {
		block(b, fmt.Sprintf("You assumed (round %d, %s): ", a.Round, stamp(a.Timestamp)), a.Body)
	}
}

// block writes label and body indented, continuation lines aligned.
func block(b *strings.Builder, label, body string) {
	if body == "" {
		return
	}
	b.WriteString(safetext.Indent(body, "    "+label, strings.Repeat(" ", 4+len(label))))
}

// The Claude Code hook events whose JSON output may add context to the
// agent's turn.
const (
	HookUserPromptSubmit = "UserPromptSubmit"
	HookSessionStart     = "SessionStart"
	HookPostToolUse      = "PostToolUse"
)

// HookEvents lists the events ClaudeHook accepts.
var HookEvents = []string{HookUserPromptSubmit, HookSessionStart, HookPostToolUse}

// ClaudeHook renders a look as the JSON a Claude Code command hook prints
// on stdout (exit 0) to add context to the agent's turn:
//
//	{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"..."}}
//
// It returns nil when there is nothing new, so the hook prints nothing.
func ClaudeHook(event string, res Result) ([]byte, error) {
	if !ValidHookEvent(event) {
		return nil, fmt.Errorf("hook event %q: use one of %s", event, strings.Join(HookEvents, ", "))
	}
	text := Text(res)
	if text == "" {
		return nil, nil
	}
	out := hookOutput{HookSpecificOutput: hookSpecific{HookEventName: event, AdditionalContext: text}}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode hook output: %w", err)
	}
	return append(b, '\n'), nil
}

// HookTextLimit is the Options.Limit that keeps ClaudeHook's whole output
// for event, newline included, within HookLimit.
func HookTextLimit(event string) int {
	empty, _ := json.Marshal(hookOutput{HookSpecificOutput: hookSpecific{HookEventName: event}}) // always encodes
	return HookLimit - len(empty) - 1
}

// ValidHookEvent reports whether ClaudeHook accepts event.
func ValidHookEvent(event string) bool { return slices.Contains(HookEvents, event) }

type hookOutput struct {
	HookSpecificOutput hookSpecific `json:"hookSpecificOutput"`
}

type hookSpecific struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

// writeRevision renders a revision request: the gate's text, indented.
func writeRevision(b *strings.Builder, it Item) {
	fmt.Fprintf(b, "* Your work on %s (%s) was sent back for revision:\n", words.Issue(it.Issue), it.Topic)
	block(b, "", it.Body)
}
