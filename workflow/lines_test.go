package workflow

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestIndexKeys proves the key line scanner is not fooled by values that span lines
// or contain brackets, '=' or '#', and handles quoted, dotted and nested keys.
func TestIndexKeys(t *testing.T) {
	src := `# [[steps]] in a comment
title = "a [x] = # not a key"   # 2
[workflow]                      # 3
name = 'lit [y]'                # 4
description = """
[[steps]]
id = "inside a string"
"""                             # 8
[[steps]]                       # 9
id = "a"                        # 10
needs = [                       # 11
  ["nested"],
  "[[steps]]",
]
"quoted key" = 1                # 15
dotted.key = 2                  # 16

[[ steps ]]                     # 18
id = 'b'                        # 19
literal = '''
x = 1
'''
can_clarify = ["x"]             # 23
[steps.sub]                     # 24
k = 1                           # 25

[agents."product-manager"]      # 27
command = ["a"]                 # 28
inline = { a = 1, b = [
  2,
] }
after = 1                       # 32
`
	ix := indexKeys(src)
	tests := []struct {
		path []string
		want int
	}{
		{[]string{"title"}, 2},
		{[]string{"workflow"}, 3},
		{[]string{"workflow", "name"}, 4},
		{[]string{"workflow", "description"}, 5},
		{[]string{"steps"}, 9},
		{[]string{"steps", "#0"}, 9},
		{[]string{"steps", "#0", "id"}, 10},
		{[]string{"steps", "#0", "needs"}, 11},
		{[]string{"steps", "#0", "quoted key"}, 15},
		{[]string{"steps", "#0", "dotted", "key"}, 16},
		{[]string{"steps", "#1"}, 18},
		{[]string{"steps", "#1", "id"}, 19},
		{[]string{"steps", "#1", "can_clarify"}, 23},
		{[]string{"steps", "#1", "sub", "k"}, 25},
		{[]string{"steps", "#1", "missing"}, 18}, // falls back to the table
		{[]string{"agents", "product-manager", "command"}, 28},
		{[]string{"agents", "product-manager", "inline", "a"}, 29}, // inline: the enclosing key
		{[]string{"agents", "product-manager", "after"}, 32},
		{[]string{"nothing"}, 0},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ix.line(tt.path...), "%q", tt.path)
	}
	assert.Equal(t, []int{10, 19}, ix.plainLines("steps", "id"))
	assert.Equal(t, []int{27}, ix.plainLines("agents", "product-manager"))
	assert.Equal(t, []int{27}, ix.plainLines("agents"), "implied table: first line under it")
}

// TestHeaders: table headers, quoted and spaced, with their lines; what
// looks like a header inside a multi-line string or array is a value.
func TestHeaders(t *testing.T) {
	src := "\ufeffmodel = \"o3\"\n" + // 1
		"notes = '''\n[not.a.header]\n'''\n" + // 2-4
		"[ mcp_servers . \"agentx\" ]  # 5\n" +
		"args = [\n  \"[x]\",\n]\n" + // 6-8
		"[[profiles]]\n" + // 9
		"[mcp_servers.agentx.env]\n" // 10
	assert.Equal(t, []Header{
		{Keys: []string{"mcp_servers", "agentx"}, Line: 5},
		{Keys: []string{"profiles"}, Line: 9, Array: true},
		{Keys: []string{"mcp_servers", "agentx", "env"}, Line: 10},
	}, Headers(src))
	assert.Empty(t, Headers(""))
}
