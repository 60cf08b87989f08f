package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// agentxLedger is a ledger as agentx writes it: every status, a record
// with agentx's own key, timestamps with and without milliseconds.
func agentxLedger(t testing.TB) []byte {
	t.Helper()
	s := ledger.NewStore(t.TempDir(), lock.Options{}, func() time.Time { return t0 })
	_, err := s.Update(context.Background(), 12, func(l *ledger.Ledger) error {
		for i, st := range ledger.Statuses {
			now := ledger.T(t0.Add(time.Duration(i) * 1500 * time.Millisecond))
			c := &ledger.Clarification{
				ID: l.NextID(), From: "engineer", To: "product-manager", Topic: "Export \"format\" é", Blocking: i%2 == 0,
				Status: st, Round: 1, MaxRounds: 3, Created: now, StaleAfter: now,
				Thread: []ledger.ThreadEntry{{Round: 1, From: "engineer", Type: ledger.Question, Body: "CSV or JSON?\nBoth?", Timestamp: now}},
				X:      &ledger.Extra{Workflow: "feature", Step: "implement"},
			}
			if st.Final() || st == ledger.Escalated {
				c.ResolvedAt = &now
			}
			l.Clarifications = append(l.Clarifications, c)
		}
		return nil
	})
	require.NoError(t, err)
	data, err := os.ReadFile(s.Path(12))
	require.NoError(t, err)
	return data
}

// TestConforms: the fast path accepts what agentx and the AgentX tools
// write (or it would save nothing), and leaves to the validator what the
// schema rejects.
func TestConforms(t *testing.T) {
	assert.True(t, conforms(agentxLedger(t)), "a ledger agentx wrote")
	for _, name := range []string{"issue-0.json", "seq-over-999.json"} {
		data, err := os.ReadFile(filepath.Join("../../testdata/interop", name))
		require.NoError(t, err)
		assert.True(t, conforms(data), name)
		assert.NoError(t, validateWithSchema(data), name)
	}
	good := string(agentxLedger(t))
	for _, tc := range []struct {
		name, from, to string
		schemaOK       bool // the validator accepts it all the same
	}{
		{"bad status", `"status": "pending"`, `"status": "bogus"`, false},
		{"short id", `"CLR-12-001"`, `"CLR-12-01"`, false},
		{"round 0", `"round": 1,`, `"round": 0,`, false},
		{"fractional round", `"maxRounds": 3`, `"maxRounds": 3.5`, false},
		{"agent name", `"to": "product-manager"`, `"to": "Product"`, false},
		{"empty topic", `"topic": "Export \"format\" é"`, `"topic": ""`, false},
		// the validator takes "format" as a note, not a rule
		{"timestamp", `"created": "2026-02-26T10:00:00.000Z"`, `"created": "yesterday"`, true},
		{"unknown member", `"blocking": true,`, `"blocking": true, "priority": 1,`, false},
		{"missing member", `"blocking": true,`, ``, false},
		{"key twice", `"blocking": true,`, `"blocking": true, "blocking": false,`, false},
		{"trailing data", "}\n", "} {}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(good, tc.from, tc.to, 1)
			require.NotEqual(t, good, bad)
			assert.False(t, conforms([]byte(bad)), "left to the validator")
			if tc.schemaOK {
				assert.NoError(t, ValidateSchema([]byte(bad)))
			} else {
				assert.Error(t, ValidateSchema([]byte(bad)), "the validator rejects it")
			}
		})
	}
}

// FuzzConformsImpliesValid: whatever the bytes, what the fast path accepts
// the schema validator accepts.
func FuzzConformsImpliesValid(f *testing.F) {
	f.Add(agentxLedger(f))
	for _, name := range []string{"issue-0.json", "seq-over-999.json", "round-zero.json"} {
		data, err := os.ReadFile(filepath.Join("../../testdata/interop", name))
		require.NoError(f, err)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if conforms(data) {
			if err := validateWithSchema(data); err != nil {
				t.Fatalf("the fast path accepted what the schema rejects: %v\n%s", err, data)
			}
		}
	})
}
