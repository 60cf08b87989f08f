package skills

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// MaxFrontMatter is the most bytes of front matter parsed: a skill's
// metadata is a few lines, and YAML from an untrusted file is parsed only
// within this bound.
const MaxFrontMatter = 64 << 10

// FrontMatter is what the YAML front matter of a SKILL.md says that
// agentx reads. Other keys (allowed-tools, model, hooks...) are Claude
// Code's and are left alone, but must be valid YAML.
type FrontMatter struct {
	Name        string
	HasName     bool // a name key with a string value
	NameLine    int  // the line of name in the file, 1-based; 0 when absent
	Description string
	HasDesc     bool
	DescLine    int
	// DisableModelInvocation is Claude Code's disable-model-invocation:
	// true, Claude does not load the skill on its own (a draft's state).
	DisableModelInvocation bool
	// Proposal is metadata.agentx-proposal: the proposal a draft came from.
	Proposal string
	// End is the line of the closing "---"; the body starts after it.
	End int
}

// FrontMatterError is a front matter that is missing or cannot be read.
type FrontMatterError struct {
	Line int // 1-based, in the file; 0 when it concerns the whole file
	Msg  string
}

func (e *FrontMatterError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// KeyProblem is a key of the front matter whose value agentx cannot use
// (a name that is a list, metadata that is not a map, a key twice).
type KeyProblem struct {
	Key  string
	Line int
	Msg  string
}

// ParseFrontMatter reads the front matter at the start of a SKILL.md: a
// line "---", YAML, a line "---". It returns what it found, the body
// after it, and the problems with single keys; err is a front matter
// that is missing, unclosed, too long or not a YAML mapping. It never
// panics, whatever data holds.
func ParseFrontMatter(data []byte) (fm *FrontMatter, body []byte, problems []KeyProblem, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte order mark
	first, rest, _ := cutLine(data)
	if !isFence(first) {
		return nil, data, nil, &FrontMatterError{Line: 1, Msg: `no front matter: the file must start with a line "---", then the YAML (name, description), then "---"`}
	}
	yamlStart := len(data) - len(rest)
	end, line := -1, 2
	for r := rest; len(r) > 0; line++ {
		l, next, _ := cutLine(r)
		if isFence(l) {
			end = len(data) - len(r)
			body = next
			break
		}
		r = next
	}
	if end < 0 {
		return nil, nil, nil, &FrontMatterError{Line: 1, Msg: `the front matter is not closed: no line "---" after it`}
	}
	src := data[yamlStart:end]
	if len(src) > MaxFrontMatter {
		return nil, body, nil, &FrontMatterError{Line: 2, Msg: fmt.Sprintf("the front matter is %d bytes, more than %d", len(src), MaxFrontMatter)}
	}
	// YAML ends a line at a lone carriage return too, where a line here
	// ends at a newline: the two would number the keys differently
	for i, c := range src {
		if c == '\r' && (i+1 == len(src) || src[i+1] != '\n') {
			return nil, body, nil, &FrontMatterError{Line: 2 + bytes.Count(src[:i], []byte("\n")),
				Msg: "a carriage return without a newline after it: end each line with a newline (\\n or \\r\\n)"}
		}
	}
	var doc yaml.Node
	if err := yamlUnmarshal(src, &doc); err != nil {
		return nil, body, nil, yamlError(err)
	}
	if len(doc.Content) == 0 {
		return nil, body, nil, &FrontMatterError{Line: 2, Msg: "the front matter is empty: it needs name and description"}
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, body, nil, &FrontMatterError{Line: m.Line + 1, Msg: "the front matter must be a YAML mapping (key: value lines), not " + kindName(m)}
	}
	fm = &FrontMatter{End: line}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], resolve(m.Content[i+1])
		at := k.Line + 1 // the file's line: the opening "---" is line 1
		if k.Kind != yaml.ScalarNode {
			problems = append(problems, KeyProblem{Key: "?", Line: at, Msg: "a key must be a plain string, not " + kindName(k)})
			continue
		}
		if seen[k.Value] {
			problems = append(problems, KeyProblem{Key: k.Value, Line: at, Msg: "is given twice"})
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			fm.NameLine = at
			if s, ok := str(v); ok {
				fm.Name, fm.HasName = s, true
			} else if v != nil && !isNull(v) {
				problems = append(problems, KeyProblem{Key: "name", Line: at, Msg: "must be a string, not " + kindName(v)})
			}
		case "description":
			fm.DescLine = at
			if s, ok := str(v); ok {
				fm.Description, fm.HasDesc = s, true
			} else if v != nil && !isNull(v) {
				problems = append(problems, KeyProblem{Key: "description", Line: at, Msg: "must be a string, not " + kindName(v)})
			}
		case "disable-model-invocation":
			if b, ok := boolean(v); ok {
				fm.DisableModelInvocation = b
			} else {
				problems = append(problems, KeyProblem{Key: k.Value, Line: at, Msg: "must be true or false"})
			}
		case "metadata":
			if v == nil || isNull(v) {
				continue
			}
			if v.Kind != yaml.MappingNode {
				problems = append(problems, KeyProblem{Key: k.Value, Line: at, Msg: "must be a map of strings to strings, not " + kindName(v)})
				continue
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				if v.Content[j].Value == ProposalKey {
					if s, ok := str(resolve(v.Content[j+1])); ok {
						fm.Proposal = s
					}
				}
			}
		}
	}
	return fm, body, problems, nil
}

// ProposalKey is the metadata key that names the proposal a skill was
// drafted from.
const ProposalKey = "agentx-proposal"

// yamlUnmarshal is yaml.Unmarshal that turns a panic of the parser (none
// is known; the input is untrusted) into an error.
func yamlUnmarshal(src []byte, v *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return yaml.Unmarshal(src, v)
}

// yamlLine finds "line N" in the YAML parser's messages.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): `) })

// yamlError says where the YAML is broken, in the file's lines.
func yamlError(err error) *FrontMatterError {
	msg := err.Error()
	line := 0
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			line = n + 1
		}
		msg = msg[len(m[0]):]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return &FrontMatterError{Line: line, Msg: "the front matter is not valid YAML: " + msg}
}

// resolve follows an alias to what it names.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// str is a scalar's text: a string, or a number or word YAML reads as
// another type (name: 2fa), which Claude Code reads as text too.
func str(n *yaml.Node) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Tag == "!!binary" {
		return "", false
	}
	return n.Value, true
}

func boolean(n *yaml.Node) (bool, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, false
	}
	return b, true
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "empty"
		}
		return "a " + strings.TrimPrefix(n.Tag, "!!")
	case yaml.AliasNode:
		return "an alias"
	}
	return "something else"
}

// cutLine splits off data's first line, without its line ending.
func cutLine(data []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return data, nil, false
	}
	return bytes.TrimSuffix(data[:i], []byte("\r")), data[i+1:], true
}

// isFence reports whether l is a front matter delimiter: "---", trailing
// blanks allowed.
func isFence(l []byte) bool {
	return string(bytes.TrimRight(l, " \t")) == "---"
}
