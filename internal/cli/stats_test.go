package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBar(t *testing.T) {
	tests := []struct {
		v, max float64
		width  int
		want   string
	}{
		{0, 10, 10, ""},
		{10, 10, 4, "████"},
		{5, 10, 4, "██"},
		{1, 8, 1, "▏"},
		{3, 8, 1, "▍"},
		{0.01, 100, 4, "▏"}, // a non-zero value always shows
		{3, 0, 4, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, bar(tt.v, tt.max, tt.width), "%v/%v", tt.v, tt.max)
	}
}

func TestSpan(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{45*time.Second + 400*time.Millisecond, "45s"},
		{4 * time.Minute, "4m"},
		{4*time.Minute + 31*time.Second, "5m"},
		{59*time.Minute + 45*time.Second, "1h"},
		{2 * time.Hour, "2h"},
		{2*time.Hour + 5*time.Minute, "2h5m"},
		{47*time.Hour + 59*time.Minute, "47h59m"},
		{84 * time.Hour, "3.5d"},
		{-4 * time.Minute, "-4m"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, span(tt.d), "%v", tt.d)
	}
}

// TestStatsOnATerminal: a TTY gets bar charts, a pipe gets the numbers only.
func TestStatsOnATerminal(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AGENTX_NOW": "2026-02-26T10:00:00Z"}
	for _, args := range [][]string{
		{"init"},
		{"clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "Database adapter", "--question", "q1"},
		{"clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "Database pooling", "--question", "q2"},
		{"clarify", "answer", "CLR-1-001", "--body", "a1"},
		{"clarify", "resolve", "CLR-1-001"},
	} {
		r := runCmd(t, dir, env, "", args...)
		require.Equal(t, 0, r.code, r.stderr)
	}
	run := func(tty bool) string {
		var out, errb bytes.Buffer
		a := &App{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, isTTY: tty,
			getenv: testGetenv(env)}
		require.Equal(t, 0, run(context.Background(), a, []string{"clarify", "stats", "--no-color"}), errb.String())
		return out.String()
	}
	tty := run(true)
	assert.Contains(t, tty, "2 clarifications · 50% resolved · 0% escalated")
	assert.Contains(t, tty, "█", "bars on a terminal")
	assert.Regexp(t, `database\s+2\s+█{20}`, tty)
	pipe := run(false)
	assert.NotContains(t, pipe, "█")
	assert.Regexp(t, `engineer -> architect\s+2\s+1\s+0`, pipe)
}
