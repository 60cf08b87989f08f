package cli

import (
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// completeIn runs cobra's hidden __complete command, as the shell scripts
// of `agentx completion` do, and returns the candidates (without their
// descriptions) and the directive.
func completeIn(t *testing.T, dir string, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	r := runCmd(t, dir, nil, "", append([]string{cobra.ShellCompRequestCmd}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(last, ":"), "no directive line in %q", r.stdout)
	d, err := strconv.Atoi(last[1:])
	require.NoError(t, err)
	var got []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		got = append(got, name)
	}
	return got, cobra.ShellCompDirective(d)
}

// TestCompletion: ids (open ones first), agent names and workflow names
// complete through cobra's dynamic completion, from the workspace.
func TestCompletion(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init"},
		{"clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect", "--topic", "Cache", "--question", "TTL?"},
		{"clarify", "answer", "CLR-42-001", "--body", "5 minutes."},
		{"clarify", "resolve", "CLR-42-001"},
		{"clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect", "--topic", "Pool", "--question", "Size?"},
		{"clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "human", "--topic", "Launch", "--question", "Monday?"},
	} {
		r := runCmd(t, dir, nil, "", args...)
		require.Equal(t, 0, r.code, r.stderr)
	}
	agents := []string{"architect", "customer-coach", "data-scientist", "devops", "engineer", "product-manager", "reviewer", "tester", "ux-designer"}
	withHuman := append(append([]string{}, agents...), "human")
	ids := []string{"CLR-7-001", "CLR-42-002", "CLR-42-001"} // open ones first, then the rest
	noFiles := cobra.ShellCompDirectiveNoFileComp
	tests := []struct {
		name      string
		args      []string
		want      []string
		keepOrder bool
	}{
		{"answer: ids, open first", []string{"clarify", "answer", ""}, ids, true},
		{"show: ids with a prefix", []string{"clarify", "show", "CLR-42"}, []string{"CLR-42-002", "CLR-42-001"}, true},
		{"wait: ids", []string{"clarify", "wait", "C"}, ids, true},
		{"assume: ids", []string{"clarify", "assume", ""}, ids, true},
		{"resolve: one id only", []string{"clarify", "resolve", "CLR-7-001", ""}, nil, false},
		{"events --id", []string{"events", "--id", ""}, ids, true},
		{"ask --to: agents and human", []string{"clarify", "ask", "--to", ""}, withHuman, false},
		{"ask --from: agents", []string{"clarify", "ask", "--from", ""}, agents, false},
		{"ask --from with a prefix", []string{"clarify", "ask", "--from", "eng"}, []string{"engineer"}, false},
		{"answer --from: agents and human", []string{"clarify", "answer", "CLR-7-001", "--from", ""}, withHuman, false},
		{"hook start --agent", []string{"hook", "start", "--agent", ""}, agents, false},
		{"inbox --agent", []string{"inbox", "--agent", "pro"}, []string{"product-manager"}, false},
		{"list --agent", []string{"clarify", "list", "--agent", "ux"}, []string{"ux-designer"}, false},
		{"workflow show", []string{"workflow", "show", ""}, []string{"bug", "feature", "story"}, false},
		{"ask --workflow", []string{"clarify", "ask", "--workflow", "f"}, []string{"feature"}, false},
		{"hook start --workflow", []string{"hook", "start", "--workflow", ""}, []string{"bug", "feature", "story"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, d := completeIn(t, dir, tt.args...)
			assert.Equal(t, tt.want, got)
			assert.NotZero(t, d&noFiles, "never file names")
			assert.Equal(t, tt.keepOrder, d&cobra.ShellCompDirectiveKeepOrder != 0, "keep order")
		})
	}

	// no workspace: nothing to offer, and no error
	got, d := completeIn(t, t.TempDir(), "clarify", "answer", "")
	assert.Empty(t, got)
	assert.NotZero(t, d&noFiles)
}
