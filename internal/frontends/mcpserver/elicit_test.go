package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

const elicitOn = "[mcp]\nelicit = true"

// formClient is an MCP client (the official Go SDK's) whose person
// answers forms with answer: each form it is shown is sent on shown, and
// answer decides what comes back (it may block, and sees the form's
// context: cancelled when the server closes the form).
type formClient struct {
	shown  chan *mcp.ElicitRequest
	answer func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
}

func newFormClient(answer func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *formClient {
	return &formClient{shown: make(chan *mcp.ElicitRequest, 16), answer: answer}
}

func (f *formClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		f.shown <- req
		return f.answer(ctx, req)
	}}
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

func accept(answer string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{answerField: answer}}
}

// serveProcess starts `agentx mcp` in root, launched as engineer, and
// connects the Go SDK's client to it as the client named "agentx-test".
func serveProcess(t *testing.T, bin, root string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	server := exec.Command(bin, "mcp", "--verbose")
	server.Dir = root
	server.Env = agentxEnv(root, "engineer")
	var stderr strings.Builder
	server.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agentx-test"}, opts).Connect(context.Background(), &mcp.CommandTransport{Command: server}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("server's log:\n%s", stderr.String())
		}
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
	cmd := exec.Command(bin, "clarify", "answer", id, "--as", "alice", "--body", body)
	cmd.Dir = root
	cmd.Env = agentxEnv(root, "")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// answersOf is the answer entries of id's first round, each with the
// person behind it, read by a real agentx process.
func answersOf(t *testing.T, bin, root, id string) []string {
	t.Helper()
	var shown struct {
		Thread []ledger.ThreadEntry `json:"thread"`
		X      *ledger.Extra        `json:"agentx"`
	}
	require.NoError(t, json.Unmarshal([]byte(run(t, bin, root, "", "clarify", "show", id, "--json")), &shown))
	c := ledger.Clarification{Thread: shown.Thread, X: shown.X}
	var out []string
	for i, e := range shown.Thread {
		if e.Type == ledger.Answer && e.Round == 1 {
			out = append(out, e.From+" "+c.PersonAt(i)+": "+e.Body)
		}
	}
	return out
}

// TestElicitFormAnswers: with [mcp] elicit = true and a client that shows
// forms, ask_human shows the question to the person at the client, the
// options as a choice; their answer is the answer, recorded as a person's
// with the form's provenance.
func TestElicitFormAnswers(t *testing.T) {
	bin := agentxBinary(t)
	root := elicitRoot(t, bin, true)
	fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return accept("Friday"), nil
	})
	cs := serveProcess(t, bin, root, fc.options())

	got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{
		"issue": 3, "topic": "Release day", "question": "Thursday or Friday?\n\x1b[2Jsee the plan", "options": []string{"Thursday", "Friday"}, "wait_seconds": 20,
	}))
	assert.Equal(t, OutcomeAnswered, got.Outcome)
	assert.Equal(t, "Friday", got.Answer)
	assert.Equal(t, ledger.Human, got.AnsweredBy)

	form := fc.nextForm(t)
	assert.Contains(t, form.Params.Message, "engineer asks you (CLR-3-001, issue #3): Release day")
	assert.Contains(t, form.Params.Message, "Thursday or Friday?")
	assert.NotContains(t, form.Params.Message, "\x1b", "the agent's text is neutralised")
	b, err := json.Marshal(form.Params.RequestedSchema)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","required":["answer"],"properties":{"answer":{"type":"string","title":"Your choice","minLength":1,"enum":["Thursday","Friday"]}}}`, string(b))

	assert.Equal(t, []string{"human elicitation:agentx-test: Friday"}, answersOf(t, bin, root, "CLR-3-001"))
	events, err := os.ReadFile(filepath.Join(root, ".agentx", "state", "events.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(events), `"clarification-answered"`)
}

// TestElicitAnsweredElsewhere: a person answering from the command line
// (a real agentx process) while the form is open closes the form: the
// client's request is cancelled, and only the command line's answer is
// recorded.
func TestElicitAnsweredElsewhere(t *testing.T) {
	bin := agentxBinary(t)
	root := elicitRoot(t, bin, true)
	closed := make(chan error, 1)
	fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		<-ctx.Done() // the person has not answered yet
		closed <- ctx.Err()
		return nil, ctx.Err()
	})
	cs := serveProcess(t, bin, root, fc.options())
	got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"question": "Deploy now?"}))
	assert.Equal(t, OutcomePending, got.Outcome)
	assert.Contains(t, got.Guidance, "also shown as a form to the person at this client")
	fc.nextForm(t)

	out, err := personAnswers(bin, root, got.ID, "Not before the freeze ends.")
	require.NoError(t, err, out)
	select {
	case err := <-closed:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the form stayed open after the question was answered elsewhere")
	}
	assert.Equal(t, []string{"human alice: Not before the freeze ends."}, answersOf(t, bin, root, got.ID))
	waited := into[AskResult](t, callTool(t, cs, "clarify_wait", map[string]any{"id": got.ID, "wait_seconds": 0}))
	assert.Equal(t, "Not before the freeze ends.", waited.Answer)
}

// TestElicitLateAnswerRefused: a form answered after the question was
// answered elsewhere (before the server noticed and closed the form) is
// refused: the person is told by whom it was answered, and the ledger
// keeps the one answer. The other answer comes from a real agentx process.
func TestElicitLateAnswerRefused(t *testing.T) {
	bin := agentxBinary(t)
	dir, rules := testenv.Workspace(t, elicitOn)
	h := router.New(ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, nil), rules, dir)
	release := make(chan struct{})
	fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if strings.HasPrefix(req.Params.Message, "Your answer was not recorded") {
			return &mcp.ElicitResult{Action: "accept"}, nil
		}
		<-release
		return accept("Ship it."), nil
	})
	s := newServer(h, Options{Agent: "engineer"}, nil)
	s.formPoll = time.Hour // the server does not notice the other answer in time
	cs := connectServer(t, s, fc.options())

	got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"issue": 5, "question": "Ship it?"}))
	fc.nextForm(t)
	out, err := personAnswers(bin, dir, got.ID, "Hold it until Monday.")
	require.NoError(t, err, out)
	close(release)

	told := fc.nextForm(t)
	assert.Contains(t, told.Params.Message, `Your answer was not recorded: CLR-5-001 was answered first by human (alice): "Hold it until Monday."`)
	assert.Equal(t, []string{"human alice: Hold it until Monday."}, answersOf(t, bin, dir, got.ID))
}

// connectServer connects a client with opts to s over an in-memory
// transport.
func connectServer(t *testing.T, s *server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agentx-test"}, opts).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// TestElicitRace: the form and the command line (a real agentx process)
// answer the same question at the same moment, many times. Whichever is
// recorded first is the answer; the form's answer is never recorded after
// another, nor twice; when it loses, the form is closed or the person is
// told.
func TestElicitRace(t *testing.T) {
	bin := agentxBinary(t)
	root := elicitRoot(t, bin, true)
	const rounds = 8
	var (
		mu      sync.Mutex
		release = map[string]chan struct{}{}
		lost    = map[string]string{} // id: "closed" or "told"
	)
	fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		msg := req.Params.Message
		if strings.HasPrefix(msg, "Your answer was not recorded: ") {
			id, _, _ := strings.Cut(strings.TrimPrefix(msg, "Your answer was not recorded: "), " ")
			mu.Lock()
			lost[id] = "told"
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept"}, nil
		}
		id := msg[strings.Index(msg, "(")+1 : strings.Index(msg, ",")]
		mu.Lock()
		ch := release[id]
		mu.Unlock()
		<-ch
		if ctx.Err() != nil {
			mu.Lock()
			lost[id] = "closed"
			mu.Unlock()
		}
		return accept("form"), nil
	})
	cs := serveProcess(t, bin, root, fc.options())
	formFirst := 0
	for i := range rounds {
		id := "CLR-9-" + []string{"001", "002", "003", "004", "005", "006", "007", "008"}[i]
		mu.Lock()
		release[id] = make(chan struct{})
		mu.Unlock()
		got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"issue": 9, "topic": "t", "question": "q" + id}))
		require.Equal(t, id, got.ID)
		fc.nextForm(t)

		var wg sync.WaitGroup
		wg.Go(func() {
			if out, err := personAnswers(bin, root, id, "cli"); err != nil {
				t.Errorf("%s: the command line's answer: %v: %s", id, err, out)
			}
		})
		time.Sleep(time.Duration(i%4) * 15 * time.Millisecond) // vary who is first
		close(release[id])
		wg.Wait()

		// the form's answer, if taken, is taken by now or never
		require.Eventually(t, func() bool {
			a := answersOf(t, bin, root, id)
			mu.Lock()
			defer mu.Unlock()
			return (len(a) > 0 && strings.HasSuffix(a[0], ": form")) || lost[id] != ""
		}, 10*time.Second, 50*time.Millisecond, id)
		answers := answersOf(t, bin, root, id)
		forms := 0
		for _, a := range answers {
			if strings.HasSuffix(a, ": form") {
				forms++
			}
		}
		mu.Lock()
		how := lost[id]
		mu.Unlock()
		if strings.HasSuffix(answers[0], ": form") {
			formFirst++
			assert.Equal(t, "human elicitation:agentx-test: form", answers[0], id)
			assert.Equal(t, []string{"human elicitation:agentx-test: form", "human alice: cli"}, answers, "%s: the form first, then the person's further reply", id)
			assert.Empty(t, how, id)
		} else {
			assert.Equal(t, []string{"human alice: cli"}, answers, "%s: the command line first: the form's answer is not recorded", id)
			assert.NotEmpty(t, how, "%s: the form lost and was neither closed nor told", id)
		}
		assert.LessOrEqual(t, forms, 1, id)
	}
	t.Logf("%d rounds: the form answered first in %d, the command line in %d", rounds, formFirst, rounds-formFirst)
}

// TestNoElicitation: no form unless both the workspace allows it and the
// client can show one; otherwise ask_human is what it always was.
func TestNoElicitation(t *testing.T) {
	for _, tt := range []struct {
		name      string
		config    string
		withForms bool
	}{
		{"a client that shows forms, a workspace that does not allow them", "", true},
		{"a workspace that allows forms, a client that cannot show them", elicitOn, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, rules := testenv.Workspace(t, tt.config)
			h := router.New(ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, nil), rules, dir)
			fc := newFormClient(func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return accept("should not be asked"), nil
			})
			opts := &mcp.ClientOptions{}
			if tt.withForms {
				opts = fc.options()
			}
			cs := connectServer(t, newServer(h, Options{Agent: "engineer"}, nil), opts)
			got := into[AskResult](t, callTool(t, cs, "ask_human", map[string]any{"question": "q?", "options": []string{"a", "b"}, "wait_seconds": 0.5}))
			assert.Equal(t, OutcomeTimedOut, got.Outcome)
			assert.NotContains(t, got.Guidance, "form")
			select {
			case req := <-fc.shown:
				t.Fatalf("a form was shown: %q", req.Params.Message)
			default:
			}
		})
	}
}

func TestFormAnswer(t *testing.T) {
	free := form{id: "CLR-1-001"}
	choice := form{id: "CLR-1-001", options: []string{"yes", "no"}}
	for _, tt := range []struct {
		f       form
		content map[string]any
		want    string
		err     string
	}{
		{free, map[string]any{"answer": "Per key."}, "Per key.", ""},
		{choice, map[string]any{"answer": "no"}, "no", ""},
		{choice, map[string]any{"answer": "maybe"}, "", "not one of the options"},
		{free, map[string]any{"answer": "  "}, "", "empty or not text"},
		{free, map[string]any{"answer": 42.0}, "", "empty or not text"},
		{free, map[string]any{}, "", "without an answer"},
		{free, nil, "", "without an answer"},
	} {
		got, err := tt.f.answer(tt.content)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, "%v", tt.content)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
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
