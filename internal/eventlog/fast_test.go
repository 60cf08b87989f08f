package eventlog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// fastEvents are events of every shape agentx appends.
func fastEvents() []Event {
	at := ledger.T(time.Date(2026, 11, 23, 10, 0, 0, 123e6, time.UTC))
	return []Event{
		{Type: EventRequested, ClarificationID: "CLR-42-001", IssueNumber: 42, FromAgent: "engineer", ToAgent: "architect", Topic: "Retry budget", Blocking: true, Round: 1, Timestamp: at, By: "engineer"},
		{Type: EventEscalated, ClarificationID: "CLR-42-001", IssueNumber: 42, FromAgent: "engineer", ToAgent: "human", Topic: "t", Round: 3, Timestamp: at, Reason: "no answer after 3 rounds"},
		{Type: "proposal-created", ProposalID: "PROP-001", Issues: []int{4, 5, 600}, Topic: "Faster writes", Timestamp: at, By: "architect"},
		{Type: EventAnswered, ClarificationID: "CLR-7-010", IssueNumber: 7, Topic: "", Timestamp: at, Via: ViaRemote, Host: "ci-runner-3"},
		{Type: "x"},
	}
}

// genericIndent is what MarshalIndent wrote before the hand-written path.
func genericIndent(t testing.TB, e Event, prefix string) []byte {
	b, err := jsonv2.Marshal(e, eventIndent(), jsontext.WithIndentPrefix(prefix))
	require.NoError(t, err)
	return b
}

// TestFastEvent: a line as Append writes it is read in one pass, to the
// event the generic decoder reads; a line in any other form is left to the
// generic decoder, which still reads it; the hand-written indented form is
// byte for byte the generic one, and events with strings that need
// escaping take the generic path.
func TestFastEvent(t *testing.T) {
	for _, e := range fastEvents() {
		line, err := json.Marshal(e) // as Append writes it
		require.NoError(t, err)
		got, ok := fastEvent(line)
		require.True(t, ok, "%s", line)
		var want Event
		require.True(t, decodeEvent(line, &want))
		assert.Equal(t, want, got, "%s", line)

		for _, prefix := range []string{"", "    "} {
			b, ok := e.appendIndent(nil, prefix)
			require.True(t, ok)
			assert.Equal(t, string(genericIndent(t, e, prefix)), string(b))
		}
	}
	line, err := json.Marshal(fastEvents()[0])
	require.NoError(t, err)
	for _, tt := range []struct{ name, old, new string }{
		{"spaces", `"issueNumber":42`, `"issueNumber": 42`},
		{"names in another case", `"fromAgent"`, `"FromAgent"`},
		{"members in another order", `"type":"clarification-requested","clarificationId":"CLR-42-001"`, `"clarificationId":"CLR-42-001","type":"clarification-requested"`},
		{"an escape", `Retry budget`, `Retry\u0020budget`},
		{"non-ASCII", `Retry budget`, `Retry büdget`},
		{"an unknown member", `"round":1,`, `"round":1,"color":"red",`},
		{"another time form", `2026-11-23T10:00:00.123Z`, `2026-11-23T10:00:00Z`},
		{"a negative round", `"round":1,`, `"round":-1,`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			changed := []byte(strings.Replace(string(line), tt.old, tt.new, 1))
			_, ok := fastEvent(changed)
			assert.False(t, ok, "%s", changed)
			e, ok, skipped := parseEventLine(changed)
			require.True(t, ok, "the generic decoder reads %s", changed)
			assert.Zero(t, skipped)
			assert.Equal(t, EventRequested, e.Type)
		})
	}
	for _, s := range []string{"<script>", "a & b", "\x1b[2J", "é", `"quoted"`, "\u2028"} {
		e := fastEvents()[0]
		e.Topic = s
		_, ok := e.appendIndent(nil, "")
		assert.False(t, ok, "%q", s)
		b, err := e.MarshalIndent("  ")
		require.NoError(t, err)
		assert.Equal(t, string(genericIndent(t, e, "  ")), string(b))
	}
}

// FuzzFastEvent: whatever the line, the one-pass reader reads nothing, or
// exactly what the generic decoder reads.
func FuzzFastEvent(f *testing.F) {
	for _, e := range fastEvents() {
		line, _ := json.Marshal(e)
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := fastEvent(line)
		if !ok {
			return
		}
		var want Event
		require.True(t, decodeEvent(line, &want), "the fast path read what the generic decoder refuses: %q", line)
		require.Equal(t, want, got, "%q", line)
	})
}

// FuzzEventIndent: an event written by hand is byte for byte what the
// generic engine writes.
func FuzzEventIndent(f *testing.F) {
	f.Add("clarification-requested", "CLR-1-001", 1, "engineer", "Retry budget", true, 2, int64(1795453644561), "", "", 3)
	f.Add("proposal-created", "", 0, "architect", "a <b> & c", false, 0, int64(0), "PROP-002", "remote", 0)
	f.Fuzz(func(t *testing.T, typ, id string, issue int, from, topic string, blocking bool, round int, ms int64, prop, via string, nIssues int) {
		e := Event{Type: EventType(typ), ClarificationID: id, IssueNumber: issue, FromAgent: from, ToAgent: topic, Topic: topic,
			Blocking: blocking, Round: round, Timestamp: ledger.T(time.UnixMilli(ms)), By: from, Reason: topic, ProposalID: prop, Via: via, Host: id}
		for i := range nIssues % 8 {
			e.Issues = append(e.Issues, issue+i)
		}
		got, err := e.MarshalIndent("    ")
		require.NoError(t, err)
		require.Equal(t, string(genericIndent(t, e, "    ")), string(got))
	})
}

// BenchmarkEventsJSON is what `agentx events --json` does per line: read
// it, write it indented.
func BenchmarkEventsJSON(b *testing.B) {
	line, err := json.Marshal(fastEvents()[0])
	require.NoError(b, err)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e, ok, _ := parseEventLine(line)
			if !ok {
				b.Fatal("unread")
			}
			if _, err := e.MarshalIndent("    "); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var e Event
			if !decodeEvent(line, &e) {
				b.Fatal("unread")
			}
			genericIndent(b, e, "    ")
		}
	})
}
