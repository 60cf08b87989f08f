package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTransitionTable(t *testing.T) {
	allowed := map[[2]Status]bool{
		{Pending, Answered}: true, {Answered, Pending}: true, {Answered, Resolved}: true,
		{Pending, Stale}: true, {Stale, Pending}: true, {Stale, Answered}: true, {Stale, Escalated}: true,
		{Pending, Escalated}: true, {Answered, Escalated}: true, {Escalated, Resolved}: true,
		{Pending, Abandoned}: true, {Answered, Abandoned}: true, {Stale, Abandoned}: true,
	}
	for _, from := range Statuses {
		for _, to := range Statuses {
			want := allowed[[2]Status{from, to}]
			assert.Equal(t, want, CanMove(from, to), "%s -> %s", from, to)
			c := &Clarification{ID: "CLR-1-001", Status: from}
			err := c.Move(to)
			if want {
				assert.NoError(t, err)
				assert.Equal(t, to, c.Status)
			} else {
				var te *TransitionError
				require.True(t, errors.As(err, &te), "%s -> %s must be a TransitionError", from, to)
				assert.Equal(t, from, c.Status, "a refused move changes nothing")
			}
		}
	}
	assert.True(t, Resolved.Final())
	assert.True(t, Abandoned.Final())
	assert.False(t, Escalated.Final())
	assert.False(t, Status("bogus").Valid())
}

func TestTransitionErrorMessage(t *testing.T) {
	tests := []struct {
		from, to Status
		want     string
	}{
		{Resolved, Pending, "CLR-4-002 is resolved, which is final: it cannot become pending"},
		{Escalated, Answered, "CLR-4-002 is escalated: it cannot become answered (from escalated it may become resolved)"},
		{Pending, Resolved, "CLR-4-002 is pending: it cannot become resolved (from pending it may become answered, stale, escalated, abandoned)"},
	}
	for _, tt := range tests {
		err := (&TransitionError{ID: "CLR-4-002", From: tt.from, To: tt.to}).Error()
		assert.Equal(t, tt.want, err)
	}
}

func TestIDs(t *testing.T) {
	tests := []struct {
		id          string
		issue, seq  int
		wantErr     bool
		description string
	}{
		{"CLR-42-001", 42, 1, false, "plain"},
		{"CLR-0-010", 0, 10, false, "issue 0"},
		{"CLR-77-1000", 77, 1000, false, "past 999"},
		{"CLR-42-01", 0, 0, true, "seq too short"},
		{"CLR--1-001", 0, 0, true, "negative"},
		{"CLR-42-001/../../x", 0, 0, true, "path"},
		{"clr-42-001", 0, 0, true, "lowercase"},
		{"", 0, 0, true, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.description, func(t *testing.T) {
			issue, seq, err := ParseID(tt.id)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.issue, issue)
			assert.Equal(t, tt.seq, seq)
		})
	}
	l := &Ledger{IssueNumber: 42}
	assert.Equal(t, "CLR-42-001", l.NextID())
	l.Clarifications = []*Clarification{{ID: "CLR-42-001"}, {ID: "CLR-42-005"}}
	assert.Equal(t, "CLR-42-006", l.NextID(), "max+1: a gap is never refilled")
	l.Clarifications = append(l.Clarifications, &Clarification{ID: "CLR-42-999"})
	assert.Equal(t, "CLR-42-1000", l.NextID())
}

func TestValidateInput(t *testing.T) {
	tests := []struct {
		name string
		err  error
		ok   bool
	}{
		{"agent ok", ValidateAgent("from", "product-manager"), true},
		{"agent digits", ValidateAgent("from", "agent2"), true},
		{"agent upper", ValidateAgent("from", "Engineer"), false},
		{"agent dash first", ValidateAgent("from", "-x"), false},
		{"agent slash", ValidateAgent("from", "../etc"), false},
		{"agent empty", ValidateAgent("from", ""), false},
		{"agent long", ValidateAgent("from", strings.Repeat("a", MaxAgentLen+1)), false},
		{"topic ok", ValidateText("topic", "Database", MaxTopicLen), true},
		{"topic blank", ValidateText("topic", "  \n", MaxTopicLen), false},
		{"topic long", ValidateText("topic", strings.Repeat("x", MaxTopicLen+1), MaxTopicLen), false},
		{"body bad utf8", ValidateText("body", "\xff\xfe", MaxBodyLen), false},
		{"issue ok", ValidateIssue(0), true},
		{"issue negative", ValidateIssue(-1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.ok {
				assert.NoError(t, tt.err)
			} else {
				var ie *InputError
				assert.True(t, errors.As(tt.err, &ie), "want *InputError, got %v", tt.err)
			}
		})
	}
	for _, s := range []string{"42", "#42", "0"} {
		_, err := ParseIssue(s)
		assert.NoError(t, err, s)
	}
	for _, s := range []string{"-1", "+3", "4x", "", "../1", "1e3"} {
		_, err := ParseIssue(s)
		assert.Error(t, err, s)
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)
	for _, s := range []string{
		"2026-02-26T10:00:00Z",
		"2026-02-26T10:00:00.000Z",
		"2026-02-26T11:00:00+01:00",
		"2026-02-26T10:00:00.0000000Z",
		"2026-02-26T10:00:00",
		"2026-02-26 10:00:00Z",
		"/Date(1772100000000)/",
		"/Date(1772100000000+0100)/",
	} {
		got, err := ParseTime(s)
		require.NoError(t, err, s)
		assert.True(t, want.Equal(got), "%s parsed as %s", s, got)
	}
	_, err := ParseTime("yesterday")
	assert.ErrorContains(t, err, "not RFC 3339")
	assert.Equal(t, "2026-02-26T10:00:00.120Z", T(want.Add(120*time.Millisecond)).String())
}

// TestInteropFixturesRoundTrip reads every AgentX writer variant, writes it
// back, reads it again, and gets the same data.
func TestInteropFixturesRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../testdata/interop/*.json")
	require.NoError(t, err)
	var n int
	for _, f := range files {
		if strings.HasSuffix(f, ".schema.json") {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			l, err := Decode(f, data)
			require.NoError(t, err)
			require.NoError(t, l.Validate(), "every AgentX variant passes validation")
			require.NotEmpty(t, l.Clarifications)
			out, err := Encode(l)
			require.NoError(t, err)
			l2, err := Decode(f, out)
			require.NoError(t, err)
			require.Len(t, l2.Clarifications, len(l.Clarifications))
			for i, c := range l.Clarifications {
				assert.Equal(t, c.ID, l2.Clarifications[i].ID)
				assert.Len(t, l2.Clarifications[i].Thread, len(c.Thread))
				assert.Equal(t, c.Created.Truncate(time.Millisecond), l2.Clarifications[i].Created.Time, "timestamps survive to the millisecond")
			}
			out2, err := Encode(l2)
			require.NoError(t, err)
			assert.Equal(t, string(out), string(out2), "encoding is stable")
			assert.NotContains(t, string(out), "/Date(", "timestamps are written as RFC 3339")
		})
	}
	assert.GreaterOrEqual(t, n, 7)
}

func TestFixtureDetails(t *testing.T) {
	read := func(name string) *Ledger {
		data, err := os.ReadFile("../testdata/interop/" + name)
		require.NoError(t, err)
		l, err := Decode(name, data)
		require.NoError(t, err)
		return l
	}
	ps := read("powershell-dates.json").Clarifications[0]
	assert.Equal(t, "2026-02-22T23:00:00.000Z", ps.StaleAfter.String())
	assert.Equal(t, "cli", ps.Current(Escalation).From)
	assert.Equal(t, RecordBrainstorm, read("brainstorm.json").Clarifications[0].RecordType)
	rz := read("round-zero.json").Clarifications[0]
	assert.Equal(t, 0, rz.Round)
	assert.Empty(t, rz.Thread)
	big := read("seq-over-999.json")
	assert.Equal(t, "CLR-77-1002", big.NextID())
	assert.Equal(t, Human, read("issue-0.json").Clarifications[0].Current(Answer).From)
}

// TestParseIDMatchesItsGrammar: the hand-written ParseID accepts exactly
// CLR-<1-9 digits>-<3-9 digits>, the grammar as a regular expression.
func TestParseIDMatchesItsGrammar(t *testing.T) {
	grammar := regexp.MustCompile(`^CLR-([0-9]{1,9})-([0-9]{3,9})$`)
	for _, id := range []string{
		"CLR-42-001", "CLR-0-000", "CLR-999999999-999999999", "CLR-42-1000", "CLR-42-01", "CLR-42-0000000001",
		"CLR-1234567890-001", "CLR--001", "CLR-42-", "CLR-42", "clr-42-001", "CLR-42-001\n", " CLR-42-001",
		"CLR-4a-001", "CLR-42-0x1", "CLR-٤٢-001", "CLR-42-001-1", "CLR-+4-001", "",
	} {
		issue, seq, err := ParseID(id)
		m := grammar.FindStringSubmatch(id)
		if (err == nil) != (m != nil) {
			t.Errorf("ParseID(%q) err = %v; the grammar says match = %v", id, err, m != nil)
			continue
		}
		if m != nil && (issue != atoi(m[1]) || seq != atoi(m[2])) {
			t.Errorf("ParseID(%q) = %d, %d; want %s, %s", id, issue, seq, m[1], m[2])
		}
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// TestStatusPredicates: Valid, Final and Open (written as switches, for
// the write path's loops over every record) say what the transition table
// says.
func TestStatusPredicates(t *testing.T) {
	for _, s := range append(append([]Status{}, Statuses...), "", "PENDING", "resolved ", "unknown") {
		moves, known := transitions(s), slices.Contains(Statuses, s)
		assert.Equal(t, known, s.Valid(), "%q", s)
		assert.Equal(t, known && len(moves) == 0, s.Final(), "%q", s)
		assert.Equal(t, known && len(moves) > 0, s.Open(), "%q", s)
		for _, to := range moves {
			assert.True(t, to.Valid(), "%s may move to an unknown status %q", s, to)
		}
	}
}

func TestDecision(t *testing.T) {
	long := strings.Repeat("word ", 200)
	tests := []struct {
		name    string
		summary string
		thread  []ThreadEntry
		want    string
	}{
		{"a summary given", "Dual adapter behind a repository interface.", []ThreadEntry{{Type: Answer, Body: "Yes. Long reasons."}}, "Dual adapter behind a repository interface."},
		{"the resolution's first sentence", "", []ThreadEntry{{Type: Answer, Body: "Maybe."}, {Type: Resolution, Body: "Going with dual. Details follow\nhere."}}, "Going with dual."},
		{"the answer's first line", "", []ThreadEntry{{Type: Question, Body: "q?"}, {Type: Answer, Body: "Use SQLite in dev\nand Postgres in prod"}}, "Use SQLite in dev"},
		{"a line ending in a colon goes on", "", []ThreadEntry{{Type: Resolution, Body: "Decision: accept architect's proposal:\nShared schema, tenant column. Details."}}, "Decision: accept architect's proposal: Shared schema, tenant column."},
		{"a version number is no sentence end", "", []ThreadEntry{{Type: Answer, Body: "Pin 1.2.3 for now. Then upgrade."}}, "Pin 1.2.3 for now."},
		{"bounded, cut at a word", "", []ThreadEntry{{Type: Answer, Body: long}}, strings.Repeat("word ", (MaxSummary-len("…"))/5-1) + "word…"},
		{"nothing decided", "", []ThreadEntry{{Type: Question, Body: "q?"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Clarification{Thread: tt.thread}
			if tt.summary != "" {
				c.Ext().Summary = tt.summary
			}
			got := c.Decision()
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, len(got), MaxSummary)
		})
	}
}
