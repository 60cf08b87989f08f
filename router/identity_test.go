package router

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

func named(name string) func() (string, error) {
	return func() (string, error) { return name, nil }
}

func allow(names ...string) func() ([]string, error) {
	return func() ([]string, error) { return names, nil }
}

// TestClaim: the one decision of who acts, for every kind of caller.
func TestClaim(t *testing.T) {
	tests := []struct {
		name   string
		caller *Caller
		claim  string
		want   string
		kind   IdentityKind // "" = allowed
	}{
		// a process launched as an agent acts as that agent only
		{"agent, no name given", &Caller{Agent: "engineer"}, "", "engineer", ""},
		{"agent names itself", &Caller{Agent: "engineer"}, "engineer", "engineer", ""},
		{"agent names another agent", &Caller{Agent: "engineer"}, "architect", "", IdentityOtherAgent},
		{"agent names human", &Caller{Agent: "engineer", Person: named("alice")}, "human", "", IdentityAgentAsPerson},
		{"agent names the hub", &Caller{Agent: "engineer"}, "agentx", "", IdentityHub},
		{"launched as human", &Caller{Agent: "human"}, "", "", IdentityNotAnAgent},
		{"launched as the hub", &Caller{Agent: "agentx"}, "engineer", "", IdentityNotAnAgent},

		// a process launched as no agent: a person, standing in for an agent or as human
		{"person, no name given", &Caller{Person: named("alice")}, "", "", ""},
		{"person as an agent", &Caller{Person: named("alice")}, "architect", "architect", ""},
		{"person as human", &Caller{Person: named("alice")}, "human", "human", ""},
		{"person as human, allowed", &Caller{Person: named("Alice@Example.com"), Allow: allow("bob", "alice@example.com")}, "human", "human", ""},
		{"person as human, not allowed", &Caller{Person: named("carol"), Allow: allow("alice@example.com", "bob")}, "human", "", IdentityNotAllowed},
		{"person as human, empty allow list", &Caller{Person: named("carol"), Allow: allow()}, "human", "human", ""},
		{"person as human, no name", &Caller{Person: func() (string, error) { return "", errors.New("no $USER") }}, "human", "", IdentityNoName},
		{"person as human, no way to name", &Caller{}, "human", "", IdentityNoName},
		{"person as the hub", &Caller{Person: named("alice")}, "agentx", "", IdentityHub},

		// a front end that never acts as a person
		{"agents only, as human", &Caller{AgentsOnly: true, Via: "the MCP server", Person: named("alice")}, "human", "", IdentityAgentsOnly},
		{"agents only, as an agent", &Caller{AgentsOnly: true}, "architect", "architect", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.caller.Claim("from", tt.claim)
			if tt.kind == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			var ie *IdentityError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tt.kind, ie.Kind)
			assert.Empty(t, got)
			assert.NotContains(t, err.Error(), "--", "errors below the front ends speak of fields, not flags")
			assert.NotContains(t, err.Error(), "refused", "every kind has its own message")
		})
	}
}

func TestPersonIsAskedOnce(t *testing.T) {
	n := 0
	c := &Caller{Person: func() (string, error) { n++; return " alice ", nil }}
	for range 3 {
		p, err := c.Human()
		require.NoError(t, err)
		assert.Equal(t, "alice", p, "trimmed")
	}
	assert.Equal(t, 1, n)
}

func TestPersonNameIsChecked(t *testing.T) {
	for _, bad := range []string{"", "   ", "eve\x1b]0;pwned\a", "a\u202eb", string(make([]byte, 200))} {
		c := &Caller{Person: named(bad)}
		_, err := c.Human()
		var ie *IdentityError
		require.ErrorAs(t, err, &ie, "%q", bad)
		assert.Equal(t, IdentityNoName, ie.Kind)
	}
}

// TestHubRecordsThePerson: a person's answer and resolution carry their
// name in the record (the entry stays "human", as AgentX has it); a hub
// call without a caller (the hub's own, a test's) is trusted and unnamed;
// a person [humans] allow does not list changes nothing.
func TestHubRecordsThePerson(t *testing.T) {
	h, _ := newTestHub(t, "")
	ctx := context.Background()
	_, err := h.Ask(ctx, askReq("engineer", "human"))
	require.NoError(t, err)
	_, err = h.Ask(ctx, askReq("engineer", "architect"))
	require.NoError(t, err)
	_, err = h.Escalate(ctx, "CLR-42-002", "by hand")
	require.NoError(t, err)

	// a person not on the list: refused, nothing written
	carol := WithCaller(ctx, &Caller{Person: named("carol"), Allow: allow("alice@example.com")})
	before, err := h.Store.Read(42)
	require.NoError(t, err)
	_, err = h.Answer(carol, "CLR-42-001", "", "Yes.")
	var ie *IdentityError
	require.ErrorAs(t, err, &ie, "the answer defaults to human: the caller is checked")
	assert.Equal(t, IdentityNotAllowed, ie.Kind)
	_, err = h.Resolve(carol, "CLR-42-002", ledger.Human, "decision: no")
	require.ErrorAs(t, err, &ie)
	after, err := h.Store.Read(42)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	// an agent process: the hub refuses a default that turns out human
	eng := WithCaller(ctx, &Caller{Agent: "engineer"})
	_, err = h.Answer(eng, "CLR-42-001", "", "Yes.")
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, IdentityAgentAsPerson, ie.Kind)

	// alice answers (by default, as human) and resolves the escalation
	alice := WithCaller(ctx, &Caller{Person: named("alice@example.com"), Allow: allow("alice@example.com")})
	rec, err := h.Answer(alice, "CLR-42-001", "", "Yes, behind a flag.")
	require.NoError(t, err)
	a := rec.Current(ledger.Answer)
	assert.Equal(t, ledger.Human, a.From, "the AgentX entry says human")
	assert.Equal(t, "alice@example.com", rec.PersonAt(len(rec.Thread)-1))
	rec, err = h.Resolve(alice, "CLR-42-002", ledger.Human, "decision: Redis")
	require.NoError(t, err)
	assert.Equal(t, []ledger.Person{{Entry: 2, Name: "alice@example.com"}}, rec.X.People)

	// a trusted call names nobody
	_, err = h.Ask(ctx, askReq("engineer", "human"))
	require.NoError(t, err)
	rec, err = h.Answer(ctx, "CLR-42-003", ledger.Human, "Later.")
	require.NoError(t, err)
	assert.Empty(t, rec.X.People)

	l, err := h.Store.Read(42)
	require.NoError(t, err)
	require.NoError(t, l.Validate())
}
