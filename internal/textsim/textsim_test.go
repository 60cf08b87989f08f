package textsim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWords(t *testing.T) {
	assert.Equal(t, []string{"use", "postgresql", "sqlite", "local", "dev"}, Words("Should we use PostgreSQL or SQLite for local dev?"))
	assert.Empty(t, Words("  ?! the of "))
	assert.Equal(t, []string{"größe", "42"}, Words("Größe: 42"))
}

func TestJaccard(t *testing.T) {
	long := func(n, from int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "word%d ", from+i)
		}
		return b.String()
	}
	tests := []struct {
		name string
		a, b string
		want float64
	}{
		{"identical", "PostgreSQL or SQLite for local dev?", "PostgreSQL or SQLite for local dev?", 1},
		{"case and punctuation do not matter", "PostgreSQL or SQLite, for local dev?", "postgresql or sqlite for LOCAL dev", 1},
		{"word order does not matter", "sqlite or postgresql for dev local", "PostgreSQL or SQLite for local dev?", 1},
		{"one word of five changed", "PostgreSQL or SQLite for local dev?", "PostgreSQL or SQLite for staging dev?", 3.0 / 5},
		{"nothing shared", "Which cache eviction policy?", "PostgreSQL or SQLite for local dev?", 0},
		{"stopwords alone are not shared meaning", "what should we do with the cache", "what should we do with the queue", 0},
		{"empty is similar to nothing", "", "", 0},
		{"exact below K", long(20, 0), long(20, 10), 10.0 / 30},
		{"long identical texts", long(200, 0), long(200, 0), 1},
		{"long disjoint texts", long(200, 0), long(200, 1000), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Jaccard(Of(tt.a), Of(tt.b))
			assert.InDelta(t, tt.want, got, 1e-9)
			ha, hb := Of(tt.a).AppendHex(nil), Of(tt.b).AppendHex(nil)
			assert.Equal(t, got, JaccardHex(ha, hb), "the text form gives the same figure")
			for _, th := range []float64{0.01, 0.3, 1.0 / 3, 0.6, 0.8, 1} {
				sim, ok := SimilarHex(ha, hb, th)
				assert.Equal(t, got > 0 && got >= th, ok, "SimilarHex at %v", th)
				if ok {
					assert.InDelta(t, got, sim, 1e-9)
				}
			}
			assert.InDelta(t, got, Jaccard(Of(tt.b), Of(tt.a)), 1e-9, "symmetric")
		})
	}
	// A bottom-k estimate of a large overlap stays near the truth.
	got := Jaccard(Of(long(300, 0)), Of(long(300, 30)))
	assert.InDelta(t, 270.0/330, got, 0.2)
	assert.LessOrEqual(t, Of(long(300, 0)).Len(), K)
}

// TestJaccardDoesNotAllocate: decision memory compares a new question
// with every decision of the workspace.
func TestJaccardDoesNotAllocate(t *testing.T) {
	a, b := Of("PostgreSQL or SQLite for local dev?"), Of("PostgreSQL or SQLite for staging?")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = Jaccard(a, b) }))
}

// TestHex: a sketch's text form sorts as its hashes do, reads back as the
// sketch, and is refused in any other form.
func TestHex(t *testing.T) {
	for _, text := range []string{"PostgreSQL or SQLite for local dev?", "", strings.Repeat("word ", 3) + "Größe 42"} {
		s := Of(text)
		h := s.AppendHex(nil)
		assert.Len(t, h, 8*s.Len())
		back, ok := ParseHex(h)
		assert.True(t, ok)
		assert.Equal(t, s, back)
		for i := 1; i < s.Len(); i++ {
			assert.Less(t, string(h[8*(i-1):8*i]), string(h[8*i:8*i+8]), "ascending as text")
		}
	}
	for _, bad := range []string{"0000000", "0000000g", "0000000A", "0000000200000001", "0000000100000001"} {
		_, ok := ParseHex([]byte(bad))
		assert.False(t, ok, bad)
	}
	assert.Zero(t, JaccardHex([]byte("0000"), []byte("0000")), "too short for a hash")
}
