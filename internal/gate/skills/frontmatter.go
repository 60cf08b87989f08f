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
	end, line, body := closingFence(data, rest)
	if end < 0 {
		return nil, nil, nil, &FrontMatterError{Line: 1, Msg: `the front matter is not closed: no line "---" after it`}
	}
	m, ferr := frontMatterMapping(data[yamlStart:end])
	if ferr != nil {
		return nil, body, nil, ferr
	}
	fm = &FrontMatter{End: line}
	return fm, body, readKeys(fm, m), nil
}

// closingFence finds the line "---" that closes the front matter in rest
// (data after its opening line): its offset in data (-1 when there is
// none), its line in the file, and the body after it.
func closingFence(data, rest []byte) (end, line int, body []byte) {
	end, line = -1, 2
	for r := rest; len(r) > 0; line++ {
		l, next, _ := cutLine(r)
		if isFence(l) {
			return len(data) - len(r), line, next
		}
		r = next
	}
	return end, line, nil
}

// frontMatterMapping parses src, the YAML between the fences, within
// MaxFrontMatter: its top mapping, or why it is not one.
func frontMatterMapping(src []byte) (*yaml.Node, *FrontMatterError) {
	if len(src) > MaxFrontMatter {
		return nil, &FrontMatterError{Line: 2, Msg: fmt.Sprintf("the front matter is %d bytes, more than %d", len(src), MaxFrontMatter)}
	}
	if ferr := loneCarriageReturn(src); ferr != nil {
		return nil, ferr
	}
	var doc yaml.Node
	if err := yamlUnmarshal(src, &doc); err != nil {
		return nil, yamlError(err)
	}
	if len(doc.Content) == 0 {
		return nil, &FrontMatterError{Line: 2, Msg: "the front matter is empty: it needs name and description"}
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, &FrontMatterError{Line: m.Line + 1, Msg: "the front matter must be a YAML mapping (key: value lines), not " + kindName(m)}
	}
	return m, nil
}

// loneCarriageReturn refuses a carriage return without a newline after
// it: YAML ends a line there too, where a line here ends at a newline,
// and the two would number the keys differently.
func loneCarriageReturn(src []byte) *FrontMatterError {
	for i, c := range src {
		if c == '\r' && (i+1 == len(src) || src[i+1] != '\n') {
			return &FrontMatterError{Line: 2 + bytes.Count(src[:i], []byte("\n")),
				Msg: "a carriage return without a newline after it: end each line with a newline (\\n or \\r\\n)"}
		}
	}
	return nil
}

// readKeys fills fm from the keys of the front matter's mapping m, in
// order, and returns the problems with single keys.
func readKeys(fm *FrontMatter, m *yaml.Node) []KeyProblem {
	r := keyReader{fm: fm, seen: map[string]bool{}}
	for i := 0; i+1 < len(m.Content); i += 2 {
		r.key(m.Content[i], resolve(m.Content[i+1]))
	}
	return r.problems
}

// keyReader reads the keys of a front matter into fm.
type keyReader struct {
	fm       *FrontMatter
	seen     map[string]bool
	problems []KeyProblem
}

// readKey reads key, one of the keys agentx reads (the others are left
// alone), with value v at line at of the file.
func (r *keyReader) readKey(key string, v *yaml.Node, at int) {
	switch key {
	case "name":
		r.fm.NameLine = at
		if s, ok := r.text(key, v, at); ok {
			r.fm.Name, r.fm.HasName = s, true
		}
	case "description":
		r.fm.DescLine = at
		if s, ok := r.text(key, v, at); ok {
			r.fm.Description, r.fm.HasDesc = s, true
		}
	case "disable-model-invocation":
		if b, ok := boolean(v); ok {
			r.fm.DisableModelInvocation = b
		} else {
			r.problem(key, at, "must be true or false")
		}
	case "metadata":
		r.metadata(key, v, at)
	}
}

// key reads key k with value v: a key that is no plain string, or one
// given before, is a problem.
func (r *keyReader) key(k, v *yaml.Node) {
	at := k.Line + 1 // the file's line: the opening "---" is line 1
	if k.Kind != yaml.ScalarNode {
		r.problem("?", at, "a key must be a plain string, not "+kindName(k))
		return
	}
	if r.seen[k.Value] {
		r.problem(k.Value, at, "is given twice")
		return
	}
	r.seen[k.Value] = true
	r.readKey(k.Value, v, at)
}

func (r *keyReader) problem(key string, at int, msg string) {
	r.problems = append(r.problems, KeyProblem{Key: key, Line: at, Msg: msg})
}

// text is the string value v of key; a value that is neither a string
// nor null is a problem.
func (r *keyReader) text(key string, v *yaml.Node, at int) (string, bool) {
	if s, ok := str(v); ok {
		return s, true
	}
	if v != nil && !isNull(v) {
		r.problem(key, at, "must be a string, not "+kindName(v))
	}
	return "", false
}

// metadata reads the proposal a draft came from out of the metadata map
// v; null is no metadata, anything but a map a problem.
func (r *keyReader) metadata(key string, v *yaml.Node, at int) {
	if v == nil || isNull(v) {
		return
	}
	if v.Kind != yaml.MappingNode {
		r.problem(key, at, "must be a map of strings to strings, not "+kindName(v))
		return
	}
	for j := 0; j+1 < len(v.Content); j += 2 {
		if v.Content[j].Value == ProposalKey {
			if s, ok := str(resolve(v.Content[j+1])); ok {
				r.fm.Proposal = s
			}
		}
	}
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
