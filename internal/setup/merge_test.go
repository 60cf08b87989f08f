package setup

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpEngineer is .mcp.json with agentx's server alone, for the engineer.
const mcpEngineer = `{
  "mcpServers": {
    "agentx": {
      "command": "agentx",
      "args": [
        "mcp"
      ],
      "env": {
        "AGENTX_AGENT": "engineer"
      }
    }
  }
}
`

// serverCase is a merge of agentx's MCP server for s into in ("<none>":
// no file), and the file it makes.
type serverCase struct {
	name string
	in   string
	s    Server
	want string
}

func TestMergeMCPJSON(t *testing.T) {
	engineer := Server{Agent: "engineer"}
	cases := []serverCase{
		{"no file", "<none>", engineer, mcpEngineer},
		{"empty file", "", engineer, mcpEngineer},
		{"white space only", " \n\t\n", engineer, mcpEngineer},
		{"empty object", "{}", engineer, mcpEngineer},
		{"issue given", "", Server{Agent: "engineer", Issue: 42}, strings.Replace(mcpEngineer, `"AGENTX_AGENT": "engineer"`, `"AGENTX_AGENT": "engineer",
        "AGENTX_ISSUE": "42"`, 1)},
		{"other servers and keys kept, in order", `{"z": true, "mcpServers": {"github": {"command": "gh-mcp", "args": ["--x"]}}, "a": [1, 2.50, "<\u00e9&>"]}`, engineer, `{
  "z": true,
  "mcpServers": {
    "github": {
      "command": "gh-mcp",
      "args": [
        "--x"
      ]
    },
    "agentx": {
      "command": "agentx",
      "args": [
        "mcp"
      ],
      "env": {
        "AGENTX_AGENT": "engineer"
      }
    }
  },
  "a": [
    1,
    2.50,
    "<\u00e9&>"
  ]
}
`},
		{"agentx's server replaced where it is, its extras kept", `{
    "mcpServers": {
        "agentx": {"type": "stdio", "command": "old-agentx", "args": ["mcp", "--max-wait", "2m"], "env": {"AGENTX_ISSUE": "7", "AGENTX_AGENT": "architect", "AGENTX_MCP_MAX_WAIT": "120"}},
        "other": {"command": "x"}
    }
}`, engineer, `{
    "mcpServers": {
        "agentx": {
            "type": "stdio",
            "command": "agentx",
            "args": [
                "mcp",
                "--max-wait",
                "2m"
            ],
            "env": {
                "AGENTX_AGENT": "engineer",
                "AGENTX_MCP_MAX_WAIT": "120"
            }
        },
        "other": {
            "command": "x"
        }
    }
}
`},
		{"args that do not run the server are replaced", `{"mcpServers": {"agentx": {"command": "agentx", "args": ["inbox"], "env": {"AGENTX_AGENT": "engineer"}}}}`, engineer, mcpEngineer},
		{"tabs kept", "{\n\t\"a\": 1\n}\n", engineer, "{\n\t\"a\": 1,\n\t\"mcpServers\": {\n\t\t\"agentx\": {\n\t\t\t\"command\": \"agentx\",\n\t\t\t\"args\": [\n\t\t\t\t\"mcp\"\n\t\t\t],\n\t\t\t\"env\": {\n\t\t\t\t\"AGENTX_AGENT\": \"engineer\"\n\t\t\t}\n\t\t}\n\t}\n}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mergeTwice(t, c.in, func(data []byte) ([]byte, error) { return MergeMCPJSON(data, c.s) })
			assert.Equal(t, c.want, string(got))
		})
	}
}

// mergeTwice merges in ("<none>": no file) and returns the result, after
// checking that merging the result again changes nothing.
func mergeTwice(t *testing.T, in string, merge func([]byte) ([]byte, error)) []byte {
	t.Helper()
	var data []byte
	if in != "<none>" {
		data = []byte(in)
	}
	got, err := merge(data)
	require.NoError(t, err)
	again, err := merge(got)
	require.NoError(t, err)
	assert.Equal(t, string(got), string(again), "a second run changes nothing")
	return got
}

// TestMergeUnchangedKeepsBytes: a file that already holds what agentx
// would write is returned as it is, however it is formatted.
func TestMergeUnchangedKeepsBytes(t *testing.T) {
	in := `{ "mcpServers": { "agentx": { "command": "agentx", "args": ["mcp"], "env": { "AGENTX_AGENT": "engineer" } } } }`
	got, err := MergeMCPJSON([]byte(in), Server{Agent: "engineer"})
	require.NoError(t, err)
	assert.Equal(t, in, string(got))
}

func TestMergeJSONErrors(t *testing.T) {
	cases := []struct {
		name, in  string
		line, col int
		msg       string
		settings  bool // MergeClaudeSettings, else MergeMCPJSON
	}{
		{"trailing comma", "{\n  \"a\": 1,\n}\n", 2, 9, "invalid JSON", false},
		{"cut short", "{\n  \"a\": 1\n", 3, 1, "invalid JSON", false},
		{"two values", "{}\n{}\n", 2, 1, "more than one JSON value", false},
		{"duplicate name", "{\"a\": 1,\n \"a\": 2}", 2, 2, "duplicate", false},
		{"not an object", "[1, 2]", 1, 0, "want a JSON object", false},
		{"mcpServers not an object", "{\n  \"mcpServers\": []\n}", 2, 17, "mcpServers is an array, want an object", false},
		{"hooks not an object", "{\n  \"hooks\": [\"x\"]\n}", 2, 12, "hooks is an array, want an object", true},
		{"event not an array", "{\"hooks\": {\n  \"Stop\": {\"hooks\": []}}}", 2, 11, "hooks.Stop is an object, want an array", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.settings {
				_, err = MergeClaudeSettings([]byte(c.in), Claude{Server: Server{Agent: "engineer"}})
			} else {
				_, err = MergeMCPJSON([]byte(c.in), Server{Agent: "engineer"})
			}
			var de *DataError
			require.True(t, errors.As(err, &de), "want a *DataError, got %v", err)
			assert.Equal(t, c.line, de.Line, "line: %v", err)
			assert.Equal(t, c.col, de.Col, "column: %v", err)
			assert.Contains(t, de.Msg, c.msg)
		})
	}
}

// engineerHooks is agentx's hooks for the engineer (no scope, no issue),
// as a settings file holds them alone.
const engineerHooks = `{
  "hooks": {
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "agentx inbox --root \"$CLAUDE_PROJECT_DIR\" --agent engineer --format claude-hook"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "agentx inbox --root \"$CLAUDE_PROJECT_DIR\" --agent engineer --format claude-hook --hook-event SessionStart"
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "agentx hook stop --root \"$CLAUDE_PROJECT_DIR\" --agent engineer",
            "timeout": 360
          }
        ]
      },
      {
        "hooks": [
          {
            "type": "command",
            "command": "agentx hook rewake --root \"$CLAUDE_PROJECT_DIR\" --agent engineer",
            "timeout": 43260,
            "asyncRewake": true
          }
        ]
      }
    ]
  }
}
`

// hookView is a settings file's hooks, for tests: per event, each group's
// matcher and commands (with ":timeout" when there is one, and ":async"
// when asyncRewake is true).
func hookView(t *testing.T, data []byte) map[string][]string {
	t.Helper()
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command     string `json:"command"`
				Timeout     int    `json:"timeout"`
				AsyncRewake bool   `json:"asyncRewake"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	v := map[string][]string{}
	for ev, groups := range doc.Hooks {
		for _, g := range groups {
			var cmds []string
			for _, h := range g.Hooks {
				c := h.Command
				if h.Timeout > 0 {
					c += ":" + time.Duration(h.Timeout*int(time.Second)).String()
				}
				if h.AsyncRewake {
					c += ":async"
				}
				cmds = append(cmds, c)
			}
			v[ev] = append(v[ev], g.Matcher+"|"+strings.Join(cmds, " && "))
		}
	}
	return v
}

func TestMergeClaudeSettings(t *testing.T) {
	const (
		inbox   = `agentx inbox --root "$CLAUDE_PROJECT_DIR" --agent engineer --format claude-hook`
		session = inbox + " --hook-event SessionStart"
		stop    = `agentx hook stop --root "$CLAUDE_PROJECT_DIR" --agent engineer`
		scope   = `agentx scope check --root "$CLAUDE_PROJECT_DIR" --agent engineer`
		rewake  = `agentx hook rewake --root "$CLAUDE_PROJECT_DIR" --agent engineer`
		// agentx's rewake group as hookView shows it: 12h1m0s is RewakeTimeout
		rewaked = "|" + rewake + ":12h1m0s:async"
	)
	engineer := Claude{Server: Server{Agent: "engineer"}, StopTimeout: 360}
	scoped := engineer
	scoped.Scope = true
	withIssue := engineer
	withIssue.Issue, withIssue.Hold, withIssue.HoldSet, withIssue.StopTimeout = 42, 10*time.Minute, true, 660
	alone := map[string][]string{
		"UserPromptSubmit": {"|" + inbox},
		"SessionStart":     {"|" + session},
		"Stop":             {"|" + stop + ":6m0s", rewaked},
	}
	cases := []struct {
		name string
		in   string // "<none>": no file
		c    Claude
		want map[string][]string
		keys []string // the top-level keys, in order
	}{
		{"no file", "<none>", engineer, alone, []string{"hooks"}},
		{"empty file", "", engineer, alone, []string{"hooks"}},
		{"scope step: the PreToolUse hook", "{}", scoped, map[string][]string{
			"UserPromptSubmit": {"|" + inbox},
			"SessionStart":     {"|" + session},
			"PreToolUse":       {ScopeMatcher + "|" + scope},
			"Stop":             {"|" + stop + ":6m0s", rewaked},
		}, []string{"hooks"}},
		{"issue and hold", "{}", withIssue, map[string][]string{
			"UserPromptSubmit": {"|" + inbox},
			"SessionStart":     {"|" + session},
			"Stop":             {"|" + stop + " --issue 42 --hold 10m:11m0s", "|" + rewake + " --issue 42:12h1m0s:async"},
		}, []string{"hooks"}},
		{"the user's hooks, events and keys kept; agentx's added after", `{
  "model": "opus",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "make lint"}]}],
    "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}]
  },
  "permissions": {"allow": ["Bash(go test:*)"]}
}`, engineer, map[string][]string{
			"Stop":             {"|make lint", "|" + stop + ":6m0s", rewaked},
			"PostToolUse":      {"Bash|./audit.sh"},
			"UserPromptSubmit": {"|date", "|" + inbox},
			"SessionStart":     {"|" + session},
		}, []string{"model", "hooks", "permissions"}},
		{"agentx's entries replaced where they are, duplicates removed, a raised timeout kept", `{"hooks": {
  "UserPromptSubmit": [
    {"hooks": [{"type": "command", "command": "agentx inbox --agent architect --format claude-hook"}, {"type": "command", "command": "date"}]},
    {"hooks": [{"type": "command", "command": "agentx inbox --agent engineer --format claude-hook"}]}
  ],
  "Stop": [{"hooks": [{"type": "command", "command": "/usr/local/bin/agentx hook stop --agent architect", "timeout": 1800}]}],
  "PreToolUse": [{"matcher": "Write|Edit|MultiEdit|NotebookEdit", "hooks": [{"type": "command", "command": "agentx scope check --agent architect"}]}],
  "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "agentx inbox --agent architect --format claude-hook --hook-event PostToolUse"}]}]
}}`, scoped, map[string][]string{
			"UserPromptSubmit": {"|" + inbox + " && date"},
			"Stop":             {"|" + stop + ":30m0s", rewaked},
			"PreToolUse":       {ScopeMatcher + "|" + scope},
			"PostToolUse":      {"*|agentx inbox --agent architect --format claude-hook --hook-event PostToolUse"},
			"SessionStart":     {"|" + session},
		}, []string{"hooks"}},
		{"an old rewake entry updated where it is: asyncRewake added, the timeout raised; a duplicate removed", `{"hooks": {"Stop": [
  {"hooks": [{"type": "command", "command": "make lint"}]},
  {"hooks": [{"type": "command", "command": "agentx hook rewake --agent architect", "timeout": 600}]},
  {"hooks": [{"type": "command", "command": "agentx hook stop --agent architect", "timeout": 360}]},
  {"hooks": [{"type": "command", "command": "./notify.sh"}, {"type": "command", "command": "agentx hook rewake --agent engineer", "asyncRewake": true}]}
]}}`, engineer, map[string][]string{
			"Stop":             {"|make lint", rewaked, "|" + stop + ":6m0s", "|./notify.sh"},
			"UserPromptSubmit": {"|" + inbox},
			"SessionStart":     {"|" + session},
		}, []string{"hooks"}},
		{"a lower timeout raised", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "agentx hook stop --agent engineer", "timeout": 60}]}]}}`, engineer, alone, []string{"hooks"}},
		{"no scope: agentx's scope check removed, the user's kept", `{"hooks": {"PreToolUse": [
  {"matcher": "Write|Edit|MultiEdit|NotebookEdit", "hooks": [{"type": "command", "command": "agentx scope check --agent engineer"}]},
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
]}}`, engineer, map[string][]string{
			"PreToolUse":       {"Bash|./guard.sh"},
			"UserPromptSubmit": {"|" + inbox},
			"SessionStart":     {"|" + session},
			"Stop":             {"|" + stop + ":6m0s", rewaked},
		}, []string{"hooks"}},
		{"no scope: an event left empty is removed", `{"hooks": {"PreToolUse": [{"matcher": "Write|Edit|MultiEdit|NotebookEdit", "hooks": [{"type": "command", "command": "agentx scope check --agent engineer"}]}]}}`, engineer, alone, []string{"hooks"}},
		{"agentx's entry under another matcher moves to a group of its own", `{"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "agentx inbox --agent engineer --format claude-hook --hook-event SessionStart"}, {"type": "command", "command": "./warm.sh"}]}]}}`, engineer, map[string][]string{
			"SessionStart":     {"startup|./warm.sh", "|" + session},
			"UserPromptSubmit": {"|" + inbox},
			"Stop":             {"|" + stop + ":6m0s", rewaked},
		}, []string{"hooks"}},
		{"commands that only mention agentx are the user's", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo agentx hook stop"}, {"type": "command", "command": "agentx hook finish --agent engineer"}]}]}}`, engineer, map[string][]string{
			"Stop":             {"|echo agentx hook stop && agentx hook finish --agent engineer", "|" + stop + ":6m0s", rewaked},
			"UserPromptSubmit": {"|" + inbox},
			"SessionStart":     {"|" + session},
		}, []string{"hooks"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mergeTwice(t, c.in, func(data []byte) ([]byte, error) { return MergeClaudeSettings(data, c.c) })
			assert.Equal(t, c.want, hookView(t, got), "%s", got)
			assert.Equal(t, c.keys, topKeys(t, got))
		})
	}
}

// TestMergeClaudeSettingsText: the whole file, for a settings file with
// none of agentx's hooks: what docs/agents.md shows, in Claude Code's own
// formatting.
func TestMergeClaudeSettingsText(t *testing.T) {
	got, err := MergeClaudeSettings(nil, Claude{Server: Server{Agent: "engineer"}, StopTimeout: 360})
	require.NoError(t, err)
	assert.Equal(t, engineerHooks, string(got))
}

func topKeys(t *testing.T, data []byte) []string {
	t.Helper()
	n, err := parseJSON(data)
	require.NoError(t, err)
	return n.names
}

func TestStopTimeout(t *testing.T) {
	assert.Equal(t, 360, StopTimeout(5*time.Minute, 0))
	assert.Equal(t, 60, StopTimeout(0, 0))
	assert.Equal(t, 1260, StopTimeout(5*time.Minute, 20*time.Minute), "the checks take longer than the hold")
	assert.Equal(t, 62, StopTimeout(1500*time.Millisecond, 0), "rounded up to a whole second")
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5 * time.Minute: "5m", time.Hour: "1h", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 0: "0s", 1500 * time.Millisecond: "1.5s",
	} {
		assert.Equal(t, want, ShortDuration(d))
		parsed, err := time.ParseDuration(want)
		require.NoError(t, err)
		assert.Equal(t, d, parsed)
	}
}

// TestDocsShowTheHooks: the commands setup writes are those docs/agents.md
// shows for the engineer (section 2, and section 4 with --issue 42), and
// the instructions it prints are the block of section 3.
func TestDocsShowTheHooks(t *testing.T) {
	doc, err := os.ReadFile("../../docs/agents.md")
	require.NoError(t, err)
	for _, c := range []Claude{
		{Server: Server{Agent: "engineer"}, Scope: true},
		{Server: Server{Agent: "engineer", Issue: 42}},
	} {
		for _, h := range c.Hooks() {
			if h.Command == "" {
				continue
			}
			quoted, err := json.Marshal(h.Command)
			require.NoError(t, err)
			assert.True(t, strings.Contains(string(doc), `"command": `+string(quoted)), "docs/agents.md shows the %s hook %s", h.Event, quoted)
		}
	}
	assert.True(t, strings.Contains(string(doc), `"matcher": "`+ScopeMatcher+`"`), "docs/agents.md shows the scope matcher")
	assert.True(t, strings.Contains(string(doc), "```markdown\n"+Instructions+"```\n"), "docs/agents.md section 3 is the instructions setup prints")
}
