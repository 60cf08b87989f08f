package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSignalsTakenOverOnlyWhenNeeded: a command that can take a lock,
// write, start a process or wait takes Ctrl-C, SIGTERM and SIGPIPE over
// before it runs; version, help and the completion scripts, which touch
// nothing, leave them to their defaults and do not pay for the OS thread
// the runtime starts to handle them.
func TestSignalsTakenOverOnlyWhenNeeded(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	for _, tt := range []struct {
		args  []string
		armed bool
	}{
		{[]string{"version"}, false},
		{[]string{"version", "--json"}, false},
		{[]string{"help"}, false},
		{[]string{"help", "clarify"}, false},
		{[]string{"completion", "bash"}, false},
		{[]string{"clarify", "list"}, true},
		{[]string{"clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "t", "--question", "q?"}, true},
		{[]string{"ready"}, true},
		{[]string{"demo"}, true},
		{[]string{"init", "--force"}, true},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Chdir(dir)
			armed := 0
			var out, errb bytes.Buffer
			a := &App{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" },
				armSignals: func() { armed++ }}
			require.Equal(t, 0, run(context.Background(), a, tt.args), errb.String())
			assert.Equal(t, tt.armed, armed > 0)
		})
	}
}
