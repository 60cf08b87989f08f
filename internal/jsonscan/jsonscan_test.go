package jsonscan

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScanner(t *testing.T) {
	s := New([]byte(`{"n":42,"s":"plain text","z":0}`))
	s.Lit(`{"n":`)
	assert.Equal(t, 42, s.Int())
	assert.True(t, s.Opt(`,"s":`))
	assert.Equal(t, "plain text", s.Str())
	assert.False(t, s.Opt(`,"x":`), "what does not come next is not consumed")
	s.Lit(`,"z":`)
	assert.Equal(t, int64(0), s.Uint())
	s.Lit(`}`)
	assert.True(t, s.Done())

	for _, tt := range []struct {
		name string
		in   string
		read func(*Scanner)
	}{
		{"a leading zero", `01`, func(s *Scanner) { s.Uint() }},
		{"a sign", `-1`, func(s *Scanner) { s.Uint() }},
		{"a fraction", `1.5`, func(s *Scanner) { s.Uint(); s.Lit("") }},
		{"no digits", `x`, func(s *Scanner) { s.Uint() }},
		{"too large", `99999999999999999999`, func(s *Scanner) { s.Uint() }},
		{"an escape", `"a\"b"`, func(s *Scanner) { s.Raw() }},
		{"a control byte", "\"a\tb\"", func(s *Scanner) { s.Raw() }},
		{"non-ASCII", `"é"`, func(s *Scanner) { s.Raw() }},
		{"unterminated", `"abc`, func(s *Scanner) { s.Raw() }},
		{"not a string", `abc`, func(s *Scanner) { s.Raw() }},
		{"another literal", `{"b":`, func(s *Scanner) { s.Lit(`{"a":`) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New([]byte(tt.in))
			tt.read(s)
			assert.False(t, s.Done(), "%q", tt.in)
		})
	}

	s = New([]byte(`"x"`))
	s.OK = false
	assert.Empty(t, s.Str(), "nothing is read once the form is broken")
	assert.False(t, s.Opt(`"x"`))

	var last string
	s = New([]byte(`"ab""ab""cd"`))
	a, b, c := s.Same(&last), s.Same(&last), s.Same(&last)
	assert.Equal(t, []string{"ab", "ab", "cd"}, []string{a, b, c})
	assert.True(t, s.Done())
}

// plainRun is PlainRun a byte at a time.
func plainRun(b []byte) int {
	i := 0
	for i < len(b) && Plain[b[i]] {
		i++
	}
	return i
}

// TestPlainRun: eight bytes a step find what a byte at a time finds: each
// byte value at each place of a word, after a plain run or another
// special byte, and near the end of the input.
func TestPlainRun(t *testing.T) {
	for n := range 20 {
		for pos := range n {
			for c := range 256 {
				for _, fill := range []byte{'a', '~', ' ', 0x7f, 0xff, 0} {
					b := make([]byte, n)
					for i := range b {
						b[i] = 'a'
					}
					for i := pos + 1; i < n; i++ {
						b[i] = fill // what follows must not matter
					}
					b[pos] = byte(c)
					if got, want := PlainRun(b), plainRun(b); got != want {
						t.Fatalf("PlainRun(%q) = %d, want %d", b, got, want)
					}
				}
			}
		}
	}
}

// FuzzPlainRun: whatever the bytes, eight at a time is one at a time.
func FuzzPlainRun(f *testing.F) {
	f.Add([]byte(`CLR-42-001","issueNumber":42`))
	f.Add([]byte("Retry \x1f budget \x7f\xff\"\\"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := PlainRun(b), plainRun(b); got != want {
			t.Fatalf("PlainRun(%q) = %d, want %d", b, got, want)
		}
	})
}

// TestUint: digits read as ParseInt reads them, to the last int64.
func TestUint(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false}, {"92233720368547758070", 0, false}, {"00", 0, false}, {"", 0, false},
	} {
		s := New([]byte(tt.in))
		assert.Equal(t, tt.want, s.Uint(), tt.in)
		assert.Equal(t, tt.ok, s.Done(), tt.in)
	}
}
