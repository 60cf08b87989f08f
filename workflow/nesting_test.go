package workflow

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNestingWithin(t *testing.T) {
	deep := func(n int) string { return "y = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n) + "\n" }
	tests := []struct {
		name string
		text string
		line int
		ok   bool
	}{
		{"flat", "a = 1\n[t]\nb = [1, 2]\n[[s]]\nc = {d = [[1], [2]]}\n", 0, true},
		{"at the limit", deep(MaxNesting), 0, true},
		{"over it", "a = 1\n" + deep(MaxNesting+1), 2, false},
		{"brackets in strings and comments do not count", "a = \"" + strings.Repeat("[", 100) + "\" # " + strings.Repeat("{", 100) + "\nb = '" + strings.Repeat("{", 100) + "'\nc = \"\"\"\n" + strings.Repeat("[", 100) + "\n\"\"\"\n", 0, true},
		{"an escaped quote does not end a string", `a = "\"[[[[" ` + "\n", 0, true},
		{"lines counted through multi-line strings", "a = '''\n\n'''\n" + deep(MaxNesting+1), 4, false},
		{"a string left open ends the scan", "a = \"" + strings.Repeat("[", 100), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, ok := nestingWithin([]byte(tt.text), MaxNesting)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.line, line)
		})
	}
}

// TestDeepNestingRefused: a workflow of 8,000 nested inline tables (34 KB),
// which the TOML decoder took 1.3 GB and 20 s to read, is refused before
// it (the decoder says nothing of nesting), naming the file and line.
func TestDeepNestingRefused(t *testing.T) {
	text := "name = \"x\"\ny = " + strings.Repeat("{a=", 8000) + "1" + strings.Repeat("}", 8000) + "\n"
	_, err := parseWorkflow("wf.toml", []byte(text))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "wf.toml:2")
	assert.Contains(t, err.Error(), "nested more than 32 deep")

	_, err = parseConfig("config.toml", []byte(strings.Repeat("# a comment line\n", MaxFileBytes/16)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agentx reads a config or workflow file of at most")
}

func FuzzNestingWithin(f *testing.F) {
	f.Add([]byte("a = [[1], {b = \"[\"}] # [[\n'''x\n'''"))
	f.Fuzz(func(t *testing.T, data []byte) {
		line, ok := nestingWithin(data, 4)
		if ok && line != 0 || !ok && (line < 1 || line > strings.Count(string(data), "\n")+1) {
			t.Fatalf("line %d, ok %v", line, ok)
		}
		line, over := scanBounds(data, 4, 16)
		if over == overNone && line != 0 || over != overNone && (line < 1 || line > strings.Count(string(data), "\n")+1) {
			t.Fatalf("scanBounds: line %d, over %d", line, over)
		}
		if !ok && over == overNone {
			t.Fatalf("nesting over 4 deep, but scanBounds found nothing over")
		}
	})
}

// TestItemsBounded: a file of more keys, tables and array elements than
// MaxItems is refused before the decoder reads it, naming the line where it
// goes over; brackets, commas and equals signs in strings and comments do
// not count, and a file at the bound is read.
func TestItemsBounded(t *testing.T) {
	keys := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("k")
			b.WriteString(strings.Repeat("x", i%7))
			b.WriteString(string(rune('a'+i%26)) + strings.Repeat("z", i/26) + " = 1\n")
		}
		return b.String()
	}
	line, over := scanBounds([]byte(keys(MaxItems)), MaxNesting, MaxItems)
	assert.Equal(t, overNone, over)
	assert.Zero(t, line)
	line, over = scanBounds([]byte("a = [1,2]\n"+keys(MaxItems)), MaxNesting, MaxItems)
	assert.Equal(t, overItems, over)
	assert.Equal(t, MaxItems-1, line, "the line where the count passes the bound (line 1 holds three)")
	_, over = scanBounds([]byte(`a = "`+strings.Repeat("=,[{", MaxItems)+`" # `+strings.Repeat(",", MaxItems)+"\n"), MaxNesting, MaxItems)
	assert.Equal(t, overNone, over)

	text := "name = \"x\"\nv = [" + strings.Repeat("1,", MaxItems) + "1]\n"
	_, err := parseWorkflow("wf.toml", []byte(text))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "wf.toml:2")
	assert.Contains(t, err.Error(), "more than 10000 keys, tables and array elements")
}
