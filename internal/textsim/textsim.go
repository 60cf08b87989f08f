package textsim

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// K is the most word hashes a sketch keeps. Texts of up to K distinct words
// are kept whole, so their similarity is exact; longer texts keep the K
// smallest hashes (a bottom-k sketch), whose similarity is an unbiased
// estimate.
const K = 32

// Sig is a sketch: up to K distinct 32-bit word hashes, ascending, packed
// little-endian. As a []byte it is written to JSON as base64.
type Sig []byte

// stopwords carry no meaning of their own; two questions sharing only these
// are not the same question.
// The set is built when first needed.
var stopwords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be but by can could do does
		for from has have how i if in into is it its me my of on or our shall should so
		that the their them then there these this those to us was we were what when
		where which who why will with would you your`) {
		m[w] = true
	}
	return m
})

// Words splits text into lower-case words (runs of letters and digits),
// without stopwords, in order of appearance, duplicates kept.
func Words(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	stops := stopwords()
	out := fields[:0]
	for _, w := range fields {
		if !stops[w] {
			out = append(out, w)
		}
	}
	return out
}

// Of returns the sketch of text's word set; nil when it has no words.
func Of(text string) Sig {
	words := Words(text)
	if len(words) == 0 {
		return nil
	}
	hs := make([]uint32, 0, len(words))
	for _, w := range words {
		h := fnv.New32a()
		_, _ = h.Write([]byte(w))
		hs = append(hs, h.Sum32())
	}
	slices.Sort(hs)
	hs = slices.Compact(hs)
	if len(hs) > K {
		hs = hs[:K]
	}
	out := make(Sig, 4*len(hs))
	for i, h := range hs {
		binary.LittleEndian.PutUint32(out[4*i:], h)
	}
	return out
}

// at is the sketch's i-th hash.
func (s Sig) at(i int) uint32 { return binary.LittleEndian.Uint32(s[4*i:]) }

// Len is the number of word hashes in the sketch.
func (s Sig) Len() int { return len(s) / 4 }

// Jaccard is the similarity of the two word sets: |A ∩ B| / |A ∪ B|,
// from 0 (nothing shared) to 1 (the same words). It is computed over the K
// smallest hashes of the union, so it is exact when the union has at most K
// words. An empty sketch is similar to nothing.
func Jaccard(a, b Sig) float64 {
	// Read in place, with no copy: decision memory compares a question
	// with every decision of the workspace.
	nx, ny := a.Len(), b.Len()
	if nx == 0 || ny == 0 {
		return 0
	}
	// A full sketch may have dropped hashes above its largest one, so the
	// union is only known up to the smaller of the full sketches' maxima.
	limit := ^uint32(0)
	if nx >= K {
		limit = min(limit, a.at(nx-1))
	}
	if ny >= K {
		limit = min(limit, b.at(ny-1))
	}
	union, both := 0, 0
	for i, j := 0, 0; union < K; union++ {
		var h uint32
		shared := false
		switch {
		case i < nx && j < ny && a.at(i) == b.at(j):
			h, shared = a.at(i), true
			i++
			j++
		case i < nx && (j >= ny || a.at(i) < b.at(j)):
			h = a.at(i)
			i++
		case j < ny:
			h = b.at(j)
			j++
		default:
			return float64(both) / float64(union)
		}
		if h > limit {
			break
		}
		if shared {
			both++
		}
	}
	return float64(both) / float64(union)
}
