package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// Outcome is where a question stands for its asker.
type Outcome string

// The outcomes of clarify_ask, ask_human, clarify_followup and clarify_wait.
const (
	OutcomeAnswered  Outcome = "answered"  // the current round has an answer
	OutcomePending   Outcome = "pending"   // no answer yet, and no wait was asked for
	OutcomeTimedOut  Outcome = "timed_out" // waited, and no answer came
	OutcomeEscalated Outcome = "escalated" // handed to a human to decide
	OutcomeResolved  Outcome = "resolved"  // closed with a resolution
	OutcomeAbandoned Outcome = "abandoned" // closed unanswered
)

// TimedOutGuidance is what an asker is told when its wait ends unanswered.
const TimedOutGuidance = "proceed on your best judgment and record your assumption with clarify_assume"

// AskInput is clarify_ask's input.
type AskInput struct {
	Issue       int      `json:"issue" jsonschema:"the issue number the question is about (0 = no issue)"`
	To          string   `json:"to" jsonschema:"whom to ask: an upstream agent such as architect or product-manager, or human"`
	Topic       string   `json:"topic" jsonschema:"a short subject, up to 200 bytes"`
	Question    string   `json:"question" jsonschema:"the question, with the context the one asked needs to answer it; at most 3000 bytes"`
	Blocking    *bool    `json:"blocking,omitempty" jsonschema:"true (default): you cannot finish without the answer; false: you keep working meanwhile (some workflow steps allow only false)"`
	From        string   `json:"from,omitempty" jsonschema:"who asks: leave it out, you act as this server's agent (AGENTX_AGENT); only a server without one needs it"`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds for the answer (default 0: return at once; capped by the server)"`
	Refs        []string `json:"refs,omitempty" jsonschema:"files the question is about, each PATH or PATH:LINES (a line, 12, or a range, 12-40), relative to the repository root: the one asked is given those lines and a few around them (at most 20 files)"`
}

// AskHumanInput is ask_human's input.
type AskHumanInput struct {
	Question    string   `json:"question" jsonschema:"the question for a person, with the context they need; at most 3000 bytes"`
	Issue       *int     `json:"issue,omitempty" jsonschema:"the issue number (default: the server's AGENTX_ISSUE, else 0 = no issue)"`
	Topic       string   `json:"topic,omitempty" jsonschema:"a short subject (default: the start of the question)"`
	Options     []string `json:"options,omitempty" jsonschema:"choices to offer the human (multiple choice); they may still answer freely; end one with (default) to propose it"`
	Blocking    *bool    `json:"blocking,omitempty" jsonschema:"true (default): you cannot finish without the answer"`
	From        string   `json:"from,omitempty" jsonschema:"who asks: leave it out, you act as this server's agent (AGENTX_AGENT); only a server without one needs it"`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds for the answer (default 0: return at once; capped by the server)"`
	Refs        []string `json:"refs,omitempty" jsonschema:"files the question is about, each PATH or PATH:LINES (a line, 12, or a range, 12-40), relative to the repository root: the person is shown those lines and a few around them (at most 20 files)"`
}

// AskResult is where a question stands: the result of clarify_ask,
// ask_human, clarify_followup and clarify_wait.
type AskResult struct {
	ID         string        `json:"id" jsonschema:"the clarification id, such as CLR-42-001"`
	Issue      int           `json:"issue"`
	Outcome    Outcome       `json:"outcome" jsonschema:"answered, pending, timed_out, escalated, resolved or abandoned"`
	Status     ledger.Status `json:"status" jsonschema:"the clarification's status in the ledger"`
	Round      int           `json:"round"`
	To         string        `json:"to" jsonschema:"who was asked"`
	Answer     string        `json:"answer,omitempty" jsonschema:"the answer to the current round, when answered"`
	AnsweredBy string        `json:"answered_by,omitempty"`
	Decision   string        `json:"decision,omitempty" jsonschema:"resolved: the resolution; escalated: why; abandoned: why"`
	Options    []string      `json:"options,omitempty" jsonschema:"the choices offered with the question"`
	// DecidedBefore is what was decided before on the same question
	// (clarify_ask and ask_human only).
	DecidedBefore []router.Decided `json:"decided_before,omitempty" jsonschema:"clarify_ask and ask_human: resolved clarifications of the workspace that asked the same thing (same topic, or a question alike), newest first, at most three; outdated when a file one was decided on has changed since. Proceed on one instead of waiting with clarify_assume and reuse"`
	Guidance      string           `json:"guidance" jsonschema:"what to do next"`
}

// WaitInput is clarify_wait's input.
type WaitInput struct {
	ID          string   `json:"id" jsonschema:"the clarification id, such as CLR-42-001"`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds (default and cap: the server's maximum; 0: just look)"`
}

// AnswerInput is clarify_answer's input.
type AnswerInput struct {
	ID     string `json:"id" jsonschema:"the clarification id"`
	Body   string `json:"body,omitempty" jsonschema:"the answer, at most 3000 bytes; with option, a note after the option (required without option)"`
	Option *int   `json:"option,omitempty" jsonschema:"pick option N (1-based) of the question's options: the answer recorded is that option's text"`
	From   string `json:"from,omitempty" jsonschema:"who answers: leave it out, you act as this server's agent (AGENTX_AGENT); without one, the one asked. Never human: only a person acts as human"`
}

// FollowupInput is clarify_followup's input.
type FollowupInput struct {
	ID          string   `json:"id" jsonschema:"the clarification id"`
	Body        string   `json:"body" jsonschema:"the follow-up question, at most 3000 bytes"`
	From        string   `json:"from,omitempty" jsonschema:"the asker: leave it out, you act as this server's agent (AGENTX_AGENT); only a server without one needs it"`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds for the answer (default 0; capped by the server)"`
}

// ResolveInput is clarify_resolve's input.
type ResolveInput struct {
	ID     string `json:"id" jsonschema:"the clarification id"`
	Body   string `json:"body,omitempty" jsonschema:"the resolution, at most 3000 bytes (default: the last answer); with option, a note after the option"`
	Option *int   `json:"option,omitempty" jsonschema:"pick option N (1-based) of the question's options: the resolution recorded is that option's text"`
	// Summary is what was decided; the hub checks it (ledger.ValidateSummary).
	Summary string `json:"summary,omitempty" jsonschema:"what was decided, in one or two sentences on one line (at most 400 bytes): what others are shown in place of the thread (default: the first sentence of the resolution)"`
	From    string `json:"from,omitempty" jsonschema:"the asker: leave it out, you act as this server's agent (AGENTX_AGENT); only a server without one needs it"`
}

// AssumeInput is clarify_assume's input.
type AssumeInput struct {
	ID         string `json:"id" jsonschema:"the clarification id of your unanswered question"`
	Assumption string `json:"assumption,omitempty" jsonschema:"what you proceed on in place of the answer, at most 3000 bytes (required without reuse; with it, your own words beside the decision)"`
	Reuse      string `json:"reuse,omitempty" jsonschema:"proceed on the decision of this resolved clarification (one of decided_before, such as CLR-42-003): a person sees the reuse and may overturn it by answering your question"`
	From       string `json:"from,omitempty" jsonschema:"the asker: leave it out, you act as this server's agent (AGENTX_AGENT); only a server without one needs it"`
}

// RecordResult is a clarification after a change.
type RecordResult struct {
	ID       string        `json:"id"`
	Issue    int           `json:"issue"`
	Status   ledger.Status `json:"status"`
	Round    int           `json:"round"`
	From     string        `json:"from" jsonschema:"the asker"`
	To       string        `json:"to" jsonschema:"the one asked"`
	Topic    string        `json:"topic"`
	Guidance string        `json:"guidance" jsonschema:"what happens next"`
}

// ShowInput is clarify_show's input.
type ShowInput struct {
	ID string `json:"id" jsonschema:"the clarification id"`
}

// ShowResult is one clarification as the ledger holds it.
type ShowResult struct {
	Clarification router.Record `json:"clarification"`
	// Delivery is the receipt of each answer of the thread: whether its
	// asker has seen it, when and by which way, and what it did after it.
	Delivery []inbox.Receipt `json:"delivery,omitempty"`
}

// ListInput is clarify_list's input.
type ListInput struct {
	Issue  *int          `json:"issue,omitempty" jsonschema:"only this issue"`
	Status ledger.Status `json:"status,omitempty" jsonschema:"only this status (default: the open ones)"`
	Agent  string        `json:"agent,omitempty" jsonschema:"only where this agent asks or is asked"`
	All    bool          `json:"all,omitempty" jsonschema:"include resolved and abandoned"`
}

// ListItem is one clarification in a list.
type ListItem struct {
	ID        string        `json:"id"`
	Issue     int           `json:"issue"`
	Status    ledger.Status `json:"status"`
	From      string        `json:"from"`
	To        string        `json:"to"`
	Topic     string        `json:"topic"`
	Blocking  bool          `json:"blocking"`
	Round     int           `json:"round"`
	MaxRounds int           `json:"maxRounds"`
	Created   ledger.Time   `json:"created"`
}

// ListResult is clarify_list's result.
type ListResult struct {
	Clarifications []ListItem `json:"clarifications"`
	Skipped        []string   `json:"skipped,omitempty" jsonschema:"ledgers that could not be read"`
}

func (s *server) addTools() {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	write := func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, DestructiveHint: new(false), OpenWorldHint: new(false)}
	}
	addTool(s, &mcp.Tool{Name: "clarify_ask", Annotations: write("Ask a clarifying question"),
		Description: "Ask an upstream agent (or human) a clarifying question about an issue; the workflow decides whom you may ask. " +
			"Returns at once with the question's id (ask-and-suspend) unless wait_seconds is given; the answer reaches you later through the inbox hook or clarify_wait. " +
			"Ask only when a wrong guess would be costly to undo; otherwise proceed and record your assumption with clarify_assume."}, s.ask)
	addTool(s, &mcp.Tool{Name: "ask_human", Annotations: write("Ask a human"),
		Description: "Ask a person a question, optionally with multiple-choice options shown to them. Same as clarify_ask to human; returns at once unless wait_seconds is given. " +
			"Where the workspace allows forms ([mcp] elicit) and this client shows them, the person at this client is also shown the question as a form, and the call returns once they answer or dismiss it."}, s.askHuman)
	addTool(s, &mcp.Tool{Name: "clarify_wait", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
		Description: "Wait a bounded time for a question's answer. Outcome: answered (with the answer), pending, timed_out, escalated, resolved or abandoned, with guidance on what to do next."}, s.waitFor)
	addTool(s, &mcp.Tool{Name: "clarify_answer", Annotations: write("Answer a question"),
		Description: "Answer the current round of a question addressed to you."}, s.answer)
	addTool(s, &mcp.Tool{Name: "clarify_followup", Annotations: write("Ask a follow-up"),
		Description: "Ask the next round of your own answered question. At the round limit it escalates to a human instead."}, s.followup)
	addTool(s, &mcp.Tool{Name: "clarify_resolve", Annotations: write("Resolve a question"),
		Description: "Close your own answered question, with a resolution (default: the last answer) and, in summary, what was decided in a sentence or two."}, s.resolve)
	addTool(s, &mcp.Tool{Name: "clarify_assume", Annotations: write("Record an assumption"),
		Description: "Record the assumption you proceed on while your question is unanswered, so a late answer is delivered beside it and you can check your work. " +
			"With reuse, proceed on an earlier decision the ask listed in decided_before instead of waiting: a person sees the reuse and may overturn it by answering, and that answer reaches you beside it."}, s.assume)
	addTool(s, &mcp.Tool{Name: "clarify_show", Annotations: readOnly,
		Description: "Show one clarification with its whole thread, as the ledger records it."}, s.show)
	addTool(s, &mcp.Tool{Name: "clarify_list", Annotations: readOnly,
		Description: "List clarifications (open ones unless all or status is given), by issue, status or agent."}, s.list)
	s.addProposalTools(readOnly, write)
}

func blocking(b *bool) bool { return b == nil || *b }

func (s *server) ask(ctx context.Context, in AskInput) (AskResult, string, error) {
	from, err := s.asker(in.From)
	if err != nil {
		return AskResult{}, "", err
	}
	refs, err := brief.ParseRefs("refs", in.Refs)
	if err != nil {
		return AskResult{}, "", err
	}
	return s.askAndWait(ctx, router.AskRequest{
		Issue: in.Issue, From: from, To: in.To, Topic: in.Topic, Question: in.Question,
		NonBlocking: !blocking(in.Blocking), Refs: refs,
	}, s.wait(in.WaitSeconds, 0))
}

func (s *server) askHuman(ctx context.Context, in AskHumanInput) (AskResult, string, error) {
	from, err := s.asker(in.From)
	if err != nil {
		return AskResult{}, "", err
	}
	issue := 0
	switch {
	case in.Issue != nil:
		issue = *in.Issue
	case s.opts.Issue != nil:
		issue = *s.opts.Issue
	}
	topic := in.Topic
	if topic == "" {
		topic = topicOf(in.Question)
	}
	refs, err := brief.ParseRefs("refs", in.Refs)
	if err != nil {
		return AskResult{}, "", err
	}
	return s.askAndWait(ctx, router.AskRequest{
		Issue: issue, From: from, To: ledger.Human, Topic: topic, Question: in.Question,
		NonBlocking: !blocking(in.Blocking), Options: in.Options, Refs: refs,
	}, s.wait(in.WaitSeconds, 0))
}

// topicOf makes a topic from a question: its first line, cut at 80 runes.
func topicOf(q string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(q), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) <= 80 {
		return line
	}
	r := []rune(line)
	return strings.TrimSpace(string(r[:79])) + "…"
}

func (s *server) askAndWait(ctx context.Context, req router.AskRequest, wait time.Duration) (AskResult, string, error) {
	req.Session = s.opts.Session
	if fc := formCallFrom(ctx); fc != nil && req.To == ledger.Human {
		return s.askWithForm(ctx, fc, req, wait)
	}
	rec, err := s.hub.Ask(ctx, req)
	if err != nil {
		return AskResult{}, "", err
	}
	s.log.Info("asked", "id", rec.ID, "from", rec.From, "to", rec.To)
	if wait > 0 {
		mirrorNow(ctx)
	}
	return s.settle(ctx, rec, wait, req.From)
}

// mirrorNow pushes what the call has recorded to the channels (a Slack
// thread, a GitHub comment) before it waits: the question a call waits on
// is there for people to answer meanwhile, not only once the call
// returns (when every call pushes).
func mirrorNow(ctx context.Context) {
	if side := sideOf(ctx); side != nil {
		side.Push(ctx)
	}
}

// settle waits up to wait for rec to settle and reports where it stands to
// reader; a zero wait is just a look. What the reader is told it has seen,
// so its inbox does not deliver it again.
func (s *server) settle(ctx context.Context, rec router.Record, wait time.Duration, reader string) (AskResult, string, error) {
	timedOut := false
	if wait > 0 && !router.Settled(rec.Clarification) {
		got, err := s.waitSettled(ctx, rec.ID, wait)
		var te *router.WaitTimeoutError
		switch {
		case errors.As(err, &te):
			timedOut = true
		case err != nil:
			return AskResult{}, "", fmt.Errorf("%s is recorded, but waiting for it failed: %w", rec.ID, err)
		}
		if got.Clarification != nil {
			got.DecidedBefore = rec.DecidedBefore
			rec = got
		}
	}
	if router.Settled(rec.Clarification) {
		s.seen(ctx, reader, rec)
	}
	res := outcome(rec, timedOut, wait)
	return res, renderAsk(res), nil
}

// waitSettled waits up to timeout for id to settle (see router.Hub.Wait),
// through the call's Side if it has one (GitHub mode reads comments
// meanwhile).
func (s *server) waitSettled(ctx context.Context, id string, timeout time.Duration) (router.Record, error) {
	if side := sideOf(ctx); side != nil {
		return side.Wait(ctx, s.hub, id, timeout)
	}
	return s.hub.Wait(ctx, id, timeout)
}

// seen marks rec as read by reader for its inbox (see inbox.MarkSeen). A
// failure is logged: the call itself went through.
func (s *server) seen(ctx context.Context, reader string, rec router.Record) {
	if err := inbox.MarkSeen(ctx, s.hub.Store, reader, rec.Clarification, inbox.ViaMCP); err != nil {
		s.log.Warn("could not mark as seen", "id", rec.ID, "agent", reader, "error", err)
	}
}

// outcome describes rec for its asker.
func outcome(rec router.Record, timedOut bool, waited time.Duration) (r AskResult) {
	c := rec.Clarification
	r = AskResult{ID: c.ID, Issue: rec.IssueNumber, Status: c.Status, Round: c.Round, To: c.To, DecidedBefore: rec.DecidedBefore}
	if c.X != nil {
		r.Options = c.X.Options
	}
	defer func() {
		if len(r.DecidedBefore) > 0 && c.Status.Open() && c.Status != ledger.Answered {
			r.Guidance += fmt.Sprintf(" This was decided before (decided_before): if one of those decisions settles it, proceed on it instead of waiting with clarify_assume {\"id\":%q,\"reuse\":%q}.", c.ID, r.DecidedBefore[0].ID)
		}
	}()
	switch c.Status {
	case ledger.Answered:
		r.Outcome = OutcomeAnswered
		if a := c.Current(ledger.Answer); a != nil {
			r.Answer, r.AnsweredBy = a.Body, a.From
		}
		r.Guidance = fmt.Sprintf("Use the answer. When it settles the question, close it with clarify_resolve {\"id\":%q}; if it does not, ask a follow-up with clarify_followup.", c.ID)
	case ledger.Escalated:
		r.Outcome = OutcomeEscalated
		r.Decision = router.EscalationReason(c)
		r.Guidance = "A human decides now. Proceed on your best judgment and record your assumption with clarify_assume; the decision reaches you through the inbox or clarify_wait."
	case ledger.Resolved:
		r.Outcome = OutcomeResolved
		if e := c.Current(ledger.Resolution); e != nil {
			r.Decision = e.Body
		}
		if a := c.Current(ledger.Answer); a != nil {
			r.Answer, r.AnsweredBy = a.Body, a.From
		}
		r.Guidance = "Settled: follow the resolution."
	case ledger.Abandoned:
		r.Outcome = OutcomeAbandoned
		if e := c.Current(ledger.Resolution); e != nil {
			r.Decision = strings.TrimPrefix(e.Body, "Abandoned: ")
		}
		r.Guidance = "Nobody will answer: proceed on your best judgment."
	default: // pending or stale
		if timedOut {
			r.Outcome = OutcomeTimedOut
			r.Guidance = fmt.Sprintf("No answer within %s: %s. The question stays open; a late answer reaches you through the inbox with your assumption beside it.", waited.Round(time.Second), TimedOutGuidance)
		} else {
			r.Outcome = OutcomePending
			r.Guidance = fmt.Sprintf("%s is recorded; %s has not answered yet. Do not wait: end your turn or go on with work that does not depend on the answer. "+
				"The answer reaches you in a later turn (agentx inbox) or through clarify_wait {\"id\":%q}. "+
				"If you must go on without it, proceed on your best judgment and record your assumption with clarify_assume.", c.ID, c.To, c.ID)
		}
	}
	return r
}

func (s *server) waitFor(ctx context.Context, in WaitInput) (AskResult, string, error) {
	rec, err := s.hub.Get(in.ID)
	if err != nil {
		return AskResult{}, "", err
	}
	return s.settle(ctx, rec, s.wait(in.WaitSeconds, s.opts.MaxWait), s.opts.Agent)
}

func (s *server) answer(ctx context.Context, in AnswerInput) (RecordResult, string, error) {
	from, err := s.from(in.From)
	if err != nil {
		return RecordResult{}, "", err
	}
	choice, err := reply(in.Body, in.Option)
	if err != nil {
		return RecordResult{}, "", err
	}
	rec, err := s.hub.AnswerReply(ctx, in.ID, from, choice)
	if err != nil {
		return RecordResult{}, "", err
	}
	r := recordResult(rec, fmt.Sprintf("Answer recorded. %s gets it through its inbox or clarify_wait; it may resolve the question or ask a follow-up.", rec.From))
	return r, renderRecord(r), nil
}

func (s *server) followup(ctx context.Context, in FollowupInput) (AskResult, string, error) {
	from, err := s.from(in.From)
	if err != nil {
		return AskResult{}, "", err
	}
	rec, err := s.hub.Followup(ctx, in.ID, from, in.Body)
	if err != nil {
		return AskResult{}, "", err
	}
	return s.settle(ctx, rec, s.wait(in.WaitSeconds, 0), rec.From)
}

func (s *server) resolve(ctx context.Context, in ResolveInput) (RecordResult, string, error) {
	from, err := s.from(in.From)
	if err != nil {
		return RecordResult{}, "", err
	}
	choice, err := reply(in.Body, in.Option)
	if err != nil {
		return RecordResult{}, "", err
	}
	choice.Summary = in.Summary
	rec, err := s.hub.ResolveReply(ctx, in.ID, from, choice)
	if err != nil {
		return RecordResult{}, "", err
	}
	if err := inbox.MarkResolved(ctx, s.hub.Store, rec.Clarification); err != nil {
		s.log.Warn("could not mark as seen", "id", rec.ID, "error", err)
	}
	r := recordResult(rec, "Resolved: the clarification is closed.")
	return r, renderRecord(r), nil
}

func (s *server) assume(ctx context.Context, in AssumeInput) (RecordResult, string, error) {
	from, err := s.from(in.From)
	if err != nil {
		return RecordResult{}, "", err
	}
	if in.Reuse != "" {
		rec, err := s.hub.Reuse(ctx, in.ID, from, in.Reuse, in.Assumption)
		if err != nil {
			return RecordResult{}, "", err
		}
		a := rec.Reused()
		r := recordResult(rec, fmt.Sprintf("You proceed on the decision of %s: %s. Go on with your work. The question stays open: a person sees the reuse and may overturn it by answering; that answer reaches you marked late, beside the reuse.", in.Reuse, a.Reuses.Summary))
		return r, renderRecord(r), nil
	}
	if in.Assumption == "" {
		return RecordResult{}, "", &ledger.InputError{Field: "assumption", Msg: "is empty: say what you proceed on, or give reuse (an earlier decision's id)"}
	}
	rec, err := s.hub.Assume(ctx, in.ID, from, in.Assumption)
	if err != nil {
		return RecordResult{}, "", err
	}
	r := recordResult(rec, "Assumption recorded; go on with your work. The question stays open: if an answer comes later it is delivered marked late with this assumption beside it, so you can check whether your work still holds.")
	return r, renderRecord(r), nil
}

// reply is the reply an answer or resolution gives: the text, or option
// N with the text as a note. The hub checks N against the options (an
// *router.OptionError names them); one below 1 is refused here, as the
// command line's --option refuses it.
func reply(body string, option *int) (router.Reply, error) {
	if option == nil {
		return router.Reply{Body: body}, nil
	}
	if *option < 1 {
		return router.Reply{}, &ledger.InputError{Field: "option", Value: fmt.Sprint(*option), Msg: "is not an option number: options are numbered from 1"}
	}
	return router.Reply{Body: body, Option: *option}, nil
}

func recordResult(rec router.Record, guidance string) RecordResult {
	c := rec.Clarification
	return RecordResult{ID: c.ID, Issue: rec.IssueNumber, Status: c.Status, Round: c.Round, From: c.From, To: c.To, Topic: c.Topic, Guidance: guidance}
}

func (s *server) show(ctx context.Context, in ShowInput) (ShowResult, string, error) {
	rec, err := s.hub.Get(in.ID)
	if err != nil {
		return ShowResult{}, "", err
	}
	s.seen(ctx, s.opts.Agent, rec)
	out := ShowResult{Clarification: rec}
	if out.Delivery, err = inbox.Receipts(s.hub.Store, rec.Clarification); err != nil {
		s.log.Warn("could not read receipts", "id", rec.ID, "error", err)
	}
	return out, renderThread(rec, out.Delivery), nil
}

func (s *server) list(ctx context.Context, in ListInput) (ListResult, string, error) {
	f := router.Filter{Issue: in.Issue, Agent: in.Agent, All: in.All}
	if in.Status != "" {
		if !in.Status.Valid() {
			return ListResult{}, "", &ledger.InputError{Field: "status", Value: string(in.Status), Msg: "is not a status"}
		}
		f.Statuses = []ledger.Status{in.Status}
	}
	out := ListResult{Clarifications: []ListItem{}}
	// One ledger at a time: the items are kept, not the ledgers.
	errs, err := s.hub.Each(f, func(r router.Record) error {
		c := r.Clarification
		out.Clarifications = append(out.Clarifications, ListItem{
			ID: c.ID, Issue: r.IssueNumber, Status: c.Status, From: c.From, To: c.To, Topic: c.Topic,
			Blocking: c.Blocking, Round: c.Round, MaxRounds: c.MaxRounds, Created: c.Created,
		})
		return nil
	})
	if err != nil {
		return ListResult{}, "", err
	}
	for _, e := range errs {
		out.Skipped = append(out.Skipped, e.Error())
	}
	return out, renderList(out), nil
}
