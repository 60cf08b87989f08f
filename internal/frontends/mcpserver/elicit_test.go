package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
)

// elicitOn allows forms; its people answering on the command line are
// scripted, with no terminal to confirm at.
const elicitOn = "[mcp]\nelicit = true\n\n[humans]\nconfirm = false"

// protocolVersions are the versions a client may speak that can show
// forms: the first with multi round-trip requests (the form comes back in
// the call's result), the others where the server sends
// elicitation/create during the call.
var protocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// formClient is an MCP client (the official Go SDK's) whose person
// answers forms with answer: each form it is shown is sent on shown, and
// answer decides what comes back (it may block, and sees the form's
// context: cancelled when the server closes the form). created counts the
// elicitation/create requests the server sent (none when the forms come
// back as input requests). cancelled receives the reason of each request
// the server cancelled. An unchecked client sends back what answer
// returns without checking it against the form's schema, as a client that
// does not check it does (the SDK's checks it).
type formClient struct {
	shown     chan *mcp.ElicitRequest
	answer    func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	created   atomic.Int32
	cancelled chan string
	unchecked bool
}

func newFormClient(answer func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *formClient {
	return &formClient{shown: make(chan *mcp.ElicitRequest, 64), answer: answer, cancelled: make(chan string, 64)}
}

func (f *formClient) client(withForms bool) *mcp.Client {
	opts := &mcp.ClientOptions{}
	if withForms {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			f.shown <- req
			return f.answer(ctx, req)
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agentx-test"}, opts)
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "elicitation/create":
				f.created.Add(1)
				if er, ok := req.(*mcp.ElicitRequest); ok && f.unchecked {
					f.shown <- er
					return f.answer(ctx, er)
				}
			case "notifications/cancelled":
				if p, ok := req.GetParams().(*mcp.CancelledParams); ok {
					f.cancelled <- p.Reason
				}
			}
			return next(ctx, method, req)
		}
	})
	return c
}

// nextForm is the next form shown, within 10 s.
func (f *formClient) nextForm(t *testing.T) *mcp.ElicitRequest {
	t.Helper()
	select {
	case req := <-f.shown:
		return req
	case <-time.After(10 * time.Second):
		t.Fatal("no form shown within 10 s")
	}
	return nil
}

// noForm fails if a form was shown.
func (f *formClient) noForm(t *testing.T) {
	t.Helper()
	select {
	case req := <-f.shown:
		t.Fatalf("a form was shown: %q", req.Params.Message)
	default:
	}
}

// checkPath checks that the forms came the way version says: as input
// requests from 2026-07-28, as elicitation/create requests before.
func (f *formClient) checkPath(t *testing.T, version string) {
	t.Helper()
	if version >= multiRoundTripVersion {
		assert.Zero(t, f.created.Load(), "a client speaking %s is sent no elicitation/create", version)
	} else {
		assert.NotZero(t, f.created.Load(), "a client speaking %s is sent elicitation/create", version)
	}
}

func accept(content map[string]any) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

func answer(text string) map[string]any { return map[string]any{answerField: text} }

// serveProcess starts `agentx mcp --verbose` in root, launched as
// engineer, and connects c to it speaking version. The server is stopped
// (its input closed, and killed after 10 s) at the test's end.
func serveProcess(t *testing.T, bin, root, version string, c *mcp.Client) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	server := exec.Command(bin, "mcp", "--verbose")
	server.Dir = root
	server.Env = agentxEnv(root, "engineer")
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	server.Stderr = stderr
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: server, TerminateDuration: 10 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		if log, _ := os.ReadFile(stderr.Name()); t.Failed() {
			t.Logf("server's log:\n%s", log)
		}
		_ = stderr.Close()
	})
	return cs
}

// hubWith is a hub over a fresh workspace whose config.toml ends with
// config, and the workspace's root.
func hubWith(t *testing.T, config string) (*router.Hub, string) {
	t.Helper()
	dir, rules := testenv.Workspace(t, config)
	return router.New(ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, nil), rules, dir), dir
}

// connectServer connects c, speaking version, to s over an in-memory
// transport.
func connectServer(t *testing.T, s *server, version string, c *mcp.Client) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// elicitRoot is a workspace made by the binary's init, with [mcp]
// elicit = true when on.
func elicitRoot(t *testing.T, bin string, on bool) string {
	t.Helper()
	root := t.TempDir()
	run(t, bin, root, "", "init")
	if on {
		f, err := os.OpenFile(filepath.Join(root, ".agentx", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("\n" + elicitOn + "\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	return root
}

// personAnswers answers id as the person alice, from a real agentx
// process launched as no agent; it returns the process's output and error.
func personAnswers(bin, root, id, body string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "clarify", "answer", id, "--as", "alice", "--body", body)
	cmd.Dir = root
	cmd.Env = agentxEnv(root, "")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// answersOf is the answer entries of id's first round, each with the
// person behind it and the option it picked, read by a real agentx
// process.
func answersOf(t *testing.T, bin, root, id string) []string {
	t.Helper()
	var shown struct {
		Data struct {
			Thread []ledger.ThreadEntry `json:"thread"`
			X      *ledger.Extra        `json:"agentx"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(run(t, bin, root, "", "clarify", "show", id, "--json")), &shown))
	c := ledger.Clarification{Thread: shown.Data.Thread, X: shown.Data.X}
	var out []string
	for i, e := range c.Thread {
		if e.Type == ledger.Answer && e.Round == 1 {
			a := e.From + " " + c.PersonAt(i) + ": " + e.Body
			if ch := c.ChoiceAt(i); ch != nil {
				a += fmt.Sprintf(" (option %d)", ch.Option)
			}
			out = append(out, a)
		}
	}
	return out
}

// TestElicitFormAnswers: with [mcp] elicit = true and a client that shows
// forms, ask_human shows the question to the person at the client, the
// options as a choice; their answer is the answer, recorded as a person's
// with the form's provenance and the option's number. Against the real
// binary, for each protocol version.
func TestElicitFormAnswers(t *testing.T) {
	bin := agentxBinary(t)
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			root := elicitRoot(t, bin, true)
			fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if strings.Contains(req.Params.Message, "Thursday or Friday?") {
					return accept(map[string]any{answerField: "Friday", noteField: "after the demo"}), nil
				}
				return accept(answer("Per key, five minutes.")), nil
			})
			cs := serveProcess(t, bin, root, version, fc.client(true))

			got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{
				"issue": 3, "topic": "Release day", "question": "Thursday or Friday?\n\x1b[2Jsee the plan", "options": []string{"Thursday", "Friday"},
			}))
			assert.Equal(t, OutcomeAnswered, got.Outcome)
			assert.Equal(t, "Friday\n\nafter the demo", got.Answer)
			assert.Equal(t, ledger.Human, got.AnsweredBy)

			form := fc.nextForm(t)
			assert.Contains(t, form.Params.Message, "engineer asks you (CLR-3-001, issue #3): Release day")
			assert.Contains(t, form.Params.Message, "Thursday or Friday?")
			assert.NotContains(t, form.Params.Message, "\x1b", "the agent's text is neutralised")
			b, err := json.Marshal(form.Params.RequestedSchema)
			require.NoError(t, err)
			assert.JSONEq(t, `{"type":"object","required":["answer"],"properties":{
				"answer":{"type":"string","title":"Your choice","enum":["Thursday","Friday"]},
				"note":{"type":"string","title":"A note with your choice (optional)","maxLength":3000}}}`, string(b))
			assert.Equal(t, []string{"human elicitation:agentx-test: Friday\n\nafter the demo (option 2)"}, answersOf(t, bin, root, "CLR-3-001"))

			// option out of range, through the real binary's error table: a usage error naming the options
			info := errInfo(t, callTool(t, cs, "clarify_resolve", map[string]any{"id": "CLR-3-001", "option": 3}))
			assert.Equal(t, ErrorInfo{Code: "usage", ExitCode: 2, Message: "CLR-3-001 has no option 3: its options are 1. Thursday; 2. Friday", Hint: "pick an option from 1 to 2"}, info)

			// free text, through clarify_ask to human
			got = into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{"issue": 3, "to": "human", "topic": "Cache", "question": "TTL per key?"}))
			assert.Equal(t, "Per key, five minutes.", got.Answer)
			b, err = json.Marshal(fc.nextForm(t).Params.RequestedSchema)
			require.NoError(t, err)
			assert.JSONEq(t, `{"type":"object","required":["answer"],"properties":{"answer":{"type":"string","title":"Your answer","minLength":1,"maxLength":3000}}}`, string(b))
			assert.Equal(t, []string{"human elicitation:agentx-test: Per key, five minutes."}, answersOf(t, bin, root, "CLR-3-002"))
			fc.checkPath(t, version)

			events, err := os.ReadFile(filepath.Join(root, ".agentx", "state", "events.jsonl"))
			require.NoError(t, err)
			assert.Contains(t, string(events), `"human:elicitation:agentx-test"`)
		})
	}
}

// blindSide is a Side whose wait never sees an answer: a server with it
// does not notice an answer given elsewhere while its form is open, as
// happens when the person answers the form in the moment between.
type blindSide struct{}

func (blindSide) Read(context.Context) {}
func (blindSide) Push(context.Context) {}
func (blindSide) Wait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	<-ctx.Done()
	return router.Record{}, ctx.Err()
}

// TestElicitLateAnswerRefused: a person answers on the command line (a
// real agentx process) while the form is open, and then the form is
// answered: the form's answer is refused, the person at the client is
// told by whom the question was answered, the call returns that answer,
// and the ledger keeps the one answer.
func TestElicitLateAnswerRefused(t *testing.T) {
	bin := agentxBinary(t)
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			h, dir := hubWith(t, elicitOn)
			fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if strings.HasPrefix(req.Params.Message, "Your answer was not recorded") {
					return &mcp.ElicitResult{Action: "accept"}, nil
				}
				if out, err := personAnswers(bin, dir, "CLR-5-001", "Hold it until Monday."); err != nil {
					return nil, fmt.Errorf("the command line's answer: %v: %s", err, out)
				}
				return accept(answer("Ship it.")), nil
			})
			s := newServer(h, Options{Agent: "engineer", Side: func() Side { return blindSide{} }}, nil)
			cs := connectServer(t, s, version, fc.client(true))

			got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"issue": 5, "question": "Ship it?"}))
			assert.Equal(t, OutcomeAnswered, got.Outcome)
			assert.Equal(t, "Hold it until Monday.", got.Answer)

			fc.nextForm(t)
			told := fc.nextForm(t)
			assert.Equal(t, `Your answer was not recorded: CLR-5-001 was answered first by human (alice): "Hold it until Monday."`, told.Params.Message)
			assert.Equal(t, []string{"human alice: Hold it until Monday."}, answersOf(t, bin, dir, "CLR-5-001"))
			fc.checkPath(t, version)
		})
	}
}

// gateSide is a Side whose wait sees an answer only once open is closed.
type gateSide struct{ open chan struct{} }

func (gateSide) Read(context.Context) {}
func (gateSide) Push(context.Context) {}
func (g gateSide) Wait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	select {
	case <-g.open:
	case <-ctx.Done():
		return router.Record{}, ctx.Err()
	}
	return h.Wait(ctx, id, timeout)
}

// TestElicitAcceptedAsFormCloses: on a protocol version where the server
// sends the form itself, the person submits the form just as it is closed
// because the question was answered elsewhere (the answer arrives, and
// then the form's request is cancelled): the form's answer is refused and
// the person is told, not dropped without a word.
func TestElicitAcceptedAsFormCloses(t *testing.T) {
	bin := agentxBinary(t)
	for _, version := range protocolVersions[1:] {
		t.Run(version, func(t *testing.T) {
			h, dir := hubWith(t, elicitOn)
			fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if strings.HasPrefix(req.Params.Message, "Your answer was not recorded") {
					return &mcp.ElicitResult{Action: "accept"}, nil
				}
				return accept(answer("Ship it.")), nil
			})
			side := gateSide{open: make(chan struct{})}
			s := newServer(h, Options{Agent: "engineer", Side: func() Side { return side }}, nil)
			// Once the person's answer to the form has arrived, the question
			// is answered on the command line and the form closed, before
			// the server looks at the answer.
			var once sync.Once
			s.mcp.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					res, err := next(ctx, method, req)
					if method != "elicitation/create" || err != nil {
						return res, err
					}
					once.Do(func() {
						if out, aerr := personAnswers(bin, dir, "CLR-5-001", "Hold it until Monday."); aerr != nil {
							err = fmt.Errorf("the command line's answer: %v: %s", aerr, out)
							return
						}
						close(side.open)
						<-ctx.Done()
					})
					return res, err
				}
			})
			cs := connectServer(t, s, version, fc.client(true))

			got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"issue": 5, "question": "Ship it?"}))
			assert.Equal(t, OutcomeAnswered, got.Outcome)
			assert.Equal(t, "Hold it until Monday.", got.Answer)

			fc.nextForm(t)
			told := fc.nextForm(t)
			assert.Equal(t, `Your answer was not recorded: CLR-5-001 was answered first by human (alice): "Hold it until Monday."`, told.Params.Message)
			assert.Equal(t, []string{"human alice: Hold it until Monday."}, answersOf(t, bin, dir, "CLR-5-001"))
		})
	}
}

// TestElicitAnsweredElsewhereClosesForm: on a protocol version where the
// server sends the form itself, an answer from the command line (a real
// agentx process) while the form is open closes it (its request is
// cancelled), and the call returns that answer.
func TestElicitAnsweredElsewhereClosesForm(t *testing.T) {
	bin := agentxBinary(t)
	for _, version := range protocolVersions[1:] {
		t.Run(version, func(t *testing.T) {
			root := elicitRoot(t, bin, true)
			closed := make(chan error, 1)
			fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if out, err := personAnswers(bin, root, "CLR-0-001", "Not before the freeze ends."); err != nil {
					return nil, fmt.Errorf("the command line's answer: %v: %s", err, out)
				}
				select {
				case <-ctx.Done(): // the person has not answered the form
					closed <- ctx.Err()
					return nil, ctx.Err()
				case <-time.After(10 * time.Second):
					closed <- nil
					return accept(answer("too late")), nil
				}
			})
			cs := serveProcess(t, bin, root, version, fc.client(true))
			got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"question": "Deploy now?"}))
			assert.Equal(t, OutcomeAnswered, got.Outcome)
			assert.Equal(t, "Not before the freeze ends.", got.Answer)
			select {
			case err := <-closed:
				assert.ErrorIs(t, err, context.Canceled, "the form was closed")
			case <-time.After(15 * time.Second):
				t.Fatal("no form was shown")
			}
			select {
			case why := <-fc.cancelled:
				assert.Equal(t, `CLR-0-001 was answered elsewhere, by human (alice): "Not before the freeze ends."`, why,
					"the client is told who answered, not that a context was cancelled")
			case <-time.After(10 * time.Second):
				t.Fatal("the form's request was not cancelled")
			}
			assert.Equal(t, []string{"human alice: Not before the freeze ends."}, answersOf(t, bin, root, got.ID))
		})
	}
}

// TestElicitDeclined: a form the person declines or dismisses leaves the
// question waiting for the other surfaces: the call goes on as without a
// form (here, waits and times out), and a person answers it later.
func TestElicitDeclined(t *testing.T) {
	bin := agentxBinary(t)
	for _, version := range protocolVersions {
		for _, action := range []string{"decline", "cancel"} {
			t.Run(version+"/"+action, func(t *testing.T) {
				h, dir := hubWith(t, elicitOn)
				fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: action}, nil
				})
				cs := connectServer(t, newServer(h, Options{Agent: "engineer"}, nil), version, fc.client(true))
				got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"question": "Which region?", "options": []string{"eu", "us"}, "wait_seconds": 0.3}))
				assert.Equal(t, OutcomeTimedOut, got.Outcome)
				fc.nextForm(t)
				fc.noForm(t) // nothing to tell: nothing was refused

				rec, err := h.Get(got.ID)
				require.NoError(t, err)
				assert.Equal(t, ledger.Pending, rec.Status)
				out, err := personAnswers(bin, dir, got.ID, "eu")
				require.NoError(t, err, out)
				assert.Equal(t, []string{"human alice: eu"}, answersOf(t, bin, dir, got.ID))
			})
		}
	}
}

// TestElicitInvalidAnswer: a client that does not check the form's
// answer against its schema sends back one that cannot be taken (not one
// of the options, empty, blank, too long): nothing is recorded, and the
// person is shown the form again with what was wrong; a good answer then
// is taken. After maxFormTries forms the person is told that nothing was
// recorded, and the question waits for the other surfaces. On the
// versions where the server sends the form itself (the SDK drops content
// that does not match the schema unsaid).
func TestElicitInvalidAnswer(t *testing.T) {
	bin := agentxBinary(t)
	long := strings.Repeat("x", ledger.MaxBodyLen+1)
	for _, version := range protocolVersions[1:] {
		for _, tt := range []struct {
			name    string
			options []string
			sends   []map[string]any // the answers, in turn; the last is sent again
			why     string           // what the second form says was wrong
			answer  string           // the answer taken; "" none
			ledger  []string
		}{
			{"not one of the options", []string{"Thursday", "Friday"}, []map[string]any{answer("Saturday"), answer("Friday")},
				`CLR-0-001: the answer "Saturday" is not one of the options (Thursday; Friday)`, "Friday", []string{"human elicitation:agentx-test: Friday (option 2)"}},
			{"empty", nil, []map[string]any{answer(""), answer("Per key.")},
				"CLR-0-001: the answer is empty", "Per key.", []string{"human elicitation:agentx-test: Per key."}},
			{"blank", nil, []map[string]any{answer(" \n "), answer("Per key.")},
				"CLR-0-001: the answer is empty", "Per key.", []string{"human elicitation:agentx-test: Per key."}},
			{"no answer", nil, []map[string]any{{noteField: "hm"}, answer("Per key.")},
				"CLR-0-001: the form came back without an answer", "Per key.", []string{"human elicitation:agentx-test: Per key."}},
			{"too long", nil, []map[string]any{answer(long), answer("Per key.")},
				"CLR-0-001: the answer is 65537 bytes long; the limit is 65536", "Per key.", []string{"human elicitation:agentx-test: Per key."}},
			{"never one of the options", []string{"eu", "us"}, []map[string]any{answer("mars")},
				`CLR-0-001: the answer "mars" is not one of the options (eu; us)`, "", nil},
		} {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				h, dir := hubWith(t, elicitOn)
				var n atomic.Int32
				fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if strings.HasPrefix(req.Params.Message, "Your answer was not recorded") && !strings.Contains(req.Params.Message, "Please answer again") {
						return &mcp.ElicitResult{Action: "accept"}, nil // told
					}
					i := min(int(n.Add(1)), len(tt.sends)) - 1
					return accept(tt.sends[i]), nil
				})
				fc.unchecked = true
				cs := connectServer(t, newServer(h, Options{Agent: "engineer"}, nil), version, fc.client(true))
				args := map[string]any{"question": "Which one?", "wait_seconds": 0.3}
				if tt.options != nil {
					args["options"] = tt.options
				}
				got := into[AskResult](t, callTool(t, cs, "ask_human", args))

				first := fc.nextForm(t)
				again := fc.nextForm(t)
				assert.Equal(t, "Your answer was not recorded: "+tt.why+". Please answer again.\n\n"+first.Params.Message, again.Params.Message)
				assert.Equal(t, first.Params.RequestedSchema, again.Params.RequestedSchema, "the same form")
				if tt.answer != "" {
					assert.Equal(t, OutcomeAnswered, got.Outcome)
					assert.Equal(t, tt.answer, got.Answer)
					fc.noForm(t)
				} else {
					assert.Equal(t, OutcomeTimedOut, got.Outcome)
					for range maxFormTries - 2 {
						fc.nextForm(t)
					}
					told := fc.nextForm(t)
					assert.Equal(t, "Your answer was not recorded: "+tt.why+". The question still waits for an answer.", told.Params.Message)
					fc.noForm(t)
					assert.EqualValues(t, maxFormTries, n.Load(), "the form shown %d times", maxFormTries)
					rec, err := h.Get(got.ID)
					require.NoError(t, err)
					assert.Equal(t, ledger.Pending, rec.Status, "nothing recorded")
				}
				assert.Equal(t, tt.ledger, answersOf(t, bin, dir, got.ID))
			})
		}
	}
}

// TestElicitInvalidAnswerRoundTrip: at 2026-07-28 the form comes back in
// the call's result; a response that cannot be taken brings it back
// again, with what was wrong, and records nothing; a good one is taken.
func TestElicitInvalidAnswerRoundTrip(t *testing.T) {
	h, _ := hubWith(t, elicitOn)
	c := mcp.NewClient(&mcp.Implementation{Name: "agentx-test"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, fmt.Errorf("not shown: this client answers by hand")
		},
	})
	cs := connectServer(t, newServer(h, Options{Agent: "engineer"}, nil), protocolVersions[0], c)
	ctx := context.Background()
	args := map[string]any{"question": "Which region?", "options": []string{"eu", "us"}}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_human", Arguments: args})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	first := res.InputRequests[formRequest].(*mcp.ElicitParams)
	for i, bad := range []map[string]any{answer("mars"), answer("")} {
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_human", Arguments: args,
			RequestState: res.RequestState, InputResponses: mcp.InputResponseMap{formRequest: accept(bad)}})
		require.NoError(t, err)
		require.True(t, res.NeedsInput(), "answer %d", i)
		again, ok := res.InputRequests[formRequest].(*mcp.ElicitParams)
		require.True(t, ok, "the form again: %v", res.InputRequests)
		why := []string{`CLR-0-001: the answer "mars" is not one of the options (eu; us)`, "CLR-0-001: the answer is empty"}[i]
		assert.Equal(t, "Your answer was not recorded: "+why+". Please answer again.\n\n"+first.Message, again.Message)
		rec, err := h.Get("CLR-0-001")
		require.NoError(t, err)
		assert.Equal(t, ledger.Pending, rec.Status, "nothing recorded")
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_human", Arguments: args,
		RequestState: res.RequestState, InputResponses: mcp.InputResponseMap{formRequest: accept(answer("us"))}})
	require.NoError(t, err)
	assert.Equal(t, "us", into[AskResult](t, call{res}).Answer)
}

// TestElicitCallCancelled: on a version where the form is shown during
// the call, a client that cancels the call (its own time-out) closes the
// form with it; the question stays pending, the server goes on serving.
func TestElicitCallCancelled(t *testing.T) {
	h, _ := hubWith(t, elicitOn)
	closed := make(chan error, 1)
	fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		<-ctx.Done()
		closed <- ctx.Err()
		return nil, ctx.Err()
	})
	cs := connectServer(t, newServer(h, Options{Agent: "engineer"}, nil), protocolVersions[1], fc.client(true))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_human", Arguments: map[string]any{"question": "Now?"}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case err := <-closed:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the form stayed open after the call was cancelled")
	}
	rec, err := h.Get("CLR-0-001")
	require.NoError(t, err)
	assert.Equal(t, ledger.Pending, rec.Status)
	got := into[AskResult](t, callTool(t, cs, "clarify_wait", map[string]any{"id": "CLR-0-001", "wait_seconds": 0}))
	assert.Equal(t, OutcomePending, got.Outcome)
}

// statusSide is a Side that notes, at each Push, the status of the
// clarification it watches: what GitHub or Slack mode would mirror.
type statusSide struct {
	h      *router.Hub
	id     string
	mu     *sync.Mutex
	pushed *[]ledger.Status
}

func (statusSide) Read(context.Context) {}
func (s statusSide) Push(context.Context) {
	rec, err := s.h.Get(s.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		*s.pushed = append(*s.pushed, rec.Status)
	}
}
func (statusSide) Wait(ctx context.Context, h *router.Hub, id string, timeout time.Duration) (router.Record, error) {
	return h.Wait(ctx, id, timeout)
}

// TestElicitMirrored: the question is pushed to the channels (a Slack
// thread, a GitHub comment) before the form shows, so that people there
// can answer it meanwhile, whatever the client's protocol; and the form's
// answer is pushed by the call that took it, as any answer given through
// the server is.
func TestElicitMirrored(t *testing.T) {
	for _, version := range protocolVersions[:2] {
		t.Run(version, func(t *testing.T) {
			h, _ := hubWith(t, elicitOn)
			var mu sync.Mutex
			var pushed []ledger.Status
			var beforeForm []ledger.Status
			fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				beforeForm = slices.Clone(pushed)
				mu.Unlock()
				return accept(answer("yes")), nil
			})
			side := statusSide{h: h, id: "CLR-0-001", mu: &mu, pushed: &pushed}
			cs := connectServer(t, newServer(h, Options{Agent: "engineer", Side: func() Side { return side }}, nil), version, fc.client(true))
			assert.Equal(t, "yes", into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"question": "Ok?"})).Answer)
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, pushed)
			assert.Equal(t, ledger.Answered, pushed[len(pushed)-1])
			require.NotEmpty(t, beforeForm, "pushed before the form showed")
			assert.Equal(t, ledger.Pending, beforeForm[0])
		})
	}
}

// TestAskWaitMirrored: a question asked with a wait is pushed to the
// channels before the call waits, not only once it returns.
func TestAskWaitMirrored(t *testing.T) {
	h, _ := hubWith(t, "")
	var mu sync.Mutex
	var pushed []ledger.Status
	side := statusSide{h: h, id: "CLR-0-001", mu: &mu, pushed: &pushed}
	fc := newFormClient(nil)
	cs := connectServer(t, newServer(h, Options{Agent: "engineer", Side: func() Side { return side }}, nil), protocolVersions[0], fc.client(false))
	got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"question": "Ok?", "wait_seconds": 0.2}))
	assert.Equal(t, OutcomeTimedOut, got.Outcome)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []ledger.Status{ledger.Pending, ledger.Pending}, pushed, "before the wait, and as the call returns")
}

// TestNoElicitation: no form unless both the workspace allows it and the
// client can show one; otherwise ask_human is what it always was.
func TestNoElicitation(t *testing.T) {
	for _, version := range protocolVersions {
		for _, tt := range []struct {
			name      string
			config    string
			withForms bool
		}{
			{"a client that shows forms, a workspace that does not allow them", "", true},
			{"a workspace that allows forms, a client that cannot show them", elicitOn, false},
		} {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				h, _ := hubWith(t, tt.config)
				fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return accept(answer("a")), nil
				})
				cs := connectServer(t, newServer(h, Options{Agent: "engineer"}, nil), version, fc.client(tt.withForms))
				got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"question": "q?", "options": []string{"a", "b"}, "wait_seconds": 0.2}))
				assert.Equal(t, OutcomeTimedOut, got.Outcome)
				fc.noForm(t)
				assert.Zero(t, fc.created.Load())
			})
		}
	}
}

// TestElicitRace: the form and the command line (a real agentx process)
// answer the same question at about the same moment, many times, for a
// client speaking multi round-trip requests and one that does not.
// Whichever is recorded first is the answer; the form's answer is never
// recorded after another, nor twice. When the form loses, a client
// speaking multi round-trip requests is always told; on an earlier
// version the form may instead be closed before the person submits it
// (submitted as it closes, they are told:
// TestElicitAcceptedAsFormCloses), and the ledger is the same.
func TestElicitRace(t *testing.T) {
	bin := agentxBinary(t)
	const rounds = 8
	for _, version := range protocolVersions[:2] {
		t.Run(version, func(t *testing.T) {
			root := elicitRoot(t, bin, true)
			var (
				mu   sync.Mutex
				lost = map[string]string{} // id: "closed" or "told"
				cli  sync.WaitGroup
			)
			fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				msg := req.Params.Message
				if rest, ok := strings.CutPrefix(msg, "Your answer was not recorded: "); ok {
					id, _, _ := strings.Cut(rest, " ")
					mu.Lock()
					lost[id] = "told"
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept"}, nil
				}
				id := msg[strings.Index(msg, "(")+1 : strings.Index(msg, ",")]
				n := 0
				_, _ = fmt.Sscanf(id, "CLR-%d-001", &n)
				cli.Go(func() {
					if out, err := personAnswers(bin, root, id, "cli"); err != nil {
						t.Errorf("%s: the command line's answer: %v: %s", id, err, out)
					}
				})
				select { // vary who is first
				case <-ctx.Done():
					mu.Lock()
					lost[id] = "closed"
					mu.Unlock()
					return nil, ctx.Err()
				case <-time.After(time.Duration(n%4) * 60 * time.Millisecond):
				}
				return accept(answer("form")), nil
			})
			cs := serveProcess(t, bin, root, version, fc.client(true))
			formFirst := 0
			for i := range rounds {
				id := fmt.Sprintf("CLR-%d-001", 10+i) // an issue each: a run asks at most 3 on one
				got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"issue": 10 + i, "topic": "t", "question": "q" + id}))
				require.Equal(t, id, got.ID)
				cli.Wait()
				answers := answersOf(t, bin, root, id)
				mu.Lock()
				how := lost[id]
				mu.Unlock()
				if strings.HasSuffix(answers[0], ": form") {
					formFirst++
					assert.Equal(t, []string{"human elicitation:agentx-test: form", "human alice: cli"}, answers, "%s: the form first, then the person's further reply", id)
					assert.Empty(t, how, id)
					continue
				}
				assert.Equal(t, []string{"human alice: cli"}, answers, "%s: the command line first: the form's answer is not recorded", id)
				assert.Equal(t, "cli", got.Answer, id)
				if version >= multiRoundTripVersion {
					assert.Equal(t, "told", how, "%s: the form lost and the person was not told", id)
				}
			}
			t.Logf("%s, %d rounds: the form answered first in %d, the command line in %d", version, rounds, formFirst, rounds-formFirst)
		})
	}
}

// TestElicitRequestState: a second call's request state is taken only as
// this server's run made it; anything else is a usage error that records
// nothing, and a state made for one question answers no other.
func TestElicitRequestState(t *testing.T) {
	h, _ := hubWith(t, elicitOn)
	s := newServer(h, Options{Agent: "engineer", Classify: testClassify}, nil)
	other := newServer(h, Options{Agent: "engineer"}, nil)
	good := s.seal(form{ID: "CLR-1-001", Round: 1, Step: stepForm})
	f, err := s.unseal(good)
	require.NoError(t, err)
	assert.Equal(t, form{ID: "CLR-1-001", Round: 1, Step: stepForm}, f)
	body, _, _ := strings.Cut(good, ".")
	forged := s.seal(form{ID: "CLR-1-002", Round: 1, Step: stepForm})
	_, forgedSum, _ := strings.Cut(forged, ".")
	for _, bad := range []string{"x", ".", "a.b", body, body + "." + forgedSum, other.seal(f), good + "x", "\x00.\x00"} {
		_, err := s.unseal(bad)
		var input *ledger.InputError
		assert.ErrorAs(t, err, &input, "%q", bad)
	}

	// over the protocol: the SDK client without its automatic retries
	c := mcp.NewClient(&mcp.Implementation{Name: "agentx-test"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, fmt.Errorf("not shown: this client answers by hand")
		},
	})
	cs := connectServer(t, s, protocolVersions[0], c)
	ctx := context.Background()
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_human", Arguments: map[string]any{"issue": 1, "question": "q?"}})
	require.NoError(t, err)
	require.True(t, first.NeedsInput())
	require.Contains(t, first.InputRequests, formRequest)
	require.NotEmpty(t, first.RequestState)

	retry := func(state string) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_human", Arguments: map[string]any{"issue": 1, "question": "q?"},
			RequestState: state, InputResponses: mcp.InputResponseMap{formRequest: accept(answer("forged"))}})
		require.NoError(t, err)
		return res
	}
	res := retry(other.seal(form{ID: "CLR-1-001", Round: 1, Step: stepForm})) // another run's
	assert.True(t, res.IsError)
	assert.Equal(t, "usage", errInfo(t, call{res}).Code)
	res = retry(body + "." + forgedSum)
	assert.True(t, res.IsError)
	assert.Equal(t, "usage", errInfo(t, call{res}).Code)
	assert.Contains(t, call{res}.text(), "requestState")
	rec, err := h.Get("CLR-1-001")
	require.NoError(t, err)
	assert.Equal(t, ledger.Pending, rec.Status, "nothing recorded")
	_, err = h.Get("CLR-1-002")
	assert.ErrorIs(t, err, ledger.ErrNotFound, "and nothing asked")

	// the state the server gave takes the answer, once
	res = retry(first.RequestState)
	assert.Equal(t, "forged", into[AskResult](t, call{res}).Answer)
	res = retry(first.RequestState)
	require.True(t, res.NeedsInput(), "a replay is refused, and the person told")
	told := res.InputRequests[toldRequest].(*mcp.ElicitParams)
	assert.Contains(t, told.Message, "Your answer was not recorded: CLR-1-001 was answered first by human (elicitation:agentx-test)")
	rec, err = h.Get("CLR-1-001")
	require.NoError(t, err)
	assert.Len(t, rec.Thread, 2, "the question and one answer")
}

func TestFormReply(t *testing.T) {
	free := form{ID: "CLR-1-001"}
	choice := form{ID: "CLR-1-001", Options: []string{"yes", "no", "x\x1by"}}
	for _, tt := range []struct {
		f       form
		content map[string]any
		want    router.Reply
		err     string
	}{
		{free, answer("Per key."), router.Reply{Body: "Per key."}, ""},
		{choice, answer("no"), router.Reply{Option: 2}, ""},
		{choice, map[string]any{answerField: "yes", noteField: " soon "}, router.Reply{Option: 1, Body: "soon"}, ""},
		{choice, map[string]any{answerField: "yes", noteField: 3.0}, router.Reply{Option: 1}, ""},
		{choice, answer(line("x\x1by")), router.Reply{Option: 3}, ""},
		{choice, answer("x\x1by"), router.Reply{}, `the answer "x\x1by" is not one of the options (yes; no; x\x1by)`},
		{choice, answer("maybe"), router.Reply{}, `CLR-1-001: the answer "maybe" is not one of the options (yes; no; x\x1by)`},
		{choice, answer(""), router.Reply{}, "CLR-1-001: the answer is empty"},
		{choice, map[string]any{answerField: "yes", noteField: strings.Repeat("n", ledger.MaxBodyLen+1)}, router.Reply{}, "the note is 65537 bytes long; the limit is 65536"},
		{free, answer("  "), router.Reply{}, "CLR-1-001: the answer is empty"},
		{free, answer(strings.Repeat("é", ledger.MaxBodyLen/2+1)), router.Reply{}, "CLR-1-001: the answer is 65538 bytes long; the limit is 65536"},
		{free, answer(strings.Repeat("y", ledger.MaxBodyLen)), router.Reply{Body: strings.Repeat("y", ledger.MaxBodyLen)}, ""},
		{free, map[string]any{answerField: 42.0}, router.Reply{}, "CLR-1-001: the answer is not text"},
		{free, map[string]any{}, router.Reply{}, "without an answer"},
		{free, nil, router.Reply{}, "without an answer"},
	} {
		got, err := tt.f.reply(tt.content)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, "%v", tt.content)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, "%v", tt.content)
	}
}

func TestClientName(t *testing.T) {
	for in, want := range map[string]string{
		"claude-code":            "claude-code",
		"":                       "client",
		"Visual Studio Code":     "VisualStudioCode",
		"evil\x1b]0;x\x07\u202e": "evil]0;x",
		strings.Repeat("é", 40):  strings.Repeat("é", 32),
		"\xff\xfe":               "client",
	} {
		assert.Equal(t, want, cleanClientName(in), "%q", in)
	}
}

// FuzzFormReply: whatever content a client sends back for a form, reply
// never panics, and what it takes is an option the form offered or
// non-blank text.
func FuzzFormReply(f *testing.F) {
	f.Add(`{"answer":"no"}`, true)
	f.Add(`{"answer":"yes","note":"soon"}`, true)
	f.Add(`{"answer":" "}`, false)
	f.Add(`{"answer":42}`, false)
	f.Add(`{"note":["x"]}`, true)
	f.Fuzz(func(t *testing.T, raw string, withOptions bool) {
		var content map[string]any
		if json.Unmarshal([]byte(raw), &content) != nil {
			return
		}
		fm := form{ID: "CLR-1-001"}
		if withOptions {
			fm.Options = []string{"yes", "no", "x\x1by"}
		}
		r, err := fm.reply(content)
		if err != nil {
			return
		}
		if withOptions {
			assert.True(t, r.Option >= 1 && r.Option <= len(fm.Options), "%+v", r)
		} else {
			assert.Zero(t, r.Option)
			assert.NotEmpty(t, strings.TrimSpace(r.Body))
		}
	})
}

// FuzzRequestState: no request state a client makes up is taken, and
// unseal never panics on one.
func FuzzRequestState(f *testing.F) {
	s := &server{stateKey: newStateKey()}
	good := s.seal(form{ID: "CLR-1-001", Round: 1, Step: stepForm})
	f.Add(good)
	f.Add("")
	f.Add(".")
	f.Add("e30.")
	f.Fuzz(func(t *testing.T, state string) {
		fm, err := s.unseal(state)
		if err == nil {
			assert.Equal(t, good, state, "only the state the server made: %+v", fm)
		}
	})
}
