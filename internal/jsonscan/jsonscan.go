package jsonscan

import (
	"bytes"
	"strconv"
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
	j := s.I
	for j < len(s.B) && s.B[j] >= '0' && s.B[j] <= '9' {
		j++
	}
	d := s.B[s.I:j]
	n, err := strconv.ParseInt(string(d), 10, 64)
	if len(d) == 0 || len(d) > 1 && d[0] == '0' || err != nil {
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
	if !s.Opt(`"`) {
		s.OK = false
		return nil
	}
	j := s.I
	for j < len(s.B) && Plain[s.B[j]] {
		j++
	}
	if j == len(s.B) || s.B[j] != '"' {
		s.OK = false
		return nil
	}
	v := s.B[s.I:j]
	s.I = j + 1
	return v
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
