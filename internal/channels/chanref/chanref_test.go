package chanref

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// TestWrittenAsBefore: the channels' data written through this package is
// the bytes the ledger had when it held the channels' types itself: each
// record's refs and thread, read, dropped and set again, give back the
// ledger GitHub mode and Slack mode wrote (ledger/testdata/channels).
func TestWrittenAsBefore(t *testing.T) {
	for _, name := range []string{"issue-42.json", "compact.json"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("..", "..", "..", "ledger", "testdata", "channels", name))
			require.NoError(t, err)
			l, err := ledger.Decode(name, want)
			require.NoError(t, err)
			found := 0
			for _, c := range l.Clarifications {
				refs, err := GitHubRefs(c)
				require.NoError(t, err)
				th, err := SlackThreadOf(c)
				require.NoError(t, err)
				if refs != nil || th != nil {
					found++
					c.X.GitHub, c.X.Slack = nil, nil
				}
				require.NoError(t, SetGitHubRefs(c, refs))
				require.NoError(t, SetSlackThread(c, th))
			}
			require.NotZero(t, found, "the golden ledger holds channel data")
			out, err := ledger.Encode(l)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(out))
		})
	}
}

func TestSetAndRemove(t *testing.T) {
	c := &ledger.Clarification{ID: "CLR-1-001"}
	require.NoError(t, SetGitHubRefs(c, nil))
	require.NoError(t, SetSlackThread(c, nil))
	assert.Nil(t, c.X, "nothing to record: no additions made")

	refs := []GitHubRef{{Entry: 0, Comment: 7, Sum: "ab"}, {Entry: 1, Comment: 9, Inbound: true}}
	th := &SlackThread{Channel: "C1", TS: "1.5", Posts: []SlackPost{{Entry: 0, TS: "1.5"}, {Entry: 1, TS: "1.6", Inbound: true}}, Assumed: 1}
	require.NoError(t, SetGitHubRefs(c, refs))
	require.NoError(t, SetSlackThread(c, th))
	assert.JSONEq(t, `[{"entry":0,"comment":7,"sum":"ab"},{"entry":1,"comment":9,"inbound":true}]`, string(c.X.GitHub))
	gotRefs, err := GitHubRefs(c)
	require.NoError(t, err)
	assert.Equal(t, refs, gotRefs)
	gotTh, err := SlackThreadOf(c)
	require.NoError(t, err)
	assert.Equal(t, th, gotTh)
	assert.Equal(t, &th.Posts[1], gotTh.Post(1), "entry 1's message")
	assert.Nil(t, gotTh.Post(2))

	require.NoError(t, SetGitHubRefs(c, []GitHubRef{}))
	require.NoError(t, SetSlackThread(c, nil))
	assert.Nil(t, c.X.GitHub)
	assert.Nil(t, c.X.Slack)
}

// TestUnreadable: data the channel cannot read is an error naming the
// record and the member, not an empty record (which would post again).
func TestUnreadable(t *testing.T) {
	c := &ledger.Clarification{ID: "CLR-1-001", X: &ledger.Extra{GitHub: []byte(`{"entry":0}`), Slack: []byte(`[1]`)}}
	_, err := GitHubRefs(c)
	assert.ErrorContains(t, err, "CLR-1-001: agentx.github: ")
	_, err = SlackThreadOf(c)
	assert.ErrorContains(t, err, "CLR-1-001: agentx.slack: ")
}
