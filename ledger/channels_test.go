package ledger

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// channelGoldens are ledgers holding the channels' data (agentx.github,
// agentx.slack) and the file agentx writes from each. issue-42.json is
// the file GitHub mode and Slack mode left on an issue (comments and
// messages posted, replies taken from both, an assumption told, a record
// resolved, one escalated), written back unchanged. compact.in.json,
// formatted by hand, has a newer agentx's member after the channels',
// empty channel values and a member of another tool; compact.json is how
// agentx writes it. Each print file is the records as encoding/json
// prints them (the --json output). All of them were made by the version
// whose ledger model had the channels' types in it.
var channelGoldens = []struct{ in, out, print string }{
	{"issue-42.json", "issue-42.json", "issue-42.print.json"},
	{"compact.in.json", "compact.json", "compact.in.print.json"},
	{"compact.json", "compact.json", "compact.print.json"},
}

func golden(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "channels", name))
	require.NoError(t, err)
	return data
}

// TestChannelDataRoundTrips: the channels' data in a ledger is written
// back byte for byte as agentx wrote it, whether the ledger is decoded
// whole, read sealed, or rewritten by an update that opens every record;
// and records print with it as they did.
func TestChannelDataRoundTrips(t *testing.T) {
	for _, g := range channelGoldens {
		t.Run(g.in, func(t *testing.T) {
			in, want := golden(t, g.in), golden(t, g.out)

			l, err := Decode(g.in, in)
			require.NoError(t, err)
			out, err := Encode(l)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(out), "decoded whole and encoded")

			view, err := stdjson.MarshalIndent(l.Clarifications, "", "  ")
			require.NoError(t, err)
			assert.Equal(t, string(golden(t, g.print)), string(append(view, '\n')), "printed with encoding/json")

			if g.in == g.out { // a write keeps a final record as it was read
				sl, err := decode(g.in, in, true)
				require.NoError(t, err)
				out, err = Encode(sl)
				require.NoError(t, err)
				assert.Equal(t, string(want), string(out), "read sealed and encoded")
			}

			s := newTestStore(t)
			require.NoError(t, os.MkdirAll(filepath.Dir(s.Path(l.IssueNumber)), 0o755))
			require.NoError(t, os.WriteFile(s.Path(l.IssueNumber), in, 0o644))
			_, err = s.Update(context.Background(), l.IssueNumber, func(l *Ledger) error {
				for _, c := range l.Whole() {
					c.Topic += "" // opened, so encoded anew
				}
				return nil
			})
			require.NoError(t, err)
			out, err = os.ReadFile(s.Path(l.IssueNumber))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, out), "rewritten by Store.Update:\n%s", out)
		})
	}
}

// TestCarried: the channels' data is kept compact, as read, and an empty
// value is none.
func TestCarried(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "",
		"null":                         "",
		`""`:                           "",
		"[ ]":                          "",
		"{\n}":                         "",
		`[ {"entry": 0, "x": 1.50} ]`:  `[{"entry":0,"x":1.50}]`,
		`{"ts": "\u00e9", "a": [1,2]}`: `{"ts":"\u00e9","a":[1,2]}`,
		"5":                            "5",
	} {
		got := Carried([]byte(in))
		assert.Equal(t, want, string(got), "Carried(%q)", in)
		if want == "" {
			assert.Nil(t, got, "Carried(%q)", in)
		}
	}
}

// TestChannelDataNotRead: the ledger does not read what it carries for a
// channel: a value no channel would write is kept as read, and it is the
// channel that refuses it (internal/channels/chanref).
func TestChannelDataNotRead(t *testing.T) {
	in := []byte(`{"issueNumber":1,"clarifications":[{"id":"CLR-1-001","from":"a","to":"b","topic":"t","blocking":false,"status":"pending","round":1,"maxRounds":3,"created":"2026-02-26T10:00:00Z","staleAfter":"2026-02-26T11:00:00Z","resolvedAt":null,"thread":[],` +
		`"agentx":{"github":5,"slack":{"ts":"\u00e9","newer":[1.50]}}}]}`)
	l, err := Decode("issue-1.json", in)
	require.NoError(t, err)
	x := l.Clarifications[0].X
	assert.Equal(t, "5", string(x.GitHub))
	assert.Equal(t, `{"ts":"\u00e9","newer":[1.50]}`, string(x.Slack))
	out, err := Encode(l)
	require.NoError(t, err)
	assert.Contains(t, string(out), "\"github\": 5,\n        \"slack\": {\n          \"ts\": \"\\u00e9\",\n          \"newer\": [\n            1.50\n          ]\n        }")

	_, err = Decode("issue-1.json", bytes.Replace(in, []byte(`"github":5`), []byte(`"github":[{"entry":0,"entry":1}]`), 1))
	var ce *CorruptError
	assert.ErrorAs(t, err, &ce, "a key twice is corrupt, inside the channels' data too")
}
