package cli

import (
	"strings"
	"testing"
)

// TestMissingRequiredFlags: a command run without a flag it needs is a
// usage error, exit 2, and the message names the flag, whether cobra knows
// it is required or the command finds out (a default from the environment,
// text from stdin).
func TestMissingRequiredFlags(t *testing.T) {
	dir := t.TempDir()
	if r := runCmd(t, dir, nil, "", "init"); r.code != 0 {
		t.Fatalf("init: %s", r.stderr)
	}
	if r := runCmd(t, dir, nil, "", "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "T", "--question", "Q?"); r.code != 0 {
		t.Fatalf("ask: %s", r.stderr)
	}
	ask := func(drop string) []string {
		args := []string{"clarify", "ask"}
		for _, kv := range [][2]string{{"--issue", "1"}, {"--from", "engineer"}, {"--to", "architect"}, {"--topic", "T"}, {"--question", "Q?"}} {
			if kv[0] != drop {
				args = append(args, kv[0], kv[1])
			}
		}
		return args
	}
	tests := []struct {
		name string
		args []string
		flag string // named in the message
	}{
		{"ask without --topic", ask("--topic"), "topic"},
		{"ask without --to", ask("--to"), "to"},
		{"ask without --issue", ask("--issue"), "--issue"},
		{"ask without --from", ask("--from"), "--from"},
		{"ask without --question", ask("--question"), "--question"},
		{"answer without --body", []string{"clarify", "answer", "CLR-1-001", "--from", "architect"}, "--body"},
		{"followup without --body", []string{"clarify", "followup", "CLR-1-001"}, "--body"},
		{"assume without --assumption", []string{"clarify", "assume", "CLR-1-001"}, "--assumption"},
		{"hook start without --agent", []string{"hook", "start", "--issue", "1"}, "--agent"},
		{"hook finish without --issue", []string{"hook", "finish", "--agent", "engineer"}, "--issue"},
		{"inbox without --agent", []string{"inbox"}, "--agent"},
		{"ask --json without --topic", append(ask("--topic"), "--json"), "topic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, dir, nil, "", tt.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2 (usage); stderr: %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.flag) {
				t.Errorf("the message does not name %s: %s", tt.flag, r.stderr)
			}
			if strings.Contains(strings.Join(tt.args, " "), "--json") && !strings.Contains(r.stderr, `"code":"usage"`) {
				t.Errorf("not a JSON usage error: %s", r.stderr)
			}
		})
	}
}
