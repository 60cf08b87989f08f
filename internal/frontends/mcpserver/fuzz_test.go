package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// fuzzTool is one tool as the fuzz target calls it: decode raw arguments
// as addTool does, then run the handler.
type fuzzTool func(t *testing.T, s *server, raw json.RawMessage) (text string, err error)

// toolFor builds the fuzz entry for a handler with input In.
func toolFor[In, Out any](h func(*server) handler[In, Out]) fuzzTool {
	schema, resolved := inputSchema[In]()
	return func(t *testing.T, s *server, raw json.RawMessage) (string, error) {
		in, err := decodeArgs[In](raw, schema, resolved)
		if err != nil {
			var ie *ledger.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("decodeArgs(%s): %T %v, want an *ledger.InputError", raw, err, err)
			}
			if strings.Contains(err.Error(), "<invalid") {
				t.Fatalf("decodeArgs(%s): %v: the message shows Go's internals", raw, err)
			}
			return "", nil
		}
		// what decodes re-encodes to arguments that decode the same
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", in, err)
		}
		again, err := decodeArgs[In](b, schema, resolved)
		b2, _ := json.Marshal(again)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("arguments %s decode as %s, which decode as %s, %v", raw, b, b2, err)
		}
		_, text, err := h(s)(context.Background(), in)
		return text, err
	}
}

var fuzzTools = []fuzzTool{
	toolFor(func(s *server) handler[AskInput, AskResult] { return s.ask }),
	toolFor(func(s *server) handler[AskHumanInput, AskResult] { return s.askHuman }),
	toolFor(func(s *server) handler[WaitInput, AskResult] { return s.waitFor }),
	toolFor(func(s *server) handler[AnswerInput, RecordResult] { return s.answer }),
	toolFor(func(s *server) handler[FollowupInput, AskResult] { return s.followup }),
	toolFor(func(s *server) handler[ResolveInput, RecordResult] { return s.resolve }),
	toolFor(func(s *server) handler[AssumeInput, RecordResult] { return s.assume }),
	toolFor(func(s *server) handler[ShowInput, ShowResult] { return s.show }),
	toolFor(func(s *server) handler[ListInput, ListResult] { return s.list }),
	toolFor(func(s *server) handler[ProposalCreateInput, ProposalResult] { return s.proposalCreate }),
	toolFor(func(s *server) handler[ProposalListInput, ProposalListResult] { return s.proposalList }),
	toolFor(func(s *server) handler[ProposalShowInput, ProposalResult] { return s.proposalShow }),
}

// FuzzToolArguments: whatever arguments a client sends to any tool, the
// call never panics; arguments that do not match the tool's schema are an
// *ledger.InputError (a usage error); a handler's error is one of the
// typed errors the CLI maps to an exit code (never "failure"); and a
// result's text is neutralised for the terminal.
func FuzzToolArguments(f *testing.F) {
	for i, s := range []string{
		`{"issue":42,"to":"architect","topic":"Cache","question":"TTL?","wait_seconds":0.5}`,
		`{"question":"Ship it?\nwith details","options":["yes","no"],"issue":0}`,
		`{"id":"CLR-42-001","wait_seconds":1e308}`,
		`{"id":"CLR-42-001","body":"Per key.","from":"architect"}`,
		`{"id":"CLR-42-001","body":"And pooling?"}`,
		`{"id":"CLR-42-001","from":"human","body":"decision"}`,
		`{"id":"CLR-42-001","assumption":"Global."}`,
		`{"id":"CLR-999999999-999999999"}`,
		`{"issue":-1,"status":"Pending","all":true}`,
		`{"type":"tool_fix","title":"Flaky\u001b[2J runner","rationale":"Timed out on #7","action":"Raise its timeout","issues":[7,8],"impact":"high"}`,
		`{"status":"pending","issue":7}`,
		`{"id":"PROP-001"}`,
	} {
		f.Add(uint8(i), []byte(s))
		f.Add(uint8(i), []byte(`null`))
	}
	f.Add(uint8(0), []byte(`{"issue":1e99,"to":"\u202e","topic":"\u001b]0;x\u0007","question":"\ud800"}`))
	dir, rules := testenv.Workspace(f, "")
	store := ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{Wait: time.Second}, nil)
	h := router.New(store, rules, dir)
	h.Warn = func(error) {}
	s := newServer(h, Options{Agent: "engineer", MaxWait: time.Millisecond}, nil)
	f.Fuzz(func(t *testing.T, tool uint8, raw []byte) {
		text, err := fuzzTools[int(tool)%len(fuzzTools)](t, s, raw)
		if err != nil {
			var (
				ie *ledger.InputError
				re *router.RuleError
				le *workflow.LookupError
				te *ledger.TransitionError
				ce *ledger.CorruptError
				id *router.IdentityError
			)
			if !errors.As(err, &ie) && !errors.As(err, &re) && !errors.As(err, &le) && !errors.As(err, &te) &&
				!errors.As(err, &ce) && !errors.As(err, &id) && !errors.Is(err, ledger.ErrNotFound) {
				t.Fatalf("tool %d with %s: untyped error %T %v", int(tool)%len(fuzzTools), raw, err, err)
			}
			return
		}
		if !utf8.ValidString(text) || safetext.Index(text, true) >= 0 {
			t.Fatalf("tool %d with %s: text not neutralised: %q", int(tool)%len(fuzzTools), raw, text)
		}
	})
}
