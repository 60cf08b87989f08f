package router

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

// TestResponderOutputIsAnAnswer: whatever a responder prints, what the
// runner returns is an answer the hub takes: within one message's limit
// (ledger.MaxMessageLen), cut there with a note. Output over the ledger's
// body limit used to come back whole (up to 1 MiB) and invalid UTF-8 as
// is: Answer refused both, so ask failed with the question recorded and
// left pending.
func TestResponderOutputIsAnAnswer(t *testing.T) {
	tests := []struct {
		name, sh string
		check    func(t *testing.T, got string)
	}{
		{"plain", `printf '  Per key.\n\n'`, func(t *testing.T, got string) { assert.Equal(t, "Per key.", got) }},
		{"over the body limit", `head -c 100000 /dev/zero | tr '\0' a`, func(t *testing.T, got string) {
			assert.True(t, strings.HasPrefix(got, strings.Repeat("a", ledger.MaxMessageLen-200)), "the start is kept")
			assert.Contains(t, got, "[answer truncated by agentx: the responder printed 100000 bytes")
		}},
		{"over the stdout cap", `head -c 2000000 /dev/zero | tr '\0' b`, func(t *testing.T, got string) {
			assert.Contains(t, got, "the responder printed more than 1048576 bytes")
		}},
		{"invalid UTF-8", `printf 'ok \377\376 done'`, func(t *testing.T, got string) { assert.Equal(t, "ok \ufffd done", got) }},
		{"multi-byte rune at the cut", `head -c 2800 /dev/zero | tr '\0' a; printf '\342\202\254%.0s' $(seq 1 1000)`, func(t *testing.T, got string) {
			assert.Contains(t, got, "[answer truncated by agentx")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExecRunner{}.Run(context.Background(), Responder{Agent: "architect", Command: []string{"sh", "-c", tt.sh}, Timeout: 10 * time.Second}, testInv)
			require.NoError(t, err)
			require.NoError(t, ledger.ValidateMessage("answer", got))
			require.True(t, utf8.ValidString(got))
			tt.check(t, got)
		})
	}

	// and the hub records it: the question is answered, not left pending
	h, _ := newTestHub(t, "[agents.architect]\ncommand = [\"sh\", \"-c\", \"head -c 100000 /dev/zero | tr '\\\\0' a; printf '\\\\377'\"]\ntimeout = \"10s\"\n")
	h.Runner = ExecRunner{Dir: h.Dir}
	rec, err := h.Ask(context.Background(), askReq("engineer", "architect"))
	require.NoError(t, err)
	assert.Equal(t, ledger.Answered, rec.Status)
	assert.LessOrEqual(t, len(rec.Current(ledger.Answer).Body), ledger.MaxMessageLen)
}
