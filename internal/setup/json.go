package setup

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// node is a JSON value that keeps what it was written as: an object's
// members in their order, and every string, number and literal as its
// original text.
type node struct {
	kind  jsontext.Kind // '{', '[', or the kind of a scalar
	names []string      // an object's member names, unquoted
	keys  [][]byte      // the names as written (quoted)
	vals  []*node       // an object's values, or an array's elements
	raw   []byte        // a scalar as written
	off   int64         // where it was read from (before any white space): -1 if new
}

func newObject() *node { return &node{kind: '{', off: -1} }

func newArray(elems ...*node) *node { return &node{kind: '[', vals: elems, off: -1} }

// str is a JSON string.
func str(s string) *node {
	raw, _ := jsontext.AppendQuote(nil, s)
	return &node{kind: '"', raw: raw, off: -1}
}

// num is a JSON number.
func num(n int64) *node {
	return &node{kind: '0', raw: strconv.AppendInt(nil, n, 10), off: -1}
}

// boolean is a JSON true or false.
func boolean(v bool) *node {
	raw := "false"
	if v {
		raw = "true"
	}
	return &node{kind: 't', raw: []byte(raw), off: -1}
}

func (n *node) isObject() bool { return n != nil && n.kind == '{' }
func (n *node) isArray() bool  { return n != nil && n.kind == '[' }

// text is a string's value; ok false when n is no string.
func (n *node) text() (string, bool) {
	if n == nil || n.kind != '"' {
		return "", false
	}
	s, err := jsontext.AppendUnquote(nil, n.raw)
	return string(s), err == nil
}

// number is a number's value, when it is an integer.
func (n *node) number() (int64, bool) {
	if n == nil || n.kind != '0' {
		return 0, false
	}
	var v int64
	for i, c := range n.raw {
		if c < '0' || c > '9' || i > 18 {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// get is the value of an object's member (the last, if the name repeats).
func (n *node) get(name string) *node {
	if !n.isObject() {
		return nil
	}
	for i := len(n.names) - 1; i >= 0; i-- {
		if n.names[i] == name {
			return n.vals[i]
		}
	}
	return nil
}

// set replaces a member's value where it is, or adds the member last.
func (n *node) set(name string, v *node) {
	for i := len(n.names) - 1; i >= 0; i-- {
		if n.names[i] == name {
			n.vals[i] = v
			return
		}
	}
	key, _ := jsontext.AppendQuote(nil, name)
	n.names = append(n.names, name)
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// del removes every member of that name.
func (n *node) del(name string) {
	j := 0
	for i := range n.names {
		if n.names[i] != name {
			n.names[j], n.keys[j], n.vals[j] = n.names[i], n.keys[i], n.vals[i]
			j++
		}
	}
	n.names, n.keys, n.vals = n.names[:j], n.keys[:j], n.vals[:j]
}

// position is the line and column of n in data, the text it was read
// from; 0, 0 for a value made here.
func (n *node) position(data []byte) (int, int) {
	if n.off < 0 {
		return 0, 0
	}
	i := n.off
	for i < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[i]) >= 0 {
		i++
	}
	return lineCol(data, i)
}

// kindName names a value's kind for an error.
func (n *node) kindName() string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	}
	return "null"
}

// parseJSON reads a JSON document whose top level is an object. Empty
// text (or only white space) is an empty object.
func parseJSON(data []byte) (*node, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return newObject(), nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	n, err := readNode(dec)
	if err == nil {
		end := dec.InputOffset()
		if _, err = dec.ReadToken(); err == io.EOF {
			err = nil
		} else if err == nil {
			extra := &node{off: end}
			line, col := extra.position(data)
			return nil, &DataError{Line: line, Col: col, Msg: "invalid JSON: more than one JSON value"}
		}
	}
	if err != nil {
		de := &DataError{Msg: "invalid JSON: " + strings.TrimPrefix(err.Error(), "jsontext: ")}
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			de.Line, de.Col = lineCol(data, se.ByteOffset)
			de.Msg = "invalid JSON: " + se.Err.Error()
		} else if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			de.Line, de.Col = lineCol(data, int64(len(data)))
			de.Msg = "invalid JSON: unexpected end of the file"
		}
		return nil, de
	}
	if !n.isObject() {
		return nil, &DataError{Line: 1, Msg: "want a JSON object at the top level, got " + n.kindName()}
	}
	return n, nil
}

func readNode(dec *jsontext.Decoder) (*node, error) {
	off := dec.InputOffset()
	switch k := dec.PeekKind(); k {
	case '{', '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		n := &node{kind: k, off: off}
		for dec.PeekKind() != k+2 { // '}' is '{'+2, ']' is '['+2
			if k == '{' {
				key, err := dec.ReadValue()
				if err != nil {
					return nil, err
				}
				name, err := jsontext.AppendUnquote(nil, key)
				if err != nil {
					return nil, err
				}
				n.names = append(n.names, string(name))
				n.keys = append(n.keys, bytes.Clone(key))
			}
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		_, err := dec.ReadToken()
		return n, err
	default:
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		return &node{kind: v.Kind(), raw: bytes.Clone(v), off: off}, nil
	}
}

// format writes n as JSON.stringify(n, null, indent) would: one member or
// element a line, empty objects and arrays as {} and [], and a newline at
// the end.
func (n *node) format(indent string) []byte {
	var b bytes.Buffer
	n.write(&b, indent, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (n *node) write(b *bytes.Buffer, indent string, depth int) {
	if n.kind != '{' && n.kind != '[' {
		b.Write(n.raw)
		return
	}
	open, close := byte('{'), byte('}')
	if n.kind == '[' {
		open, close = '[', ']'
	}
	b.WriteByte(open)
	if len(n.vals) == 0 {
		b.WriteByte(close)
		return
	}
	for i, v := range n.vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(indent, depth+1))
		if n.kind == '{' {
			b.Write(n.keys[i])
			b.WriteString(": ")
		}
		v.write(b, indent, depth+1)
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(indent, depth))
	b.WriteByte(close)
}

// indentOf is the indentation a JSON file uses: the white space before
// its first indented line, else two spaces.
func indentOf(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if ws := line[:len(line)-len(trimmed)]; ws != "" && trimmed != "" {
			if strings.Trim(ws, "\t") == "" || strings.Trim(ws, " ") == "" {
				return ws
			}
			return "  "
		}
	}
	return "  "
}
