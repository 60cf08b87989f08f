package mcpserver

import (
	"context"
	"path/filepath"
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

// slowRunner is a responder that takes its time, or stops when told to.
type slowRunner struct{ delay time.Duration }

func (r slowRunner) Run(ctx context.Context, _ router.Responder, _ router.Invocation) (string, error) {
	select {
	case <-time.After(r.delay):
		return "Use gRPC.", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// TestAskReturnsBeforeASlowResponder: under Run, clarify_ask returns as soon
// as the question is recorded, the responder's answer arrives through
// clarify_wait, and a responder still running when the server stops is
// stopped with it, leaving its question pending.
func TestAskReturnsBeforeASlowResponder(t *testing.T) {
	dir, rules := testenv.Workspace(t, "[agents.architect]\ncommand = [\"architect-bot\"]\n")
	h := router.New(ledger.NewStore(filepath.Join(dir, ".agentx", "state"), lock.Options{}, nil), rules, dir)
	h.Runner = slowRunner{delay: 800 * time.Millisecond}

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- Run(ctx, h, Options{Agent: "engineer", Classify: testClassify}, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)

	start := time.Now()
	r := into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{"issue": 7, "to": "architect", "topic": "API", "question": "REST or gRPC?"}))
	assert.Equal(t, OutcomePending, r.Outcome)
	assert.Less(t, time.Since(start), 600*time.Millisecond, "the ask does not wait for the responder")

	r = into[AskResult](t, callTool(t, cs, "clarify_wait", map[string]any{"id": r.ID, "wait_seconds": 10}))
	assert.Equal(t, OutcomeAnswered, r.Outcome)
	assert.Equal(t, "Use gRPC.", r.Answer)

	r = into[AskResult](t, callTool(t, cs, "clarify_ask", map[string]any{"issue": 7, "to": "architect", "topic": "API", "question": "Versioning?"}))
	require.NoError(t, cs.Close())
	select {
	case <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the client left")
	}
	rec, err := h.Get(r.ID)
	require.NoError(t, err)
	assert.Equal(t, ledger.Pending, rec.Status, "the stopped responder's question stays pending for the monitor's retry")
}
