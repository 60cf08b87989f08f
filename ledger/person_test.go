package ledger

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidatePerson(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"alice@example.com", true},
		{"Renée Dupont", true},
		{"bob", true},
		{"", false},
		{"  ", false},
		{"eve\x1b[2J", false},
		{"line\nbreak", false},
		{"a\u202eb", false}, // bidi override
		{"\xff", false},
		{strings.Repeat("a", MaxPersonLen), true},
		{strings.Repeat("a", MaxPersonLen+1), false},
	}
	for _, tt := range tests {
		err := ValidatePerson(tt.name)
		assert.Equal(t, tt.ok, err == nil, "%q: %v", tt.name, err)
	}
}

func TestHumanActors(t *testing.T) {
	assert.Equal(t, "human", HumanAs(""))
	assert.Equal(t, "human:alice@example.com", HumanAs("alice@example.com"))
	for actor, want := range map[string]bool{"human": true, "human:bob": true, "humanoid": false, "engineer": false, "agentx": false} {
		assert.Equal(t, want, IsHuman(actor), actor)
	}
}

// TestPeopleValidate: a person names a human entry of the thread, by a
// valid name; anything else is refused before a write.
func TestPeopleValidate(t *testing.T) {
	base := func() *Clarification {
		return &Clarification{ID: "CLR-1-001", From: "engineer", To: "human", Topic: "t", Status: Answered, Round: 1, MaxRounds: 5,
			Thread: []ThreadEntry{{Round: 1, From: "engineer", Type: Question, Body: "q"}, {Round: 1, From: Human, Type: Answer, Body: "a"}}}
	}
	tests := []struct {
		name   string
		people []Person
		ok     bool
	}{
		{"the human entry", []Person{{Entry: 1, Name: "alice"}}, true},
		{"an agent's entry", []Person{{Entry: 0, Name: "alice"}}, false},
		{"out of range", []Person{{Entry: 2, Name: "alice"}}, false},
		{"negative", []Person{{Entry: -1, Name: "alice"}}, false},
		{"bad name", []Person{{Entry: 1, Name: "a\x07"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			c.Ext().People = tt.people
			err := (&Ledger{IssueNumber: 1, Clarifications: []*Clarification{c}}).Validate()
			assert.Equal(t, tt.ok, err == nil, "%v", err)
		})
	}

	c := base()
	c.Sign("alice")
	require.Equal(t, []Person{{Entry: 1, Name: "alice"}}, c.X.People)
	assert.Equal(t, "alice", c.PersonAt(1))
	assert.Empty(t, c.PersonAt(0))
	c.Sign("")
	assert.Len(t, c.X.People, 1, "no name, nothing recorded")
}
