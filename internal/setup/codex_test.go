package setup

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const codexEngineer = `[mcp_servers.agentx]
command = "agentx"
args = ["mcp"]
env = { AGENTX_AGENT = "engineer" }
`

func TestMergeCodexConfig(t *testing.T) {
	engineer := Server{Agent: "engineer"}
	cases := []serverCase{
		{"no file", "<none>", engineer, codexEngineer},
		{"empty file", "", engineer, codexEngineer},
		{"issue given", "", Server{Agent: "engineer", Issue: 42}, strings.Replace(codexEngineer, `"engineer" }`, `"engineer", AGENTX_ISSUE = "42" }`, 1)},
		{"added at the end, the rest kept as written", `# my settings
model = "o3"   # the model

[mcp_servers.github]
command = "gh-mcp"
args = [
  "--read-only",  # for now
]

[profiles.fast]
model = "o4-mini"`, engineer, `# my settings
model = "o3"   # the model

[mcp_servers.github]
command = "gh-mcp"
args = [
  "--read-only",  # for now
]

[profiles.fast]
model = "o4-mini"

` + codexEngineer},
		{"agentx's table and its env sub-table replaced where they are, its other keys kept", `model = "o3"

# agentx
[mcp_servers.agentx]
command = "/opt/agentx"   # old
args = ["mcp", "--max-wait", "2m"]
tool_timeout_sec = 120

[mcp_servers.agentx.env]
AGENTX_AGENT = "architect"
AGENTX_ISSUE = "7"
AGENTX_MCP_MAX_WAIT = "120"

# the next table
[mcp_servers.other]
command = "x"
`, engineer, `model = "o3"

# agentx
[mcp_servers.agentx]
command = "agentx"
args = ["mcp", "--max-wait", "2m"]
env = { AGENTX_AGENT = "engineer", AGENTX_MCP_MAX_WAIT = "120" }
tool_timeout_sec = 120

# the next table
[mcp_servers.other]
command = "x"
`},
		{"a multi-line string that looks like a header is a value", "notes = '''\n[mcp_servers.agentx]\n'''\n", engineer, "notes = '''\n[mcp_servers.agentx]\n'''\n\n" + codexEngineer},
		{"CRLF line ends kept", "model = \"o3\"\r\n", engineer, "model = \"o3\"\r\n\r\n" + strings.ReplaceAll(codexEngineer, "\n", "\r\n")},
		{"no newline at the end", `model = "o3"`, engineer, "model = \"o3\"\n\n" + codexEngineer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mergeTwice(t, c.in, func(data []byte) ([]byte, error) { return MergeCodexConfig(data, c.s) })
			assert.Equal(t, c.want, string(got))
		})
	}
}

// TestMergeCodexUnchangedKeepsBytes: a table that already says what agentx
// would write is left as written, comments and all.
func TestMergeCodexUnchangedKeepsBytes(t *testing.T) {
	in := "[mcp_servers.agentx] # mine\ncommand = 'agentx'\nargs = [ 'mcp' ]\n\n[mcp_servers.agentx.env]\nAGENTX_AGENT = 'engineer'\n"
	got, err := MergeCodexConfig([]byte(in), Server{Agent: "engineer"})
	require.NoError(t, err)
	assert.Equal(t, in, string(got))
}

func TestMergeCodexErrors(t *testing.T) {
	t.Run("invalid TOML: the line", func(t *testing.T) {
		_, err := MergeCodexConfig([]byte("model = \"o3\"\ncommand = @\n"), Server{Agent: "engineer"})
		var de *DataError
		require.True(t, errors.As(err, &de), "want a *DataError, got %v", err)
		assert.Equal(t, 2, de.Line)
		assert.Contains(t, de.Msg, "invalid TOML")
	})
	for name, in := range map[string]string{
		"inline table": "[mcp_servers]\nagentx = { command = \"agentx\", args = [\"mcp\"] }\n",
		"dotted keys":  "mcp_servers.agentx.command = \"agentx\"\n",
		"not a table":  "[[mcp_servers.agentx]]\ncommand = \"agentx\"\n",
	} {
		t.Run(name+": left for a person", func(t *testing.T) {
			_, err := MergeCodexConfig([]byte(in), Server{Agent: "engineer"})
			var me *MergeError
			require.True(t, errors.As(err, &me), "want a *MergeError, got %v", err)
			assert.Contains(t, me.Hint(), `AGENTX_AGENT = "engineer"`, "the hint shows the table to write")
		})
	}
	t.Run("a table that cannot be added after an inline mcp_servers", func(t *testing.T) {
		_, err := MergeCodexConfig([]byte("mcp_servers = { other = { command = \"x\" } }\n"), Server{Agent: "engineer"})
		var me *MergeError
		require.True(t, errors.As(err, &me), "want a *MergeError, got %v", err)
	})
}

// codexHooksEngineer is .codex/hooks.json with agentx's hooks alone, for
// the engineer (no issue, no hold).
const codexHooksEngineer = `{
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "agentx inbox --agent engineer --format claude-hook --hook-event SessionStart"
          }
        ]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "agentx inbox --agent engineer --format claude-hook"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "agentx hook stop --agent engineer",
            "timeout": 360
          }
        ]
      }
    ]
  }
}
`

func TestMergeCodexHooks(t *testing.T) {
	const (
		inbox   = "agentx inbox --agent engineer --format claude-hook"
		session = inbox + " --hook-event SessionStart"
		stop    = "agentx hook stop --agent engineer"
	)
	engineer := Codex{Server: Server{Agent: "engineer"}, StopTimeout: 360}
	withIssue := engineer
	withIssue.Issue, withIssue.Hold, withIssue.HoldSet, withIssue.StopTimeout = 42, 10*time.Minute, true, 660
	alone := map[string][]string{
		"SessionStart":     {"|" + session},
		"UserPromptSubmit": {"|" + inbox},
		"Stop":             {"|" + stop + ":6m0s"},
	}
	aloneEvents := []string{"SessionStart", "UserPromptSubmit", "Stop"}
	cases := []struct {
		name   string
		in     string // "<none>": no file
		c      Codex
		want   map[string][]string // hookView of the result
		events []string            // the events under "hooks", in order
		keys   []string            // the top-level keys, in order
		same   bool                // the result is in, byte for byte
		// line and col: a *DataError there is wanted (line > 0), not a result
		line, col int
	}{
		{name: "no file", in: "<none>", c: engineer, want: alone, events: aloneEvents, keys: []string{"hooks"}},
		{name: "empty file", in: "", c: engineer, want: alone, events: aloneEvents, keys: []string{"hooks"}},
		{name: "issue and hold in the stop command", in: "{}", c: withIssue, want: map[string][]string{
			"SessionStart":     {"|" + session},
			"UserPromptSubmit": {"|" + inbox},
			"Stop":             {"|" + stop + " --issue 42 --hold 10m:11m0s"},
		}, events: aloneEvents, keys: []string{"hooks"}},
		{name: "the user's hooks, events and keys kept, in order; agentx's added after", in: `{
  "version": 1,
  "hooks": {
    "PreToolUse": [{"matcher": "shell", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "make lint"}]}],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}]
  },
  "other": {"x": [1, 2]}
}`, c: engineer, want: map[string][]string{
			"PreToolUse":       {"shell|./guard.sh:5s"},
			"Stop":             {"|make lint", "|" + stop + ":6m0s"},
			"UserPromptSubmit": {"|date", "|" + inbox},
			"SessionStart":     {"|" + session},
		}, events: []string{"PreToolUse", "Stop", "UserPromptSubmit", "SessionStart"}, keys: []string{"version", "hooks", "other"}},
		{name: "agentx's entries replaced where they are (--root dropped), a duplicate removed, a lower timeout raised", in: `{"hooks": {
  "Stop": [
    {"hooks": [{"type": "command", "command": "agentx hook stop --root \"$CLAUDE_PROJECT_DIR\" --agent architect", "timeout": 60}, {"type": "command", "command": "make lint"}]},
    {"hooks": [{"type": "command", "command": "agentx hook stop --agent engineer", "timeout": 360}]}
  ],
  "SessionStart": [{"hooks": [{"type": "command", "command": "/opt/bin/agentx inbox --root . --agent architect --format claude-hook --hook-event SessionStart"}]}]
}}`, c: engineer, want: map[string][]string{
			"Stop":             {"|" + stop + ":6m0s && make lint"},
			"SessionStart":     {"|" + session},
			"UserPromptSubmit": {"|" + inbox},
		}, events: []string{"Stop", "SessionStart", "UserPromptSubmit"}, keys: []string{"hooks"}},
		{name: "a higher timeout kept", in: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "agentx hook stop --agent engineer", "timeout": 1800}]}]}}`, c: engineer, want: map[string][]string{
			"Stop":             {"|" + stop + ":30m0s"},
			"SessionStart":     {"|" + session},
			"UserPromptSubmit": {"|" + inbox},
		}, events: []string{"Stop", "SessionStart", "UserPromptSubmit"}, keys: []string{"hooks"}},
		{name: "a file that already holds agentx's hooks is kept as written", in: `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "agentx inbox --agent engineer --format claude-hook --hook-event SessionStart"}]}],
 "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "agentx inbox --agent engineer --format claude-hook"}]}],
 "Stop": [{"hooks": [{"type": "command", "command": "agentx hook stop --agent engineer", "timeout": 360}]}]}}`, c: engineer, want: alone, events: aloneEvents, keys: []string{"hooks"}, same: true},
		{name: "invalid JSON: the line and column", in: "{\n  \"hooks\": {\n    \"Stop\": [\n  }\n", c: engineer, line: 4, col: 3},
		{name: "a trailing comma: the line and column", in: "{\"hooks\": {\n  \"Stop\": [],\n}}", c: engineer, line: 2, col: 13},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			merge := func(data []byte) ([]byte, error) { return MergeCodexHooks(data, c.c) }
			if c.line > 0 {
				_, err := merge([]byte(c.in))
				var de *DataError
				require.True(t, errors.As(err, &de), "want a *DataError, got %v", err)
				assert.Equal(t, c.line, de.Line, "line: %v", err)
				assert.Equal(t, c.col, de.Col, "column: %v", err)
				assert.Contains(t, de.Msg, "invalid JSON")
				return
			}
			got := mergeTwice(t, c.in, merge)
			view := hookView(t, got)
			assert.Equal(t, c.want, view, "%s", got)
			for ev, groups := range view {
				for _, g := range groups {
					assert.NotContains(t, g, "--root", "Codex runs hooks in the session's directory: no --root on %s", ev)
				}
			}
			assert.Equal(t, c.keys, topKeys(t, got))
			root, err := parseJSON(got)
			require.NoError(t, err)
			assert.Equal(t, c.events, root.get("hooks").names, "the events, in order")
			if c.same {
				assert.Equal(t, c.in, string(got), "unchanged: the bytes as they were")
			}
		})
	}
}

// TestMergeCodexHooksText: the whole of a new .codex/hooks.json.
func TestMergeCodexHooksText(t *testing.T) {
	got, err := MergeCodexHooks(nil, Codex{Server: Server{Agent: "engineer"}, StopTimeout: 360})
	require.NoError(t, err)
	assert.Equal(t, codexHooksEngineer, string(got))
}
