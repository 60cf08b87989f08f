package ghmirror

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentx-cli/agentx/ledger"
)

// Verb is what a comment asks agentx to do.
type Verb string

// The comment commands. Plain is a comment with no command: an answer when
// exactly one clarification on the issue waits on a person.
const (
	VerbAnswer  Verb = "answer"
	VerbResolve Verb = "resolve"
	VerbPlain   Verb = ""
)

// Command is a comment read as an instruction to agentx.
type Command struct {
	Verb Verb
	ID   string // the clarification (none for Plain)
	Text string // the answer or decision, trimmed
}

// MaxCommentRead is the longest comment agentx reads as a command, in
// bytes: a ledger body's limit.
const MaxCommentRead = ledger.MaxBodyLen

// ErrNotCommand is a comment that asks nothing of agentx: a command it
// does not know (/approve), or no text at all.
var ErrNotCommand = errors.New("not an agentx command")

// ParseCommand reads a comment's body. A command is the comment's first
// non-blank line: "/answer CLR-42-001 text" or "/resolve CLR-42-001
// decision", the text going on over the following lines. Any other
// comment is Plain, its whole body the text. An error says why a command
// cannot be taken (its id is not a clarification id, it has no text, the
// comment is too long or not UTF-8); ErrNotCommand when the comment asks
// nothing of agentx at all.
func ParseCommand(body string) (Command, error) {
	if len(body) > MaxCommentRead {
		return Command{}, fmt.Errorf("the comment is %d bytes; agentx reads at most %d", len(body), MaxCommentRead)
	}
	if !utf8.ValidString(body) {
		return Command{}, errors.New("the comment is not valid UTF-8")
	}
	body = strings.ReplaceAll(body, "\r\n", "\n")
	trimmed := strings.TrimLeft(body, " \t\n")
	if !strings.HasPrefix(trimmed, "/") {
		text := strings.TrimSpace(body)
		if text == "" {
			return Command{}, ErrNotCommand
		}
		return Command{Verb: VerbPlain, Text: text}, nil
	}
	first, rest, _ := strings.Cut(trimmed, "\n")
	first = strings.ReplaceAll(first, "\t", " ")
	word, args, _ := strings.Cut(strings.TrimRight(first, " \t"), " ")
	var verb Verb
	switch word {
	case "/answer":
		verb = VerbAnswer
	case "/resolve":
		verb = VerbResolve
	default:
		return Command{}, ErrNotCommand
	}
	args = strings.TrimLeft(args, " \t")
	id, text, _ := strings.Cut(args, " ")
	if _, _, err := ledger.ParseID(id); err != nil {
		return Command{Verb: verb}, fmt.Errorf("%s needs a clarification id first, like %s CLR-42-001 <text>", word, word)
	}
	text = strings.TrimSpace(text + "\n" + rest)
	if text == "" {
		what := "answer"
		if verb == VerbResolve {
			what = "decision"
		}
		return Command{Verb: verb, ID: id}, fmt.Errorf("%s %s has no %s: write it after the id", word, id, what)
	}
	return Command{Verb: verb, ID: id, Text: text}, nil
}
