package setup

import (
	"errors"
	"strings"
	"testing"

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
