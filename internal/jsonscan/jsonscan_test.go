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
