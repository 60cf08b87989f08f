package workflow

import (
	"strconv"
	"strings"
)

// The TOML decoder does not report where a key is, so keyIndex scans the (already
// valid) file text once and remembers the line of every table header and every key.
//
// Paths are key segments joined by sep. An element of an array of tables gets an extra
// segment "#n" (n counting from 0), so the key "agent" of the third [[steps]] is
// "steps", "#2", "agent". Keys inside inline tables are not indexed; a lookup falls
// back to the nearest enclosing key that is.

const sep = "\x00"

type keyIndex struct {
	lines    map[string]int   // indexed path -> line of its first definition
	explicit map[string][]int // plain path (no #n) -> lines where it is written
	implicit map[string]int   // plain path -> first line of anything under it
}

func idx(n int) string { return "#" + strconv.Itoa(n) }

// line returns the line of path, or of its longest indexed prefix; 0 if none.
func (ix *keyIndex) line(path ...string) int {
	for n := len(path); n > 0; n-- {
		if l, ok := ix.lines[strings.Join(path[:n], sep)]; ok {
			return l
		}
	}
	return 0
}

// plainLines returns every line where the plain key path is written, or the first line
// of its contents when it is only implied (an intermediate table or dotted key).
func (ix *keyIndex) plainLines(path ...string) []int {
	p := strings.Join(path, sep)
	if ls := ix.explicit[p]; len(ls) > 0 {
		return ls
	}
	if l, ok := ix.implicit[p]; ok {
		return []int{l}
	}
	return nil
}

func (ix *keyIndex) add(indexed, plain []string, line int, explicit bool) {
	for n := 1; n <= len(indexed); n++ {
		k := strings.Join(indexed[:n], sep)
		if _, ok := ix.lines[k]; !ok {
			ix.lines[k] = line
		}
	}
	for n := 1; n <= len(plain); n++ {
		k := strings.Join(plain[:n], sep)
		if _, ok := ix.implicit[k]; !ok {
			ix.implicit[k] = line
		}
	}
	if explicit {
		k := strings.Join(plain, sep)
		ix.explicit[k] = append(ix.explicit[k], line)
	}
}

func indexKeys(src string) *keyIndex {
	ix := &keyIndex{lines: map[string]int{}, explicit: map[string][]int{}, implicit: map[string]int{}}
	arrays := map[string]int{} // indexed path of an array of tables -> elements so far
	var table, tablePlain []string
	walkTOML(src, func(h Header) {
		table, tablePlain = nil, h.Keys
		for j, k := range h.Keys {
			table = append(table, k)
			cur := strings.Join(table, sep)
			if h.Array && j == len(h.Keys)-1 {
				n := arrays[cur]
				arrays[cur] = n + 1
				table = append(table, idx(n))
			} else if n, ok := arrays[cur]; ok {
				table = append(table, idx(n-1))
			}
		}
		ix.add(table, tablePlain, h.Line, true)
	}, func(keys []string, line int) {
		full := append(append([]string(nil), table...), keys...)
		plain := append(append([]string(nil), tablePlain...), keys...)
		ix.add(full, plain, line, true)
	})
	return ix
}

// Header is a table header in TOML text: [a.b] or [[a.b]].
type Header struct {
	Keys  []string // the header's key, unquoted: ["mcp_servers", "agentx"]
	Line  int      // its line, from 1
	Array bool     // [[...]]: an element of an array of tables
}

// Headers returns the table headers of TOML text in the order written.
// Lines inside multi-line strings, arrays and inline tables are values,
// never headers. Meant for text the TOML decoder accepted.
func Headers(src string) []Header {
	var hs []Header
	walkTOML(src, func(h Header) { hs = append(hs, h) }, func([]string, int) {})
	return hs
}

// walkTOML scans TOML text once, calling header for every table header and
// key for every key written (with its line), keys relative to the table.
func walkTOML(src string, header func(Header), key func(keys []string, line int)) {
	s := &scanner{src: strings.TrimPrefix(src, "\ufeff"), line: 1}
	for {
		s.skipBlank()
		if s.eof() {
			return
		}
		line := s.line
		if s.src[s.i] == '[' {
			s.i++
			array := !s.eof() && s.src[s.i] == '['
			if array {
				s.i++
			}
			keys := s.readKey()
			s.skipLine()
			if len(keys) > 0 {
				header(Header{Keys: keys, Line: line, Array: array})
			}
			continue
		}
		keys := s.readKey()
		s.skipSpace()
		if len(keys) == 0 || s.eof() || s.src[s.i] != '=' {
			s.skipLine()
			continue
		}
		s.i++
		s.skipValue()
		key(keys, line)
	}
}

type scanner struct {
	src  string
	i    int
	line int
}

func (s *scanner) eof() bool { return s.i >= len(s.src) }

func (s *scanner) skipSpace() {
	for !s.eof() && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

// skipBlank skips whitespace, newlines and comments.
func (s *scanner) skipBlank() {
	for !s.eof() {
		switch s.src[s.i] {
		case ' ', '\t', '\r':
			s.i++
		case '\n':
			s.i++
			s.line++
		case '#':
			s.skipLine()
		default:
			return
		}
	}
}

// skipLine moves to the next newline (not consuming it).
func (s *scanner) skipLine() {
	for !s.eof() && s.src[s.i] != '\n' {
		s.i++
	}
}

// readKey reads a possibly dotted, possibly quoted key.
func (s *scanner) readKey() []string {
	var keys []string
	for {
		s.skipSpace()
		if s.eof() {
			return keys
		}
		switch c := s.src[s.i]; {
		case c == '"':
			start := s.i
			s.i++
			for !s.eof() && s.src[s.i] != '"' && s.src[s.i] != '\n' {
				if s.src[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			if s.eof() || s.src[s.i] != '"' {
				return nil
			}
			s.i++
			raw := s.src[start:s.i]
			if k, err := strconv.Unquote(raw); err == nil {
				keys = append(keys, k)
			} else {
				keys = append(keys, raw[1:len(raw)-1])
			}
		case c == '\'':
			start := s.i + 1
			end := strings.IndexAny(s.src[start:], "'\n")
			if end < 0 || s.src[start+end] != '\'' {
				return nil
			}
			keys = append(keys, s.src[start:start+end])
			s.i = start + end + 1
		case isBare(c):
			start := s.i
			for !s.eof() && isBare(s.src[s.i]) {
				s.i++
			}
			keys = append(keys, s.src[start:s.i])
		default:
			return nil
		}
		s.skipSpace()
		if s.eof() || s.src[s.i] != '.' {
			return keys
		}
		s.i++
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// skipValue moves past a value, which may span lines (arrays, inline tables,
// multi-line strings), stopping at the newline that ends it.
func (s *scanner) skipValue() {
	depth := 0
	for !s.eof() {
		switch c := s.src[s.i]; c {
		case '\n':
			if depth <= 0 {
				return
			}
			s.line++
			s.i++
		case '#':
			s.skipLine()
		case '"', '\'':
			s.skipString(c)
		case '[', '{':
			depth++
			s.i++
		case ']', '}':
			depth--
			s.i++
		default:
			s.i++
		}
	}
}

func (s *scanner) skipString(q byte) {
	triple := strings.Repeat(string(q), 3)
	if strings.HasPrefix(s.src[s.i:], triple) {
		s.i += 3
		for !s.eof() {
			switch {
			case q == '"' && s.src[s.i] == '\\':
				s.i++
				if !s.eof() && s.src[s.i] == '\n' {
					s.line++
				}
				s.i++
			case strings.HasPrefix(s.src[s.i:], triple):
				s.i += 3
				for n := 0; n < 2 && !s.eof() && s.src[s.i] == q; n++ { // up to two quotes may close the content
					s.i++
				}
				return
			case s.src[s.i] == '\n':
				s.line++
				s.i++
			default:
				s.i++
			}
		}
		return
	}
	s.i++
	for !s.eof() && s.src[s.i] != '\n' {
		switch {
		case q == '"' && s.src[s.i] == '\\':
			s.i += 2
		case s.src[s.i] == q:
			s.i++
			return
		default:
			s.i++
		}
	}
}
