package workflow

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/words"

	"github.com/BurntSushi/toml"
)

// isAgentName reports the shape of an agent name: lowercase letters,
// digits and '-'.
func isAgentName(s string) bool { return words.Slug(s, "-") }

const agentNameHint = `agent names are lowercase letters, digits and '-', e.g. "product-manager"`

// doc is one TOML file being decoded: the decoder's metadata, the key line index and
// the problems found so far. Every key is decoded on its own (through toml.Primitive),
// so one bad value does not hide the others.
type doc struct {
	file     string
	md       toml.MetaData
	ix       *keyIndex
	errs     Errors
	reported map[string]bool // plain paths with a reported problem
}

// parseDoc decodes the top level of data. It returns false after a syntax error,
// which is then the only problem reported.
func parseDoc(file string, data []byte) (*doc, map[string]toml.Primitive, bool) {
	d := &doc{file: file, reported: map[string]bool{}}
	// The TOML decoder's cost grows far faster than a file's size with
	// deep nesting (8,000 nested inline tables in 34 KB took 1.3 GB and
	// 20 s): what no workflow or config needs is refused before it.
	if len(data) > MaxFileBytes {
		d.errs = append(d.errs, &Error{File: file, Msg: fmt.Sprintf("the file is %d bytes: agentx reads a config or workflow file of at most %d", len(data), MaxFileBytes),
			Hint: "a workflow or config.toml is a few kilobytes: check that this is the right file"})
		return d, nil, false
	}
	switch line, over := scanBounds(data, MaxNesting, MaxItems); over {
	case overNesting:
		d.errs = append(d.errs, &Error{File: file, Line: line, Msg: fmt.Sprintf("arrays, inline tables or dotted keys nested more than %d deep: agentx reads no deeper", MaxNesting),
			Hint: "flatten the value: a workflow or config.toml nests two or three levels"})
		return d, nil, false
	case overItems:
		d.errs = append(d.errs, &Error{File: file, Line: line, Msg: fmt.Sprintf("more than %d keys, tables and array elements: agentx reads no more", MaxItems),
			Hint: "a workflow or config.toml holds a few hundred: check that this is the right file"})
		return d, nil, false
	}
	var top map[string]toml.Primitive
	md, err := toml.Decode(string(data), &top)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			d.errs = append(d.errs, &Error{File: file, Line: pe.Position.Line, Key: pe.LastKey, Msg: "invalid TOML: " + pe.Message})
		} else {
			d.errs = append(d.errs, &Error{File: file, Msg: "invalid TOML: " + tomlMsg(err)})
		}
		return d, nil, false
	}
	d.md = md
	d.ix = indexKeys(string(data))
	return d, top, true
}

// MaxFileBytes, MaxNesting and MaxItems bound what agentx reads of a
// config or workflow file (see parseDoc). MaxItems counts the keys, tables
// and array elements (each "=", "[", "{" and "," outside strings and
// comments): the decoder and agentx's checks spend about 3 KB on each, so
// a 1 MiB file of a hundred thousand tiny tables took 800 MB and seconds.
const (
	MaxFileBytes = 1 << 20
	MaxNesting   = 32
	MaxItems     = 10_000
)

// What scanBounds found over a bound.
const (
	overNone = iota
	overNesting
	overItems
)

// nestingWithin reports whether arrays and inline tables in TOML text data
// nest at most max deep, and if not, the line where they go deeper.
func nestingWithin(data []byte, max int) (line int, ok bool) {
	line, over := scanBounds(data, max, math.MaxInt)
	return line, over == overNone
}

// scanBounds reports whether arrays, inline tables and dotted keys (a.b.c,
// [a.b.c]) in TOML text data nest more than maxDepth deep (overNesting) or the file holds more than
// maxItems keys, tables and array elements (overItems), and the line where
// it goes over. It skips comments and strings (basic, literal, and their
// multi-line forms); a string left open ends the scan (the decoder reports
// it).
func scanBounds(data []byte, maxDepth, maxItems int) (line, over int) {
	depth, items, line := 0, 0, 1
	dots := 0 // in the key being read: a.b.c = 1 and [a.b.c] nest as deep as {a={b={c=1}}}
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
			dots = 0
		case '.':
			if dots++; dots > maxDepth {
				return line, overNesting
			}
		case '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			end, lines, closed := stringEnd(data, i)
			line += lines
			if !closed {
				return 0, overNone
			}
			i = end
		case '[', '{':
			dots = 0
			if depth++; depth > maxDepth {
				return line, overNesting
			}
			if items++; items > maxItems {
				return line, overItems
			}
		case '=', ',':
			dots = 0
			if items++; items > maxItems {
				return line, overItems
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return 0, overNone
}

// stringEnd finds the end of the TOML string opening at data[i] (a quote):
// the index of its last quote, the newlines inside it, and whether it is
// closed.
func stringEnd(data []byte, i int) (end, lines int, closed bool) {
	q := data[i]
	n := 1
	if i+2 < len(data) && data[i+1] == q && data[i+2] == q {
		n = 3 // multi-line
	}
	for j := i + n; j < len(data); j++ {
		switch c := data[j]; {
		case c == '\\' && q == '"':
			if j+1 < len(data) && data[j+1] == '\n' {
				lines++
			}
			j++ // an escaped character
		case c == '\n':
			if n == 1 {
				return j, lines, false // a one-line string ends at its line
			}
			lines++
		case c == q && (n == 1 || j+2 < len(data) && data[j+1] == q && data[j+2] == q):
			return j + n - 1, lines, true
		}
	}
	return len(data), lines, false
}

// addf records a problem at the line of the indexed path, under the display key of
// the plain path.
func (d *doc) addf(path, plain []string, hint, format string, args ...any) {
	d.reported[strings.Join(plain, sep)] = true
	d.errs = append(d.errs, &Error{
		File: d.file,
		Line: d.ix.line(path...),
		Key:  displayKey(plain),
		Msg:  fmt.Sprintf(format, args...),
		Hint: hint,
	})
}

// field binds a TOML key to the Go value it decodes into.
type field struct {
	key  string
	dst  any    // pointer
	want string // "a string", for messages
}

// decodeTable decodes the known keys of a table into their fields and reports the
// unknown ones. It returns the keys that decoded successfully.
func (d *doc) decodeTable(t map[string]toml.Primitive, path, plain []string, fields []field) map[string]bool {
	defined := map[string]bool{}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.key
	}
	for _, k := range sortedKeys(t) {
		kp, pp := with(path, k), with(plain, k)
		i := slices.Index(names, k)
		if i < 0 {
			d.unknown(kp, pp, names)
			continue
		}
		if err := d.md.PrimitiveDecode(t[k], fields[i].dst); err != nil {
			d.badValue(t[k], kp, pp, fields[i].want, err)
			continue
		}
		defined[k] = true
	}
	return defined
}

// table decodes a primitive that must be a TOML table.
func (d *doc) table(p toml.Primitive, path, plain []string) (map[string]toml.Primitive, bool) {
	var raw any
	if err := d.md.PrimitiveDecode(p, &raw); err != nil {
		d.addf(path, plain, "", "%s", tomlMsg(err))
		return nil, false
	}
	if _, ok := raw.(map[string]any); !ok {
		d.addf(path, plain, "", "want a table, got %s", typeName(raw))
		return nil, false
	}
	var t map[string]toml.Primitive
	if err := d.md.PrimitiveDecode(p, &t); err != nil {
		d.addf(path, plain, "", "%s", tomlMsg(err))
		return nil, false
	}
	return t, true
}

func (d *doc) unknown(path, plain, known []string) {
	d.addf(path, plain, suggest(plain[len(plain)-1], known, "keys"), "unknown key")
}

func (d *doc) badValue(p toml.Primitive, path, plain []string, want string, err error) {
	var pe toml.ParseError
	if errors.As(err, &pe) { // from an UnmarshalText method: its message is the point
		d.addf(path, plain, "", "%s", pe.Message)
		return
	}
	var raw any
	if d.md.PrimitiveDecode(p, &raw) == nil {
		if got := typeName(raw); got != want {
			d.addf(path, plain, "", "want %s, got %s", want, got)
			return
		}
	}
	d.addf(path, plain, "", "%s", tomlMsg(err))
}

// checkUndecoded reports keys the decoder saw but nothing consumed and no reported
// problem explains. It is a safety net: decodeTable already reports unknown keys.
func (d *doc) checkUndecoded() {
	for _, k := range d.md.Undecoded() {
		if d.covered(k) {
			continue
		}
		d.reported[strings.Join(k, sep)] = true
		lines := d.ix.plainLines(k...)
		if len(lines) == 0 {
			lines = []int{0}
		}
		for _, l := range lines {
			d.errs = append(d.errs, &Error{File: d.file, Line: l, Key: k.String(), Msg: "unknown key"})
		}
	}
}

func (d *doc) covered(k toml.Key) bool {
	for n := 1; n <= len(k); n++ {
		if d.reported[strings.Join(k[:n], sep)] {
			return true
		}
	}
	return false
}

// result returns the problems found, sorted, or nil.
func (d *doc) result() error {
	if len(d.errs) == 0 {
		return nil
	}
	sortErrors(d.errs)
	return d.errs
}

func with(path []string, more ...string) []string {
	return append(append(make([]string, 0, len(path)+len(more)), path...), more...)
}

func displayKey(plain []string) string { return toml.Key(plain).String() }

// tomlMsg strips the decoder's "toml: line N (last key ...): " prefix.
func tomlMsg(err error) string {
	msg := err.Error()
	if !strings.HasPrefix(msg, "toml: ") {
		return msg
	}
	msg = strings.TrimPrefix(msg, "toml: ")
	if strings.HasPrefix(msg, "line ") || strings.HasPrefix(msg, "(last key ") {
		if i := strings.Index(msg, "): "); i >= 0 {
			return msg[i+3:]
		}
	}
	return msg
}

// typeName names the TOML type of a decoded value the way messages use it.
func typeName(v any) string {
	switch v := v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a datetime"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		for _, e := range v {
			if _, ok := e.(string); !ok {
				return "an array containing " + typeName(e)
			}
		}
		return "an array of strings"
	}
	return fmt.Sprintf("%T", v)
}

// suggest returns a hint naming the known name closest to k, or listing them all
// ("known <what>: a, b").
func suggest(k string, known []string, what string) string {
	switch c := words.Closest(k, known); {
	case c != "" && c != k && strings.EqualFold(c, k):
		return fmt.Sprintf("did you mean %q? names are case-sensitive", c)
	case c != "":
		return fmt.Sprintf("did you mean %q?", c)
	case len(known) == 0:
		return ""
	}
	return "known " + what + ": " + strings.Join(known, ", ")
}
