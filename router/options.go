package router

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/ledger"
)

// Reply is what a party gives to answer or resolve: free text, a numbered
// option (1-based; 0 = none), or an option with a note. Every front end
// (the command line, MCP, the desk) hands its reply to AnswerReply or
// ResolveReply, so an option is checked and stored one way. A resolution
// may also say what was decided in a sentence or two (Summary, stored as
// agentx.summary; see ledger.Clarification.Decision).
type Reply struct {
	Body   string
	Option int
	// Summary is the decision in a sentence or two
	// (ledger.ValidateSummary), for resolving only; "" stores none.
	Summary string
}

// Option is one numbered choice a clarification offers.
type Option struct {
	N    int    `json:"n"`
	Text string `json:"text"`
	// Decision is the text a pick records (the option, and for an
	// escalation the position it accepts); "" when the option needs the
	// person's own words (a new decision).
	Decision string `json:"-"`
}

// NeedsBody reports whether picking o records nothing without the
// person's own text (a new decision).
func (o Option) NeedsBody() bool { return o.Decision == "" }

// Position is one side of an escalated clarification: who holds it and
// what they said last.
type Position struct {
	Agent string `json:"agent"`
	Text  string `json:"text"`
}

// Positions are an escalated clarification's two sides: the asker's latest
// question or proposal, and the asked side's latest answer (Text "" when it
// never answered).
func Positions(c *ledger.Clarification) (asker, asked Position) {
	asker = Position{Agent: c.From, Text: askerLatest(c)}
	asked = Position{Agent: c.To}
	if a := c.Current(ledger.Answer); a != nil {
		asked = Position{Agent: a.From, Text: a.Body}
	}
	return asker, asked
}

// askerLatest is the asker's newest position: quoted in the escalation
// entry (a follow-up refused at the round limit is only there), else its
// current question.
func askerLatest(c *ledger.Clarification) string {
	if e := c.Current(ledger.Escalation); e != nil {
		if q, ok := quotedAfter(e.Body, c.From+" (asker), latest question:"); ok {
			return q
		}
	}
	if q := c.Current(ledger.Question); q != nil {
		return q.Body
	}
	return ""
}

// askerProposed reports whether c's asker put forward a position of its
// own, latest (its newest, askerLatest), that a person may accept: a
// follow-up, which answers the answer it got (a question of a round after
// the first), or one refused at the round limit and quoted in the
// escalation entry. An asker that only asked its first question proposed
// nothing: accepting its "proposal" would record the question as the
// decision.
func askerProposed(c *ledger.Clarification, latest string) bool {
	q := c.Current(ledger.Question)
	if q == nil {
		return strings.TrimSpace(latest) != ""
	}
	return q.Round > 1 || strings.TrimSpace(latest) != "" && latest != q.Body
}

// quotedAfter reads the "  > " block that follows the line head in an
// escalation body EscalationBody wrote.
func quotedAfter(body, head string) (string, bool) {
	_, rest, ok := strings.Cut(body, "\n"+head+"\n")
	if !ok {
		return "", false
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		t, ok := strings.CutPrefix(l, "  > ")
		if !ok {
			if l == "  >" {
				t = ""
			} else {
				break
			}
		}
		lines = append(lines, t)
	}
	q := strings.Join(lines, "\n")
	if len(lines) == 0 || q == "(none)" || strings.Contains(q, "\n  [... cut:") {
		return "", false
	}
	return q, true
}

// Options are the numbered choices c offers: an escalated clarification's
// decisions (the options its escalation entry lists), else the options its
// asker offered (ask_human's multiple choice); nil when it offers none.
func Options(c *ledger.Clarification) []Option {
	asked := c.X != nil && len(c.X.Options) > 0
	if c.Status == ledger.Escalated && (!asked || c.Current(ledger.Answer) != nil) {
		asker, asked := Positions(c)
		if asked.Text == "" {
			return []Option{
				{N: 1, Text: fmt.Sprintf("Answer %s's question yourself.", asker.Agent)},
				{N: 2, Text: "Give a new decision."},
			}
		}
		out := []Option{{N: 1, Text: fmt.Sprintf("Accept %s's answer.", asked.Agent), Decision: fmt.Sprintf("Decision: accept %s's answer:\n%s", asked.Agent, asked.Text)}}
		if askerProposed(c, asker.Text) {
			out = append(out, Option{N: 2, Text: fmt.Sprintf("Accept %s's proposal.", asker.Agent), Decision: fmt.Sprintf("Decision: accept %s's proposal:\n%s", asker.Agent, asker.Text)})
		}
		return append(out, Option{N: len(out) + 1, Text: "Give a new decision."})
	}
	if !asked {
		return nil
	}
	out := make([]Option, len(c.X.Options))
	for i, o := range c.X.Options {
		out[i] = Option{N: i + 1, Text: o, Decision: o}
	}
	return out
}

// OptionError is an option number a clarification does not offer, or an
// option that needs the person's own text given without it: a usage error
// that names the options.
type OptionError struct {
	ID      string
	N       int
	Options []Option
	NoBody  bool // option N needs text of its own and none was given
}

func (e *OptionError) Error() string {
	if e.NoBody {
		return fmt.Sprintf("option %d of %s (%s) needs the decision's text", e.N, e.ID, e.Options[e.N-1].Text)
	}
	if len(e.Options) == 0 {
		return fmt.Sprintf("%s offers no options: reply with text", e.ID)
	}
	return fmt.Sprintf("%s has no option %d: its options are %s", e.ID, e.N, e.List())
}

// List names the options in one line: 1. A; 2. B.
func (e *OptionError) List() string {
	parts := make([]string, len(e.Options))
	for i, o := range e.Options {
		parts[i] = fmt.Sprintf("%d. %s", o.N, o.Text)
	}
	return strings.Join(parts, "; ")
}

// Hint says what to do instead.
func (e *OptionError) Hint() string {
	if e.NoBody {
		return "give the decision as text with the option"
	}
	if len(e.Options) == 0 {
		return "give the reply as text"
	}
	return fmt.Sprintf("pick an option from 1 to %d", len(e.Options))
}

// pick is the text reply r records on c (under the ledger's lock), and the
// choice to note for it (nil without an option): the option's decision,
// with the reply's body after it as a note, or the body alone for an
// option that needs one.
func pick(c *ledger.Clarification, r Reply) (string, *ledger.Choice, error) {
	if r.Option == 0 {
		return r.Body, nil, nil
	}
	opts := Options(c)
	if r.Option < 0 || r.Option > len(opts) {
		return "", nil, &OptionError{ID: c.ID, N: r.Option, Options: opts}
	}
	o := opts[r.Option-1]
	text := o.Decision
	switch {
	case o.NeedsBody() && strings.TrimSpace(r.Body) == "":
		return "", nil, &OptionError{ID: c.ID, N: r.Option, Options: opts, NoBody: true}
	case o.NeedsBody():
		text = r.Body
	case strings.TrimSpace(r.Body) != "":
		text += "\n\n" + r.Body
	}
	if err := ledger.ValidateText("reply", text, ledger.MaxBodyLen); err != nil {
		return "", nil, err
	}
	return text, &ledger.Choice{Option: o.N, Text: o.Text}, nil
}

// validateReply checks what a person or agent wrote in a reply, before
// anything is read or written: the text (field) of a reply without an
// option, or the note given with one, within ledger.MaxMessageLen. What
// pick makes of an option (its decision, quoting a position, and the
// note) is checked against the ledger's body limit there.
func validateReply(field string, r Reply) error {
	if r.Option != 0 && strings.TrimSpace(r.Body) == "" {
		return nil // an option alone: pick says whether it needs text
	}
	return ledger.ValidateMessage(field, r.Body)
}

// AnswerReply is Answer with a Reply: an option of the question's picks
// its text (an option number it does not offer is an *OptionError).
func (h *Hub) AnswerReply(ctx context.Context, id, from string, r Reply) (Record, error) {
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	return h.answer(ctx, id, from, r, 0)
}

// ResolveReply is Resolve with a Reply: an option of an escalation (or of
// the question) picks the decision recorded.
func (h *Hub) ResolveReply(ctx context.Context, id, from string, r Reply) (Record, error) {
	if err := h.named(id); err != nil {
		return Record{}, err
	}
	return h.resolve(ctx, id, from, r)
}

// pickedInRound is the option an answer of c's current round picked
// first, or nil.
func pickedInRound(c *ledger.Clarification) *ledger.Choice {
	var first *ledger.Choice
	for i := len(c.Thread) - 1; i >= 0 && c.Thread[i].Round == c.Round; i-- {
		if ch := c.ChoiceAt(i); c.Thread[i].Type == ledger.Answer && ch != nil {
			first = ch
		}
	}
	return first
}

// PickedError is a second pick of an option for a round whose answer
// picked one already, from whichever surface: the first pick stands. It
// is an invalid transition (exit 6).
type PickedError struct {
	ID    string
	First ledger.Choice // the pick that stands
}

func (e *PickedError) Error() string {
	return fmt.Sprintf("%s was answered already with option %d (%s), and the first pick stands; a reply without an option adds a note to that answer",
		e.ID, e.First.Option, e.First.Text)
}

// Unwrap makes it an invalid transition: answered to answered.
func (e *PickedError) Unwrap() error {
	return &ledger.TransitionError{ID: e.ID, From: ledger.Answered, To: ledger.Answered}
}
