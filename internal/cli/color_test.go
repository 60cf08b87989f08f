package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestColourOnlyOnATerminal: statuses are coloured on a TTY, and never in a
// pipe, under NO_COLOR, CLICOLOR=0 or --no-color.
func TestColourOnlyOnATerminal(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	require.Equal(t, 0, runCmd(t, dir, nil, "", "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "t", "--question", "q").code)
	const yellow = "\x1b[33m"
	tests := []struct {
		name  string
		tty   bool
		env   map[string]string
		flags []string
		color bool
	}{
		{"terminal", true, nil, nil, true},
		{"pipe", false, nil, nil, false},
		{"NO_COLOR", true, map[string]string{"NO_COLOR": "1"}, nil, false},
		{"CLICOLOR=0", true, map[string]string{"CLICOLOR": "0"}, nil, false},
		{"--no-color", true, nil, []string{"--no-color"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, args := range [][]string{{"clarify", "list"}, {"clarify", "show", "CLR-1-001"}} {
				var out, errb bytes.Buffer
				a := &App{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, isTTY: tt.tty,
					getenv: func(k string) string { return tt.env[k] }}
				require.Equal(t, 0, run(context.Background(), a, append(args, tt.flags...)), errb.String())
				assert.Equal(t, tt.color, strings.Contains(out.String(), yellow+"pending"), "%v:\n%q", args, out.String())
				if !tt.color {
					assert.NotContains(t, out.String(), "\x1b[")
				}
			}
		})
	}
}

// TestDemoReadsWithAndWithoutColour: on a terminal the demo is coloured;
// under NO_COLOR it is plain text, and both tell the same story.
func TestDemoReadsWithAndWithoutColour(t *testing.T) {
	demo := func(env map[string]string) string {
		var out, errb bytes.Buffer
		a := &App{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, isTTY: true,
			getenv: func(k string) string { return env[k] }}
		require.Equal(t, 0, run(context.Background(), a, []string{"demo"}), errb.String())
		return out.String()
	}
	coloured := demo(nil)
	plain := demo(map[string]string{"NO_COLOR": "1"})
	assert.Contains(t, coloured, "\x1b[", "colour on a terminal")
	assert.NotContains(t, plain, "\x1b[", "none under NO_COLOR")
	strip := regexp.MustCompile("\x1b\\[[0-9;]*m")
	tmp := regexp.MustCompile(`agentx-demo-[0-9]+|Done in [0-9.]+s`)
	assert.Equal(t, tmp.ReplaceAllString(plain, ""), tmp.ReplaceAllString(strip.ReplaceAllString(coloured, ""), ""),
		"the same text either way")
	assert.Contains(t, plain, "█", "the digest draws bars on a terminal")
}
