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

// AppendHex appends the sketch in its text form: each hash as eight
// lowercase hex digits, most significant first, in the sketch's
// (ascending) order, so that the text sorts as the hashes do. JaccardHex
// compares two sketches in that form without decoding them.
func (s Sig) AppendHex(b []byte) []byte {
	const digits = "0123456789abcdef"
	for i := range s.Len() {
		h := s.at(i)
		for shift := 28; shift >= 0; shift -= 4 {
			b = append(b, digits[h>>uint(shift)&0xf])
		}
	}
	return b
}

// hexAt is the i-th hash of a sketch in text form, as a number that
// orders as the hash does (its eight digits read as one big-endian word).
func hexAt(s []byte, i int) uint64 { return binary.BigEndian.Uint64(s[8*i:]) }

// JaccardHex is Jaccard of two sketches in text form (AppendHex): the
// same figure, with no decoding. Text of another form (a length that is
// not a multiple of eight, digits out of order) gives a figure of no
// meaning, never a panic.
func JaccardHex(a, b []byte) float64 {
	nx, ny := len(a)/8, len(b)/8
	if nx == 0 || ny == 0 {
		return 0
	}
	limit := ^uint64(0)
	if nx >= K {
		limit = min(limit, hexAt(a, nx-1))
	}
	if ny >= K {
		limit = min(limit, hexAt(b, ny-1))
	}
	union, both := 0, 0
	for i, j := 0, 0; union < K; union++ {
		var h uint64
		shared := false
		switch {
		case i < nx && j < ny && hexAt(a, i) == hexAt(b, j):
			h, shared = hexAt(a, i), true
			i++
			j++
		case i < nx && (j >= ny || hexAt(a, i) < hexAt(b, j)):
			h = hexAt(a, i)
			i++
		case j < ny:
			h = hexAt(b, j)
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

// ParseHex reads a sketch in text form (AppendHex); ok false for text of
// another form.
func ParseHex(text []byte) (s Sig, ok bool) {
	if len(text)%8 != 0 || len(text)/8 > K {
		return nil, false
	}
	if len(text) == 0 {
		return nil, true
	}
	s = make(Sig, len(text)/2)
	var last uint32
	for i := range len(text) / 8 {
		var h uint32
		for _, c := range text[8*i : 8*i+8] {
			switch {
			case c >= '0' && c <= '9':
				h = h<<4 | uint32(c-'0')
			case c >= 'a' && c <= 'f':
				h = h<<4 | uint32(c-'a'+10)
			default:
				return nil, false
			}
		}
		if i > 0 && h <= last {
			return nil, false
		}
		last = h
		binary.LittleEndian.PutUint32(s[4*i:], h)
	}
	return s, true
}

// SimilarHex reports whether two sketches in text form are at least t
// alike (JaccardHex(a, b) >= t, and more than 0), with the figure when
// they are. It gives up as soon as the words left cannot reach t: most
// pairs of questions share a word or two, and are told apart in a few
// steps.
func SimilarHex(a, b []byte, t float64) (float64, bool) {
	nx, ny := len(a)/8, len(b)/8
	if nx == 0 || ny == 0 || nx >= K || ny >= K {
		j := JaccardHex(a, b) // a full sketch's union is estimated: no shortcut
		return j, j > 0 && j >= t
	}
	// exact sets: |A∩B| / (|A|+|B|-|A∩B|) >= t when |A∩B| >= need
	need := t*float64(nx+ny)/(1+t) - 1e-9 // what rounding could take from the exact figure
	both := 0
	for i, j := 0, 0; i < nx && j < ny; {
		if float64(both+min(nx-i, ny-j)) < need {
			return 0, false
		}
		x, y := hexAt(a, i), hexAt(b, j)
		switch {
		case x == y:
			both++
			i++
			j++
		case x < y:
			i++
		default:
			j++
		}
	}
	if both == 0 || float64(both) < need {
		return 0, false
	}
	j := float64(both) / float64(nx+ny-both)
	return j, j >= t
}
