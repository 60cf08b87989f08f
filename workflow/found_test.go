package workflow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFoundByFuzzing: settings the fuzz targets found loading although
// agentx cannot use them. An SLA of more minutes than a time.Duration
// holds overflowed to a negative SLA (every question stale at once); a
// stuck_similarity of nan passed the range check (NaN compares false) and
// turned stuck detection off; a [notify] table with no command loaded and
// nobody was ever notified.
func TestFoundByFuzzing(t *testing.T) {
	tests := []struct {
		name, file, text, want string
	}{
		{"clarify_sla_minutes past a Duration", "wf.toml",
			"[[steps]]\nid = \"a\"\nagent = \"engineer\"\nclarify_sla_minutes = 153722868\n",
			"wf.toml:4: steps.clarify_sla_minutes: must be between 1 and 52560000 (100 years), got 153722868"},
		{"clarify_sla_minutes max int64", "wf.toml",
			"[[steps]]\nid = \"a\"\nagent = \"engineer\"\nclarify_sla_minutes = 9223372036854775807\n",
			"wf.toml:4: steps.clarify_sla_minutes: must be between 1 and 52560000 (100 years), got 9223372036854775807"},
		{"human_sla_minutes past a Duration", "config.toml", "human_sla_minutes = 153722868\n",
			"config.toml:1: human_sla_minutes: must be between 1 and 52560000 (100 years), got 153722868 (hint: 1440 is a day)"},
		{"stuck_similarity nan", "config.toml", "stuck_similarity = nan\n",
			"config.toml:1: stuck_similarity: must be greater than 0 and at most 1, got NaN"},
		{"notify without a command", "config.toml", "[notify]\n",
			"config.toml:1: notify.command: required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.file == "config.toml" {
				_, err = parseConfig(tt.file, []byte(tt.text))
			} else {
				_, err = parseWorkflow(tt.file, []byte(tt.text))
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// the largest SLA allowed still fits
	w, err := parseWorkflow("wf.toml", []byte("[[steps]]\nid = \"a\"\nagent = \"engineer\"\nclarify_sla_minutes = 52560000\n"))
	require.NoError(t, err)
	assert.Positive(t, w.rule(&w.Steps[0]).SLA)
}
