package router

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// command is a command line: agentx and a command (agentx alone is the
// hub's name, which a message may give).
var command = regexp.MustCompile(`\bagentx (clarify|inbox|ready|hook|state|doctor|eval|proposals|skills|monitor|init|events|stats|workflow|remote|scope|mcp|help|demo)\b`)

// TestCoreErrorsSpeakNoFrontEnd provokes the refusals the hub makes and
// checks that none speaks of a front end: no command (agentx ...) and no
// flag (--...) in its message or hint. Each front end words its own advice
// from the error's fields and rule (the CLI's flags, the MCP server's tools).
func TestCoreErrorsSpeakNoFrontEnd(t *testing.T) {
	h, _ := newTestHub(t, "")
	h.Rules().Config.MaxQuestions = 2
	ctx := context.Background()
	agent := func(name string) context.Context { return WithCaller(ctx, &Caller{Agent: name}) }
	mcp := WithCaller(ctx, &Caller{Agent: "engineer", AgentsOnly: true, Via: "the MCP server"})

	ask, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	toHuman, err := h.Ask(ctx, askReq("engineer", ledger.Human))
	require.NoError(t, err)
	esc, err := h.Ask(ctx, AskRequest{Issue: 43, From: "engineer", To: "architect", Topic: "t", Question: "q"})
	require.NoError(t, err)
	_, err = h.Escalate(ctx, esc.ID, "")
	require.NoError(t, err)

	refused := map[string]func() error{
		"scope": func() error { _, err := h.Ask(ctx, askReq("engineer", "reviewer")); return err },
		"blocking not allowed": func() error {
			_, err := h.Ask(ctx, AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "t", Question: "q", Workflow: "bug"})
			return err
		},
		"blocking not allowed, to a person": func() error {
			_, err := h.Ask(ctx, AskRequest{Issue: 7, From: "engineer", To: ledger.Human, Topic: "t", Question: "q", Workflow: "bug"})
			return err
		},
		"question cap":             func() error { _, err := h.Ask(ctx, askReq("engineer", "product-manager")); return err },
		"answer by a non-party":    func() error { _, err := h.Answer(ctx, ask.ID, "reviewer", "a"); return err },
		"followup by a non-party":  func() error { _, err := h.Followup(ctx, ask.ID, "reviewer", "q"); return err },
		"resolve by a non-party":   func() error { _, err := h.Resolve(ctx, ask.ID, "reviewer", ""); return err },
		"cancel by a non-party":    func() error { _, err := h.Cancel(ctx, ask.ID, "architect"); return err },
		"assume by a non-party":    func() error { _, err := h.Assume(ctx, ask.ID, "architect", "x"); return err },
		"agent resolves escalated": func() error { _, err := h.Resolve(ctx, esc.ID, "engineer", "decision: x"); return err },
		"agent answers for a person": func() error {
			_, err := h.Answer(agent("engineer"), toHuman.ID, ledger.Human, "a")
			return err
		},
		"agents-only front end as a person": func() error { _, err := h.Answer(mcp, toHuman.ID, ledger.Human, "a"); return err },
		"claim another agent": func() error {
			_, err := (&Caller{Agent: "engineer"}).Claim("from", "architect")
			return err
		},
		"claim the hub":         func() error { _, err := (&Caller{}).Claim("from", HubAgent); return err },
		"wait timeout":          func() error { _, err := h.Wait(ctx, ask.ID, time.Millisecond); return err },
		"ask itself":            func() error { _, err := h.Ask(ctx, askReq("engineer", "engineer")); return err },
		"a person asks":         func() error { _, err := h.Ask(ctx, askReq(ledger.Human, "architect")); return err },
		"unknown clarification": func() error { _, err := h.Answer(ctx, "CLR-42-099", "architect", "a"); return err },
		"closed clarification": func() error {
			// abandoned, not cancelled: a cancelled question would not count
			// towards the cap tried above
			if _, err := h.Abandon(ctx, toHuman.ID, "", "no longer needed"); err != nil {
				return err
			}
			_, err := h.Followup(ctx, toHuman.ID, "engineer", "q")
			return err
		},
	}
	for name, op := range refused {
		t.Run(name, func(t *testing.T) {
			err := op()
			require.Error(t, err)
			texts := []string{err.Error()}
			var h interface{ Hint() string }
			for e := err; e != nil; e = errors.Unwrap(e) {
				if errors.As(e, &h) {
					texts = append(texts, h.Hint())
				}
			}
			for _, s := range texts {
				assert.NotRegexp(t, command, s, "a command")
				assert.NotContains(t, s, "--", "a flag in %q", s)
			}
		})
	}
}

// TestRuleErrorFields: a refusal carries its rule and the fields a front
// end words its advice from.
func TestRuleErrorFields(t *testing.T) {
	h, _ := newTestHub(t, "")
	h.Rules().Config.MaxQuestions = 1
	ctx := context.Background()
	tests := []struct {
		name string
		req  AskRequest
		want RuleError
	}{
		{"scope", askReq("engineer", "reviewer"), RuleError{Kind: RuleScope, From: "engineer", To: "reviewer", Workflow: "feature", Step: "implement", Allowed: []string{"architect", "product-manager"}}},
		{"blocking", AskRequest{Issue: 7, From: "engineer", To: "architect", Topic: "t", Question: "q", Workflow: "bug"}, RuleError{Kind: RuleBlocking, From: "engineer", To: "architect", Workflow: "bug", Step: "fix"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Ask(ctx, tt.req)
			var re *RuleError
			require.True(t, errors.As(err, &re), "%v", err)
			got := *re
			got.Msg = ""
			assert.Equal(t, tt.want, got)
			assert.NotEmpty(t, re.Hint())
		})
	}
	_, err := h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	_, err = h.Ask(ctx, askReq("engineer", "architect"))
	var re *RuleError
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, RuleCap, re.Kind)
	assert.Equal(t, [4]any{"engineer", 42, 1, 1}, [4]any{re.From, re.Issue, re.Asked, re.Max})
	assert.False(t, strings.Contains(re.Hint(), "--"))
}
