package ledger

import (
	"strings"
	"testing"
)

// TestCorruptHintNamesNoCommand: a core error's hint says what happened
// and what may be done, in no front end's words; the CLI names its command
// (internal/cli advice), the MCP server its tools.
func TestCorruptHintNamesNoCommand(t *testing.T) {
	for _, derived := range []bool{false, true} {
		h := (&CorruptError{Path: "/w/.agentx/state/x.json", Derived: derived}).Hint()
		if strings.Contains(h, "agentx doctor") || strings.Contains(h, "agentx clarify") || strings.Contains(h, "--") {
			t.Errorf("derived %v: the hint names a command: %q", derived, h)
		}
	}
}
