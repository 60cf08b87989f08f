package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
)

// Scanner reads B from I. OK turns false, for good, at the first byte that
// is not in the expected form; every read after that returns a zero value.
type Scanner struct {
	B  []byte
	I  int
	OK bool
}

// New is a Scanner at the start of b.
func New(b []byte) *Scanner { return &Scanner{B: b, OK: true} }

// Peek reports whether l comes next.
func (s *Scanner) Peek(l string) bool {
	return s.OK && bytes.HasPrefix(s.B[s.I:], []byte(l))
}

// Opt consumes l if it comes next, and reports whether it did.
func (s *Scanner) Opt(l string) bool {
	if s.Peek(l) {
		s.I += len(l)
		return true
	}
	return false
}

// Lit consumes l, which must come next.
func (s *Scanner) Lit(l string) {
	if !s.Opt(l) {
		s.OK = false
	}
}

// Uint reads a JSON number in plain digits (no sign, fraction or
// exponent, no leading zero) that fits an int64.
func (s *Scanner) Uint() int64 {
	if !s.OK {
		return 0
	}
	j, n := s.I, int64(0)
	for ; j < len(s.B) && s.B[j] >= '0' && s.B[j] <= '9'; j++ {
		d := int64(s.B[j] - '0')
		if n > (math.MaxInt64-d)/10 {
			s.OK = false // past int64
			return 0
		}
		n = n*10 + d
	}
	if j == s.I || j-s.I > 1 && s.B[s.I] == '0' {
		s.OK = false
		return 0
	}
	s.I = j
	return n
}

// Int is Uint, for what must fit an int.
func (s *Scanner) Int() int {
	n := s.Uint()
	if n > int64(int(^uint(0)>>1)) {
		s.OK = false
		return 0
	}
	return int(n)
}

// Raw reads a string of printable ASCII without escapes, quotes included,
// and returns what is between them (a slice of B).
func (s *Scanner) Raw() []byte {
	if !s.OK || s.I >= len(s.B) || s.B[s.I] != '"' {
		s.OK = false
		return nil
	}
	from := s.I + 1
	j := from + PlainRun(s.B[from:])
	if j == len(s.B) || s.B[j] != '"' {
		s.OK = false
		return nil
	}
	s.I = j + 1
	return s.B[from:j]
}

// PlainRun is how many of b's first bytes are Plain. It looks at eight
// bytes a step: the strings of a long file are most of what its reader
// looks at.
func PlainRun(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// a high bit in each byte that is below 0x20, 0x7f or above, '"'
		// or '\\'; the borrows and carries of the arithmetic only ever
		// mark a byte above one rightly marked, so the lowest mark is right
		q, bs := x^('"'*ones), x^('\\'*ones)
		m := (x-0x20*ones)&^x | x | (x + ones) | (q-ones)&^q | (bs-ones)&^bs
		if m &= highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && Plain[b[i]] {
		i++
	}
	return i
}

// Str is Raw, as a string.
func (s *Scanner) Str() string { return string(s.Raw()) }

// Same is Str for a string that is often the one read last time at the
// same place (*last): then that one is returned, without a copy.
func (s *Scanner) Same(last *string) string {
	v := s.Raw()
	if string(v) != *last {
		*last = string(v)
	}
	return *last
}

// Done reports whether the whole of B was read in the expected form.
func (s *Scanner) Done() bool { return s.OK && s.I == len(s.B) }

// Plain is the bytes Raw reads in a string: printable ASCII but '"' and
// '\\', which JSON writes as they are.
var Plain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
