package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// The person at the agent's window. When the workspace allows it ([mcp]
// elicit = true) and the client can show a form (it declared the
// elicitation capability), ask_human also shows its question there, as an
// MCP elicitation form: the question, and a text box, or the options as a
// choice. The form is one more surface beside the command line, Slack,
// GitHub and the desk, and it races them: the first answer recorded under
// the ledger's lock wins. The form's answer is taken only while the round
// it was shown for still waits for an answer, so a late one is refused
// (and the person told so, in a second form that only informs) and never
// stored twice; an answer given elsewhere first closes the form (the
// elicitation request is cancelled). The answer is a person's, recorded
// as human signed "elicitation:CLIENT", CLIENT being the name the client
// gave (see PersonPrefix).

// PersonPrefix is how a person who answered through an elicitation form
// is recorded: at a client that calls itself claude-code, as the person
// elicitation:claude-code.
const PersonPrefix = "elicitation:"

// answerField is the form's one field.
const answerField = "answer"

// formPoll is how often, at most, a shown form's question is looked at,
// to close the form once it is answered elsewhere.
const formPoll = time.Second

type sessionKey struct{}

// formSession is the session of the call whose context ctx is, if the
// question may be shown there as a form: the workspace allows it and the
// client can show one. Nil otherwise.
func (s *server) formSession(ctx context.Context) *mcp.ServerSession {
	ss, _ := ctx.Value(sessionKey{}).(*mcp.ServerSession)
	if ss == nil || !s.hub.Rules.Config.MCP.Elicit {
		return nil
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return nil
	}
	if e := p.Capabilities.Elicitation; e.Form == nil && e.URL != nil {
		return nil // a client that shows only URLs
	}
	return ss
}

// showForm shows rec's question to the person at ss's client, in the
// background: the call that asked it goes on (returns, or waits for the
// answer, which may be the form's).
func (s *server) showForm(ss *mcp.ServerSession, rec router.Record) {
	c := rec.Clarification
	f := form{id: c.ID, round: c.Round, options: optionsOf(c), client: clientName(ss)}
	s.detach(func(ctx context.Context) { s.elicit(ctx, ss, f, rec) })
}

// form is a question shown as a form: what its answer is checked against.
type form struct {
	id      string
	round   int
	options []string
	client  string
}

// elicit shows the form and records its answer; it returns when the
// person answered, declined or dismissed it, the question was answered
// elsewhere, or the session ended.
func (s *server) elicit(ctx context.Context, ss *mcp.ServerSession, f form, rec router.Record) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // close the form once the question no longer waits for it
		if s.waitMoved(ctx, f) {
			cancel()
		}
	}()
	res, err := ss.Elicit(ctx, formParams(rec))
	switch {
	case err != nil && ctx.Err() != nil:
		s.log.Info("form closed", "id", f.id, "why", context.Cause(ctx))
		return
	case err != nil:
		s.log.Warn("could not show the question as a form", "id", f.id, "error", err)
		return
	case res.Action != "accept":
		s.log.Info("form not answered", "id", f.id, "action", res.Action)
		return
	}
	body, err := f.answer(res.Content)
	if err == nil {
		err = s.takeFormAnswer(ctx, f, body)
	}
	if err != nil {
		s.log.Info("form answer refused", "id", f.id, "error", err)
		s.tell(ctx, ss, err)
	}
}

// waitMoved waits until f's question no longer waits for an answer to
// f's round, and reports whether it did (false: ctx ended first).
func (s *server) waitMoved(ctx context.Context, f form) bool {
	poll := 100 * time.Millisecond
	for {
		rec, err := s.hub.Get(f.id)
		if err == nil && !waiting(rec.Clarification, f.round) {
			return true
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		poll = min(poll*2, s.formPoll)
	}
}

// waiting reports whether c still waits for an answer to round.
func waiting(c *ledger.Clarification, round int) bool {
	return c.Round == round && (c.Status == ledger.Pending || c.Status == ledger.Stale)
}

// answer is the answer a form's content gives: the answer field, a
// non-blank string, one of the options if the form offered them. The
// content comes from the client: it is checked, never trusted.
func (f form) answer(content map[string]any) (string, error) {
	v, ok := content[answerField]
	body, isText := v.(string)
	switch {
	case !ok:
		return "", &FormError{ID: f.id, Why: "the form came back without an answer"}
	case !isText || strings.TrimSpace(body) == "":
		return "", &FormError{ID: f.id, Why: "the answer is empty or not text"}
	case len(f.options) > 0 && !slices.Contains(f.options, body):
		return "", &FormError{ID: f.id, Why: "the answer is not one of the options"}
	}
	return body, nil
}

// takeFormAnswer records body as the person's answer to f's round, under
// the ledger's lock, if that round still waits for one: the first answer
// wins, wherever it comes from. A round answered (or closed) first is an
// *AnsweredElsewhereError.
func (s *server) takeFormAnswer(ctx context.Context, f form, body string) error {
	person := PersonPrefix + f.client
	ctx = router.WithCaller(ctx, &router.Caller{Via: "an elicitation form", Person: func() (string, error) { return person, nil }})
	ctx = router.WithOnce(ctx, &router.Once{Done: func(l *ledger.Ledger) (bool, error) {
		c := l.Find(f.id)
		return c == nil || !waiting(c, f.round), nil // taken only while its round waits
	}})
	_, err := s.hub.Answer(ctx, f.id, ledger.Human, body)
	var skipped *router.SkippedError
	if errors.As(err, &skipped) && skipped.Reason == router.OnceDone {
		return s.elsewhere(f)
	}
	if err != nil {
		return fmt.Errorf("%s: recording the form's answer: %w", f.id, err)
	}
	s.log.Info("answered through a form", "id", f.id, "person", person)
	if s.opts.Side != nil { // mirror it: a Slack thread or GitHub comment says it is answered
		if side := s.opts.Side(); side != nil {
			side.Push(ctx)
		}
	}
	return nil
}

// elsewhere is the error that says what became of f's question.
func (s *server) elsewhere(f form) error {
	e := &AnsweredElsewhereError{ID: f.id}
	rec, err := s.hub.Get(f.id)
	if err != nil {
		return e
	}
	c := rec.Clarification
	e.Status = c.Status
	for i, t := range c.Thread {
		if t.Type == ledger.Answer && t.Round == f.round {
			e.By, e.Answer = t.From, t.Body
			if p := c.PersonAt(i); p != "" {
				e.By += " (" + p + ")"
			}
			break
		}
	}
	return e
}

// tell shows the person why their form's answer was not recorded: a form
// with nothing to fill in, which clients show as a message.
func (s *server) tell(ctx context.Context, ss *mcp.ServerSession, why error) {
	_, err := ss.Elicit(ctx, &mcp.ElicitParams{
		Mode:            "form",
		Message:         "Your answer was not recorded: " + line(why.Error()),
		RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
	})
	if err != nil {
		s.log.Info("could not tell the person", "error", err)
	}
}

// formParams is the form for rec's question: who asks, about what, the
// question, and a text box or the options as a choice. The text is the
// agent's: neutralised as every text the server returns is.
func formParams(rec router.Record) *mcp.ElicitParams {
	c := rec.Clarification
	question := c.Topic
	if q := c.Current(ledger.Question); q != nil {
		question = q.Body
	}
	msg := fmt.Sprintf("%s asks you (%s, %s): %s\n\n%s", line(c.From), line(c.ID), issueLabel(rec.IssueNumber), line(c.Topic), block(question))
	field := &jsonschema.Schema{Type: "string", Title: "Your answer", MinLength: new(1)}
	if opts := optionsOf(c); len(opts) > 0 {
		field.Title = "Your choice"
		field.Enum = enum(opts)
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: &jsonschema.Schema{
			Type:       "object",
			Properties: map[string]*jsonschema.Schema{answerField: field},
			Required:   []string{answerField},
		},
	}
}

// clientName is the name ss's client gave (see cleanClientName).
func clientName(ss *mcp.ServerSession) string {
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		return cleanClientName(p.ClientInfo.Name)
	}
	return cleanClientName("")
}

// cleanClientName is a client's name as a person's name may hold it:
// printable characters but spaces, at most 64 bytes; "client" when none
// is left. The client chose it: it is a label, not a proof.
func cleanClientName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(name, ""))
	for len(name) > 64 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "" {
		return "client"
	}
	return name
}

// optionsOf is the options c's question offers.
func optionsOf(c *ledger.Clarification) []string {
	if c.X == nil {
		return nil
	}
	return slices.Clone(c.X.Options)
}

// FormError is a form's answer that cannot be taken: the content the
// client sent back is not an answer the form asked for.
type FormError struct {
	ID  string
	Why string
}

func (e *FormError) Error() string { return fmt.Sprintf("%s: %s", e.ID, e.Why) }

// AnsweredElsewhereError is a form's answer that came after the question
// was answered (or closed) another way: it is not recorded.
type AnsweredElsewhereError struct {
	ID     string
	Status ledger.Status
	By     string // who answered first, with the person's provenance
	Answer string
}

func (e *AnsweredElsewhereError) Error() string {
	switch {
	case e.By != "":
		return fmt.Sprintf("%s was answered first by %s: %q", e.ID, e.By, clip(e.Answer, 200))
	case e.Status != "":
		return fmt.Sprintf("%s is %s: it no longer waits for this answer", e.ID, e.Status)
	}
	return e.ID + " no longer waits for this answer"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
