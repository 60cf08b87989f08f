package ledger

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateSummary(t *testing.T) {
	tests := []struct {
		name    string
		summary string
		wantErr string // "" = accepted
	}{
		{"one sentence", "Dual adapter behind a repository interface.", ""},
		{"two sentences", "Postgres everywhere. SQLite only in unit tests.", ""},
		{"no full stop", "Per-key TTL", ""},
		{"abbreviations and versions end no sentence", "Pin v1.2.3 for now, e.g. in go.mod. Upgrade after the release.", ""},
		{"a question and an answer", "Flag or not? Behind a flag.", ""},
		{"non-ASCII", "Schéma par locataire, dès le début.", ""},
		{"exactly the limit", strings.Repeat("a", MaxSummary), ""},
		{"three sentences", "Postgres. SQLite in tests. Revisit in May.", "is 3 sentences; a summary is one or two"},
		{"three, the last a number", "Ship it. Behind a flag. 3 replicas.", "is 3 sentences"},
		{"over the limit", strings.Repeat("a", MaxSummary+1), "is 401 bytes; the limit is 400"},
		{"blank", "  ", "is empty"},
		{"a line break", "Postgres.\nSQLite in tests.", "has a control character (U+000A at byte 9)"},
		{"a tab", "Postgres\teverywhere", "has a control character (U+0009"},
		{"an escape sequence", "Postgres \x1b[2J", "has a control character (U+001B"},
		{"a bidi override", "Postgres \u202eeverywhere", "has a control character (U+202E"},
		{"invalid UTF-8", "Postgres \xff", "is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateSummary("--summary", tt.summary)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			var ie *InputError
			require.True(t, errors.As(err, &ie), "want *InputError, got %v", err)
			assert.Equal(t, "--summary", ie.Field)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.True(t, strings.HasPrefix(err.Error(), "--summary "), "the message names the flag: %s", err)
		})
	}
}
