package brief

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentx-cli/agentx/ledger"
)

func TestParseRef(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Ref
	}{
		{"docs/adr/ADR-42.md", Ref{Path: "docs/adr/ADR-42.md"}},
		{"docs/adr/ADR-42.md:12", Ref{Path: "docs/adr/ADR-42.md", From: 12, To: 12}},
		{"docs/adr/ADR-42.md:10-20", Ref{Path: "docs/adr/ADR-42.md", From: 10, To: 20}},
		{"notes:draft.md:1-20", Ref{Path: "notes:draft.md", From: 1, To: 20}}, // a colon in the name: with its lines
		{"a:b.md:3", Ref{Path: "a:b.md", From: 3, To: 3}},                     // the last colon splits
		{"../../etc/passwd", Ref{Path: "../../etc/passwd"}},                   // syntax only: Gather refuses it
		{"dir with space/f.md:1-2", Ref{Path: "dir with space/f.md", From: 1, To: 2}},
	} {
		got, err := ParseRef("--ref", tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
		assert.Equal(t, tt.in, got.String(), "round trip")
	}
	for _, bad := range []string{
		"", ":12", "f.md:", "f.md:0", "f.md:12-", "f.md:-3", "f.md:20-10", "f.md:1-2-3", "f.md:1a",
		"f.md:012", "f.md:99999999", "f.md:1,3", "x.md:abc", "notes:draft.md", "a:-", "a\x00b", "a\nb.md", "f\x1b[2J.md", "\xff.md",
		strings.Repeat("a", MaxPathLen+1),
	} {
		_, err := ParseRef("--ref", bad)
		var in *ledger.InputError
		require.True(t, errors.As(err, &in), "%q: %v", bad, err)
		assert.Equal(t, "--ref", in.Field, "the error names the flag")
		assert.True(t, strings.HasPrefix(err.Error(), "--ref "), err.Error())
		assert.NotEmpty(t, in.Hint())
	}
	refs, err := ParseRefs("refs", []string{"a.md", "b.md:3-4"})
	require.NoError(t, err)
	assert.Len(t, refs, 2)
	_, err = ParseRefs("refs", make([]string, MaxRefs+1))
	assert.ErrorContains(t, err, "at most 20")
}

func TestParseLines(t *testing.T) {
	for in, want := range map[string][2]int{"1": {1, 1}, "12-40": {12, 40}, "7-7": {7, 7}} {
		a, b, ok := ParseLines(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, [2]int{a, b}, in)
	}
	for _, bad := range []string{"", "0", "3-2", "a", "1-", "-1", "1-2-3", " 1", "1 "} {
		_, _, ok := ParseLines(bad)
		assert.False(t, ok, bad)
	}
}

// FuzzParseRef: a reference either parses into one that writes back as
// given, naming lines in order from 1 and a path with no control
// character, or is an input error naming the field.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"docs/a.md", "a.md:10-20", "a.md:3", "a:b", "a.md:", ":1", "a.md:0", "a.md:9-1", "\x00", "é.md:1-2", "a.md:1-9999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef("--ref", s)
		if err != nil {
			var in *ledger.InputError
			if !errors.As(err, &in) || in.Field != "--ref" {
				t.Fatalf("%q: %v is not an input error naming --ref", s, err)
			}
			return
		}
		if again, err := ParseRef("--ref", r.String()); err != nil || again != r {
			t.Fatalf("%q parsed to %+v, written back as %q, read again as %+v (%v)", s, r, r.String(), again, err)
		}
		if r.Path == "" || len(r.Path) > MaxPathLen || strings.ContainsAny(r.Path, "\x00\n\r") {
			t.Fatalf("%q: path %q", s, r.Path)
		}
		if !r.Whole() && (r.From < 1 || r.To < r.From || r.To > maxLineNo) {
			t.Fatalf("%q: lines %d-%d", s, r.From, r.To)
		}
		if !r.Whole() {
			a, b, ok := ParseLines(lines(r.From, r.To))
			if !ok || a != r.From || b != r.To {
				t.Fatalf("%q: lines do not read back", s)
			}
		}
	})
}
