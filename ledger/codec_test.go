package ledger

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// foreignLedger is issue 9's ledger as a newer AgentX tool wrote it: members
// agentx does not know on the ledger, on an open and on a resolved record,
// on thread entries and inside agentx's own key, with numbers, escapes and
// nesting another encoder could rewrite; the resolved record is formatted
// the PowerShell way (four spaces, its own key order).
const foreignLedger = `{
  "issueNumber": 9,
  "x-schemaVersion": 3,
  "clarifications": [
    {
        "thread": [
            {"round": 1, "from": "engineer", "type": "question", "body": "Old?", "timestamp": "2026-02-26T09:00:00Z", "x-tokens": 1.50},
            {"round": 1, "from": "architect", "type": "resolution", "body": "Done.", "timestamp": "2026-02-26T09:05:00Z"}
        ],
        "id": "CLR-9-001",
        "from": "engineer",
        "to": "architect",
        "topic": "Old question",
        "blocking": true,
        "status": "resolved",
        "round": 1,
        "maxRounds": 3,
        "created": "2026-02-26T09:00:00Z",
        "staleAfter": "2026-02-26T09:30:00Z",
        "resolvedAt": "2026-02-26T09:05:00Z",
        "x-cost": {"usd": 0.0120, "note": "caf\u00e9 \"quoted\""}
    },
    {
      "id": "CLR-9-002",
      "from": "engineer",
      "to": "architect",
      "topic": "Open question",
      "blocking": true,
      "status": "pending",
      "round": 1,
      "maxRounds": 3,
      "created": "2026-02-26T10:00:00Z",
      "staleAfter": "2026-02-26T10:30:00Z",
      "resolvedAt": null,
      "x-priority": [1, true, null, "p\u00e9"],
      "thread": [
        {"round": 1, "from": "engineer", "type": "question", "body": "New?", "timestamp": "2026-02-26T10:00:00Z", "x-model": {"name": "m", "t": 0.70}}
      ],
      "agentx": {"workflow": "feature", "x-newer": {"since": "v9"}}
    }
  ],
  "x-trailer": "end"
}
`

// foreignMembers are the members above that agentx does not know, as
// they must be found in the file after agentx rewrote it (compact form).
var foreignMembers = []string{
	`"x-schemaVersion":3`,
	`"x-tokens":1.50`,
	`"x-cost":{"usd":0.0120,"note":"caf\u00e9 \"quoted\""}`,
	`"x-priority":[1,true,null,"p\u00e9"]`,
	`"x-model":{"name":"m","t":0.70}`,
	`"x-newer":{"since":"v9"}`,
	`"x-trailer":"end"`,
}

// TestUnknownMembersKept: a write by agentx keeps every member it does not
// know, byte for byte (numbers and escapes as written), on the records it
// changed and on those it did not.
func TestUnknownMembersKept(t *testing.T) {
	s := newTestStore(t)
	require.NoError(t, os.MkdirAll(filepath.Dir(s.Path(9)), 0o755))
	require.NoError(t, os.WriteFile(s.Path(9), []byte(foreignLedger), 0o644))

	// answer the open question and add a new one: both changed records and
	// the untouched resolved one are rewritten
	_, err := s.Update(context.Background(), 9, func(l *Ledger) error {
		c := l.Find("CLR-9-002")
		c.Thread = append(c.Thread, ThreadEntry{Round: 1, From: "architect", Type: Answer, Body: "Yes.", Timestamp: T(s.Now())})
		if err := c.Move(Answered); err != nil {
			return err
		}
		return ask(s, "engineer", "architect", "Another?")(l)
	})
	require.NoError(t, err)

	data, err := os.ReadFile(s.Path(9))
	require.NoError(t, err)
	flat := squeeze(data)
	for _, m := range foreignMembers {
		assert.Contains(t, string(flat), m, "a member agentx does not know is kept as written")
	}
	assert.Contains(t, string(data), `"body": "Yes."`, "the change is written")
	l, err := s.Read(9)
	require.NoError(t, err)
	require.Len(t, l.Clarifications, 3)
	assert.Equal(t, Answered, l.Clarifications[1].Status)

	// and a second rewrite, with everything decoded whole, keeps them too
	_, err = s.Update(context.Background(), 9, func(l *Ledger) error {
		l.Find("CLR-9-001").Ext().Workflow = "feature"
		return nil
	})
	require.NoError(t, err)
	data, err = os.ReadFile(s.Path(9))
	require.NoError(t, err)
	flat = squeeze(data)
	for _, m := range foreignMembers {
		assert.Contains(t, string(flat), m)
	}
	assert.Contains(t, string(flat), `"agentx":{"workflow":"feature"}`, "a sealed record opened with Find is written with its change")
}

// squeeze removes the whitespace between JSON tokens, leaving every token's
// bytes as they are (jsontext's Compact would also rewrite escapes).
func squeeze(data []byte) string {
	var out bytes.Buffer
	in, esc := false, false
	for _, b := range data {
		switch {
		case in && esc:
			esc = false
		case in && b == '\\':
			esc = true
		case b == '"':
			in = !in
		case !in && (b == ' ' || b == '\n' || b == '\t' || b == '\r'):
			continue
		}
		out.WriteByte(b)
	}
	return out.String()
}

// TestSealedRecords: Update reads final records sealed: they are written
// back as read, a change to one made without Find is refused (it would be
// lost), and one that does not decode is passed through untouched unless
// Find opens it.
func TestSealedRecords(t *testing.T) {
	s := newTestStore(t)
	require.NoError(t, os.MkdirAll(filepath.Dir(s.Path(9)), 0o755))
	require.NoError(t, os.WriteFile(s.Path(9), []byte(foreignLedger), 0o644))
	ctx := context.Background()

	_, err := s.Update(ctx, 9, func(l *Ledger) error {
		c := l.Clarifications[0]
		assert.True(t, c.Sealed())
		assert.Equal(t, "CLR-9-001", c.ID)
		assert.Equal(t, "engineer", c.From)
		assert.Equal(t, Resolved, c.Status)
		assert.False(t, l.Clarifications[1].Sealed(), "an open record is read whole")
		c.Topic = "changed behind Find's back"
		return nil
	})
	require.ErrorContains(t, err, "CLR-9-001: a sealed record was changed without Ledger.Find")
	data, err := os.ReadFile(s.Path(9))
	require.NoError(t, err)
	assert.Equal(t, foreignLedger, string(data), "nothing written")

	// a resolved record whose round is not a number
	bad := strings.Replace(foreignLedger, `"round": 1,
        "maxRounds": 3,`, `"round": "one",
        "maxRounds": 3,`, 1)
	require.NotEqual(t, bad, foreignLedger)
	require.NoError(t, os.WriteFile(s.Path(9), []byte(bad), 0o644))
	_, err = s.Read(9)
	var ce *CorruptError
	require.ErrorAs(t, err, &ce, "a whole read reports it")
	assert.Contains(t, ce.Error(), "(at /clarifications/0/round)")
	_, err = s.Update(ctx, 9, ask(s, "engineer", "architect", "Next?"))
	require.NoError(t, err, "a write that does not open it passes it through")
	data, err = os.ReadFile(s.Path(9))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"round": "one"`)
	_, err = s.Update(ctx, 9, func(l *Ledger) error {
		assert.Nil(t, l.Find("CLR-9-001"))
		return nil
	})
	require.ErrorAs(t, err, &ce, "a write that opens it fails")
	assert.Contains(t, ce.Error(), "CLR-9-001")
}

// TestSplicedEncoding: the ledger encoding that splices records into the
// ledger object writes what encoding the whole ledger at once would.
func TestSplicedEncoding(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "interop", "*.json"))
	require.NoError(t, err)
	inputs := map[string][]byte{"foreign": []byte(foreignLedger), "empty": []byte(`{"issueNumber": 3, "clarifications": [], "x": {"y": []}}`)}
	for _, f := range files {
		if !strings.HasSuffix(f, ".schema.json") {
			inputs[filepath.Base(f)], err = os.ReadFile(f)
			require.NoError(t, err)
		}
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			l, err := Decode(name, data)
			require.NoError(t, err)
			got, err := Encode(l)
			require.NoError(t, err)
			want, err := json.Marshal(l, encodeOpts())
			require.NoError(t, err)
			assert.Equal(t, string(want)+"\n", string(got))
		})
	}
}

// TestCorruptPositions: a file that does not parse is reported with its
// line and column, whichever JSON package read it (ledgers the v2 codec,
// other state files encoding/json).
func TestCorruptPositions(t *testing.T) {
	s := newTestStore(t)
	require.NoError(t, os.MkdirAll(filepath.Dir(s.Path(9)), 0o755))
	require.NoError(t, os.WriteFile(s.Path(9), []byte("{\n  \"issueNumber\": 9,\n  \"clarifications\": [,]\n}\n"), 0o644))
	require.NoError(t, os.WriteFile(s.AgentStatusPath(), []byte("{\n  \"engineer\": {\"status\": 7}\n}\n"), 0o644))
	for line, read := range map[int]func() error{
		3: func() error { _, err := s.Read(9); return err },
		2: func() error { _, err := s.ReadAgents(); return err },
	} {
		var ce *CorruptError
		require.ErrorAs(t, read(), &ce)
		assert.Equal(t, line, ce.Line, ce.Error())
		assert.Positive(t, ce.Col, ce.Error())
	}
}

// TestWhole: inside Update, Whole decodes the sealed records, so a function
// that reads more than id, from and status of every record sees them all.
func TestWhole(t *testing.T) {
	s := newTestStore(t)
	require.NoError(t, os.MkdirAll(filepath.Dir(s.Path(9)), 0o755))
	require.NoError(t, os.WriteFile(s.Path(9), []byte(foreignLedger), 0o644))
	_, err := s.Update(context.Background(), 9, func(l *Ledger) error {
		require.True(t, l.Clarifications[0].Sealed())
		assert.Empty(t, l.Clarifications[0].Topic)
		all := l.Whole()
		require.Len(t, all, 2)
		assert.False(t, all[0].Sealed())
		assert.Equal(t, "Old question", all[0].Topic)
		return nil
	})
	require.NoError(t, err)
}
