package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// TestEventsStreamAsOneEnvelope: `events --json` writes its envelope an
// event at a time (constant memory on any log), and the bytes are exactly
// those of the envelope every other command prints, for an empty log, one
// event and several.
func TestEventsStreamAsOneEnvelope(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		log := router.EventLog{Path: filepath.Join(t.TempDir(), "events.jsonl")}
		want := []router.Event{}
		for i := range n {
			e := router.Event{Type: router.EventRequested, ClarificationID: ledger.FormatID(7, i+1), IssueNumber: 7,
				FromAgent: "engineer", ToAgent: "architect", Topic: "t", Round: 1, Timestamp: ledger.T(time.Unix(int64(i), 0))}
			require.NoError(t, log.Append(e))
			want = append(want, e)
		}
		var out bytes.Buffer
		a := &App{stdout: &out, globalFlags: globalFlags{json: true}}
		skipped, err := streamEvents(a, log, router.EventFilter{})
		require.NoError(t, err)
		assert.Zero(t, skipped)
		b, err := json.MarshalIndent(envelope{SchemaVersion: schemaVersion, Data: want}, "", "  ")
		require.NoError(t, err)
		assert.Equal(t, string(b)+"\n", out.String(), "%d events", n)
	}
}
