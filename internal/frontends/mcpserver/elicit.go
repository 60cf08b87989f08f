package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// The person at the agent's window. When the workspace allows it ([mcp]
// elicit = true) and the client can show a form (it declares the
// elicitation capability), a question to human asked through the server
// (ask_human, or clarify_ask to human) is also shown to the person at that
// client as an MCP elicitation form: who asks, the question, and a text
// box, or the options as a choice.
//
// The form belongs to the call that asked. How it is shown depends on the
// protocol version the client speaks:
//
//   - 2026-07-28 and later (multi round-trip requests): the call returns
//     an input-required result carrying the form and a signed request
//     state; the client shows the form and calls again with the person's
//     response and the state, and that second call takes the answer.
//   - Earlier versions: the call sends elicitation/create itself while it
//     runs, and closes the form (cancels the request) if the question is
//     answered elsewhere first. It does not leave this to the SDK's own
//     fallback for such clients (which sends the form a call returned and
//     calls the tool once more with the response): that fallback waits on
//     the form alone, so nothing could close it when the question is
//     answered elsewhere, and a late answer could not be followed by the
//     form that says it was not recorded.
//
// The form races every other surface (the command line, the desk, Slack,
// GitHub): its answer goes through the hub's AnswerReply, as the command
// line's does, guarded under the ledger's lock by a router.Once that takes
// it only while the round it was shown for still waits. So the first answer
// wins wherever it comes from; a form answered too late is refused (the
// person is told by whom it was answered, in a second form that only
// informs) and never stored. A form closed because the question was
// answered elsewhere says so, and by whom, in its cancellation (see
// closeReason). A form whose answer cannot be taken (not one of the
// options, empty, too long) is shown again with what was wrong, up to
// maxFormTries times, and then the person is told that nothing was
// recorded. A declined or dismissed form leaves the question waiting for
// the others. The answer is a person's, recorded as human signed
// "elicitation:CLIENT" (see PersonPrefix).

// PersonPrefix is how a person who answered through an elicitation form
// is recorded: at a client that calls itself claude-code, as the person
// elicitation:claude-code.
const PersonPrefix = "elicitation:"

// The form's fields, and the ids of the input requests the server makes.
const (
	answerField = "answer"
	noteField   = "note"
	formRequest = "question"
	toldRequest = "not-recorded"
)

// maxFormTries is how many times one call shows its form while the
// answers that come back cannot be taken; after the last, the person is
// told that nothing was recorded.
const maxFormTries = 3

// multiRoundTripVersion is the first protocol version in which a server
// may not send requests while serving one, and returns input requests
// instead (multi round-trip requests).
const multiRoundTripVersion = "2026-07-28"

// formCall is what a tool call that may show a form knows of its client.
type formCall struct {
	ss        *mcp.ServerSession
	client    string // the client's name, cleaned (see cleanClientName)
	roundTrip bool   // the client speaks multi round-trip requests
	responses mcp.InputResponseMap
	state     string // the request state the client echoed; "" on a first call
}

type formCallKey struct{}

// formCallOf is the formCall of req, if its question may be shown as a
// form: the workspace allows it and the client can show one. Nil
// otherwise.
func (s *server) formCallOf(req *mcp.CallToolRequest) *formCall {
	if !s.hub.Rules().Config.MCP.Elicit || req.Session == nil {
		return nil
	}
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return nil
	}
	if e := caps.Elicitation; e.Form == nil && e.URL != nil {
		return nil // a client that shows only URLs
	}
	name := ""
	if info := req.ClientInfo(); info != nil {
		name = info.Name
	}
	return &formCall{
		ss: req.Session, client: cleanClientName(name), roundTrip: roundTrips(req.Session),
		responses: req.Params.InputResponses, state: req.Params.RequestState,
	}
}

// roundTrips reports whether ss's client speaks multi round-trip requests,
// by the rule the SDK applies to what a server may send.
func roundTrips(ss *mcp.ServerSession) bool {
	v := multiRoundTripVersion
	if p := ss.InitializeParams(); p != nil {
		v = p.ProtocolVersion
	}
	return v >= multiRoundTripVersion
}

func formCallFrom(ctx context.Context) *formCall {
	fc, _ := ctx.Value(formCallKey{}).(*formCall)
	return fc
}

// inputRequired is a call's result that asks the client for input first:
// a form for the person, and the state to echo with the response.
type inputRequired struct {
	requests mcp.InputRequestMap
	state    string
}

func (e *inputRequired) Error() string { return "the call waits for the client's input" }

// result is the call's input-required result.
func (e *inputRequired) result() *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: e.requests, RequestState: e.state}
}

// form is a question shown as a form: what its answer is checked against.
type form struct {
	ID      string   `json:"id"`
	Round   int      `json:"round"`
	Step    string   `json:"step"`            // stepForm: the question; stepTold: the refusal
	Tries   int      `json:"tries,omitempty"` // answers that came back and could not be taken
	Options []string `json:"-"`
	client  string
}

const (
	stepForm = "form"
	stepTold = "told"
)

func newForm(c *ledger.Clarification, client string) form {
	f := form{ID: c.ID, Round: c.Round, Step: stepForm, client: client}
	if c.X != nil {
		f.Options = slices.Clone(c.X.Options)
	}
	return f
}

// askWithForm is a question to human asked by a call that may show it as
// a form (fc). A first call records the question and shows the form (or
// returns it, to a client that speaks multi round-trip requests); the
// client's second call takes the form's answer. Then the call goes on as
// any ask: it reports where the question stands, waiting up to wait.
func (s *server) askWithForm(ctx context.Context, fc *formCall, req router.AskRequest, wait time.Duration) (AskResult, string, error) {
	var rec router.Record
	var err error
	if fc.state != "" {
		if rec, err = s.resumeForm(ctx, fc); err != nil {
			return AskResult{}, "", err
		}
		return s.settle(ctx, rec, wait, req.From)
	}
	if rec, err = s.hub.Ask(ctx, req); err != nil {
		return AskResult{}, "", err
	}
	s.log.Info("asked", "id", rec.ID, "from", rec.From, "to", rec.To)
	if router.Settled(rec.Clarification) {
		return s.settle(ctx, rec, wait, req.From)
	}
	f := newForm(rec.Clarification, fc.client)
	if fc.roundTrip {
		return AskResult{}, "", &inputRequired{requests: mcp.InputRequestMap{formRequest: formParams(rec)}, state: s.seal(f)}
	}
	mirrorNow(ctx) // the form is shown until answered: on the channels meanwhile
	s.showForm(ctx, fc, f, formParams(rec))
	decided := rec.DecidedBefore
	if rec, err = s.hub.Get(rec.ID); err != nil {
		return AskResult{}, "", err
	}
	rec.DecidedBefore = decided
	return s.settle(ctx, rec, wait, req.From)
}

// resumeForm is the second call of a client that speaks multi round-trip
// requests: it takes the person's response to the form the first call
// returned (or, after a refusal, goes on), and returns the question as it
// stands.
func (s *server) resumeForm(ctx context.Context, fc *formCall) (router.Record, error) {
	f, err := s.unseal(fc.state)
	if err != nil {
		return router.Record{}, err
	}
	rec, err := s.hub.Get(f.ID)
	if err != nil {
		return router.Record{}, err
	}
	if f.Step != stepForm {
		return rec, nil // the person was told why their answer was not recorded
	}
	f.client = fc.client
	f.Options = newForm(rec.Clarification, "").Options
	res, _ := fc.responses[formRequest].(*mcp.ElicitResult)
	if err := s.takeForm(ctx, f, res); err != nil {
		var bad *FormError
		if errors.As(err, &bad) && f.Tries+1 < maxFormTries {
			f.Tries++
			return router.Record{}, &inputRequired{requests: mcp.InputRequestMap{formRequest: againParams(formParams(rec), err)}, state: s.seal(f)}
		}
		f.Step = stepTold
		return router.Record{}, &inputRequired{requests: mcp.InputRequestMap{toldRequest: toldParams(err)}, state: s.seal(f)}
	}
	return s.hub.Get(f.ID)
}

// showForm shows the form to a client that speaks an earlier protocol
// version, during the call, and takes its answer. An answer that cannot
// be taken brings the form back with what was wrong (up to maxFormTries
// forms); an answer refused for good is followed by a form that tells the
// person why it was not recorded.
func (s *server) showForm(ctx context.Context, fc *formCall, f form, params *mcp.ElicitParams) {
	shown := params
	for try := 1; ; try++ {
		res, ok := s.elicit(ctx, fc, f, shown)
		if !ok {
			return
		}
		err := s.takeForm(ctx, f, res)
		if err == nil {
			return
		}
		var bad *FormError
		if errors.As(err, &bad) && try < maxFormTries {
			shown = againParams(params, err)
			continue
		}
		if _, err := fc.ss.Elicit(ctx, toldParams(err)); err != nil {
			s.log.Info("could not tell the person", "id", f.ID, "error", err)
		}
		return
	}
}

// elicit shows one form and returns the response as the client sent it,
// or false when there is none to take: the form was closed, or could not
// be shown. The form is closed (its request cancelled) once the question
// no longer waits for it, and the cancellation says why (closeReason).
func (s *server) elicit(ctx context.Context, fc *formCall, f form, params *mcp.ElicitParams) (*mcp.ElicitResult, bool) {
	why := &closeReason{}
	kept := &formResponse{}
	formCtx, closeForm := context.WithCancel(context.WithValue(context.WithValue(ctx, closeReasonKey{}, why), formResponseKey{}, kept))
	var watch sync.WaitGroup
	watch.Go(func() {
		if _, err := s.waitSettled(formCtx, f.ID, 24*time.Hour); err == nil {
			why.set(s.closedElsewhere(f))
			closeForm()
		}
	})
	res, err := fc.ss.Elicit(formCtx, params)
	closed := formCtx.Err() != nil && ctx.Err() == nil
	closeForm()
	watch.Wait()
	if err != nil && kept.res != nil {
		// The SDK refused content that does not match the form's schema,
		// and would drop it unsaid: the server checks it itself
		// (form.reply), and says what is wrong.
		res, err = kept.res, nil
	}
	switch {
	case err != nil && closed:
		// An answer that came back as the form closed goes on to
		// takeForm, which refuses it and tells the person.
		s.log.Info("form closed: the question was answered elsewhere", "id", f.ID, "why", why.get())
		return nil, false
	case ctx.Err() != nil:
		s.log.Info("form closed: the call ended", "id", f.ID, "why", context.Cause(ctx))
		return nil, false
	case err != nil:
		s.log.Warn("could not show the question as a form", "id", f.ID, "error", err)
		return nil, false
	}
	return res, true
}

// formResponse is where keepFormResponse keeps the response to the form
// shown with it in its context.
type formResponse struct{ res *mcp.ElicitResult }

type formResponseKey struct{}

// keepFormResponse is the server's sending middleware that keeps the
// client's response to a form, as the client sent it, before the SDK
// checks it against the form's schema: content that does not match (an
// answer not among the options, empty, too long) is an error there that
// drops it, and the person who filled the form would never learn why.
func keepFormResponse(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "elicitation/create" || err != nil {
			return res, err
		}
		if kept, ok := ctx.Value(formResponseKey{}).(*formResponse); ok {
			if r, ok := res.(*mcp.ElicitResult); ok && r != nil {
				c := *r
				c.Content = maps.Clone(r.Content)
				kept.res = &c
			}
		}
		return res, err
	}
}

// closeReason is why a form was closed, said in the cancellation the
// client is sent (see conn.Write): the SDK's says only "context canceled".
type closeReason struct {
	mu  sync.Mutex
	why string
}

type closeReasonKey struct{}

func (r *closeReason) set(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.why = why
}

func (r *closeReason) get() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.why
}

// closeReasonOf is why the form shown with ctx was closed, if the server
// closed it for a reason of its own; "" otherwise.
func closeReasonOf(ctx context.Context) string {
	if r, ok := ctx.Value(closeReasonKey{}).(*closeReason); ok {
		return r.get()
	}
	return ""
}

// closedElsewhere is why f's form is closed: its question was answered
// (or closed) elsewhere, and by whom.
func (s *server) closedElsewhere(f form) string {
	var e *AnsweredElsewhereError
	if !errors.As(s.elsewhere(f), &e) {
		return f.ID + " no longer waits for an answer"
	}
	return line(e.Closed())
}

// takeForm records the form's answer, res, as the person's answer to f's
// round, under the ledger's lock, if that round still waits for one. A
// form declined, dismissed or not sent back takes nothing (nil). The
// error says why an answer was not recorded: an *AnsweredElsewhereError
// or a *FormError.
func (s *server) takeForm(ctx context.Context, f form, res *mcp.ElicitResult) error {
	if res == nil || res.Action != "accept" {
		action := "none"
		if res != nil {
			action = res.Action
		}
		s.log.Info("form not answered", "id", f.ID, "action", action)
		return nil
	}
	reply, err := f.reply(res.Content)
	if err != nil {
		if rec, gerr := s.hub.Get(f.ID); gerr == nil && !waiting(rec.Clarification, f.Round) {
			err = s.elsewhere(f) // nothing to answer again
		}
		s.log.Info("form answer refused", "id", f.ID, "error", err)
		return err
	}
	person := PersonPrefix + f.client
	ctx = router.WithCaller(ctx, &router.Caller{Via: "an elicitation form", Person: func() (string, error) { return person, nil }})
	ctx = router.WithOnce(ctx, &router.Once{Done: func(l *ledger.Ledger) (bool, error) {
		c := l.Find(f.ID)
		return c == nil || !waiting(c, f.Round), nil // taken only while its round waits
	}})
	_, err = s.hub.AnswerReply(ctx, f.ID, ledger.Human, reply)
	var skipped *router.SkippedError
	if errors.As(err, &skipped) && skipped.Reason == router.OnceDone {
		err = s.elsewhere(f)
		s.log.Info("form answer refused", "id", f.ID, "error", err)
		return err
	}
	if err != nil {
		return fmt.Errorf("%s: recording the form's answer: %w", f.ID, err)
	}
	s.log.Info("answered through a form", "id", f.ID, "person", person)
	return nil
}

// waiting reports whether c still waits for an answer to round.
func waiting(c *ledger.Clarification, round int) bool {
	return c.Round == round && !router.Settled(c)
}

// reply is the reply a form's content gives: the option picked (with the
// note, if any), or the text written. The content comes from the client:
// it is checked, never trusted.
func (f form) reply(content map[string]any) (router.Reply, error) {
	v, ok := content[answerField]
	body, isText := v.(string)
	switch {
	case !ok:
		return router.Reply{}, &FormError{ID: f.ID, Why: "the form came back without an answer"}
	case !isText:
		return router.Reply{}, &FormError{ID: f.ID, Why: "the answer is not text"}
	case strings.TrimSpace(body) == "":
		return router.Reply{}, &FormError{ID: f.ID, Why: "the answer is empty"}
	case len(f.Options) == 0:
		if err := tooLong(f.ID, "answer", body); err != nil {
			return router.Reply{}, err
		}
		return router.Reply{Body: body}, nil
	}
	shown := neutral(f.Options) // as the form showed them
	n := slices.Index(shown, body)
	if n < 0 {
		return router.Reply{}, &FormError{ID: f.ID, Why: fmt.Sprintf("the answer %q is not one of the options (%s)", clip(body, 80), strings.Join(shown, "; "))}
	}
	note, _ := content[noteField].(string)
	note = strings.TrimSpace(note)
	if err := tooLong(f.ID, "note", note); err != nil {
		return router.Reply{}, err
	}
	return router.Reply{Option: n + 1, Body: note}, nil
}

// tooLong is the error for a form's field longer than the ledger takes.
func tooLong(id, field, text string) error {
	if len(text) <= ledger.MaxBodyLen {
		return nil
	}
	return &FormError{ID: id, Why: fmt.Sprintf("the %s is %d bytes long; the limit is %d", field, len(text), ledger.MaxBodyLen)}
}

// elsewhere is the error that says what became of f's question.
func (s *server) elsewhere(f form) error {
	e := &AnsweredElsewhereError{ID: f.ID}
	rec, err := s.hub.Get(f.ID)
	if err != nil {
		return e
	}
	c := rec.Clarification
	e.Status = c.Status
	for i, t := range c.Thread {
		if t.Type == ledger.Answer && t.Round == f.Round {
			e.By, e.Answer = t.From, t.Body
			if p := c.PersonAt(i); p != "" {
				e.By += " (" + p + ")"
			}
			break
		}
	}
	return e
}

// formParams is the form for rec's question: who asks, about what, the
// question, and a text box or the options as a choice (with a box for a
// note). The text is the agent's: neutralised as every text the server
// returns is.
func formParams(rec router.Record) *mcp.ElicitParams {
	c := rec.Clarification
	question := c.Topic
	if q := c.Current(ledger.Question); q != nil {
		question = q.Body
	}
	msg := fmt.Sprintf("%s asks you (%s, %s): %s\n\n%s", line(c.From), line(c.ID), issueLabel(rec.IssueNumber), line(c.Topic), block(question))
	props := map[string]*jsonschema.Schema{
		answerField: {Type: "string", Title: "Your answer", MinLength: new(1), MaxLength: new(ledger.MaxMessageLen)},
	}
	if opts := newForm(c, "").Options; len(opts) > 0 {
		props[answerField] = &jsonschema.Schema{Type: "string", Title: "Your choice", Enum: enum(neutral(opts))}
		props[noteField] = &jsonschema.Schema{Type: "string", Title: "A note with your choice (optional)", MaxLength: new(ledger.MaxMessageLen)}
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: &jsonschema.Schema{
			Type:       "object",
			Properties: props,
			Required:   []string{answerField},
		},
	}
}

// neutral is opts as a form shows them: the agent's text, neutralised.
func neutral(opts []string) []string {
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = line(o)
	}
	return out
}

// toldParams is a form with nothing to fill in, which clients show as a
// message: why the person's answer was not recorded.
func toldParams(why error) *mcp.ElicitParams {
	msg := "Your answer was not recorded: " + line(why.Error())
	var bad *FormError
	if errors.As(why, &bad) {
		msg += ". The question still waits for an answer."
	}
	return &mcp.ElicitParams{
		Mode:            "form",
		Message:         msg,
		RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
	}
}

// againParams is the form params, shown again after an answer that could
// not be taken: what was wrong with it first.
func againParams(params *mcp.ElicitParams, why error) *mcp.ElicitParams {
	p := *params
	p.Message = "Your answer was not recorded: " + line(why.Error()) + ". Please answer again.\n\n" + params.Message
	return &p
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

// seal is f as a request state: its JSON and an HMAC of it under a key
// made for this server's run, so that a state comes back only as the
// server gave it.
func (s *server) seal(f form) string {
	b, err := json.Marshal(f)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: request state: %v", err)) // three plain fields
	}
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(b)
	enc := base64.RawURLEncoding.Strict()
	return enc.EncodeToString(b) + "." + enc.EncodeToString(mac.Sum(nil))
}

// unseal is the form a request state names, if this server's run made it.
func (s *server) unseal(state string) (form, error) {
	bad := &ledger.InputError{Field: "requestState", Value: clip(state, 80), Msg: "is not one this server gave (it is made anew each time the server starts): call the tool again without it"}
	enc := base64.RawURLEncoding.Strict()
	body, sum, ok := strings.Cut(state, ".")
	b, err1 := enc.DecodeString(body)
	got, err2 := enc.DecodeString(sum)
	if !ok || err1 != nil || err2 != nil {
		return form{}, bad
	}
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(b)
	var f form
	if !hmac.Equal(got, mac.Sum(nil)) || json.Unmarshal(b, &f) != nil {
		return form{}, bad
	}
	return f, nil
}

// newStateKey is a random key for sealing request states.
func newStateKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
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

// Closed is what a form closed because of e says: that its question was
// answered elsewhere, and by whom.
func (e *AnsweredElsewhereError) Closed() string {
	switch {
	case e.By != "":
		return fmt.Sprintf("%s was answered elsewhere, by %s: %q", e.ID, e.By, clip(e.Answer, 200))
	case e.Status != "":
		return fmt.Sprintf("%s was closed elsewhere: it is %s", e.ID, e.Status)
	}
	return e.ID + " no longer waits for an answer"
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
