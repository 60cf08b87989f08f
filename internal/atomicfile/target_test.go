package atomicfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// op is one call a fill makes: Write(b), or CopyFrom the source file at
// off for n bytes when b is nil.
type op struct {
	b      []byte
	off, n int64
}

// runTarget writes ops through a Target, copying spans from a file holding
// src: in patch mode to a file that holds old, else to a new, empty file
// (as WriteFile's temp file is). It returns
// the file's content after finish, and the bytes the Target wrote.
func runTarget(t testing.TB, old, src []byte, patch bool, ops []op) ([]byte, int64) {
	dir := t.TempDir()
	p, sp := filepath.Join(dir, "target"), filepath.Join(dir, "source")
	if !patch {
		old = nil
	}
	require.NoError(t, os.WriteFile(p, old, 0o644))
	require.NoError(t, os.WriteFile(sp, src, 0o644))
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	s, err := os.Open(sp)
	require.NoError(t, err)
	defer s.Close()
	tg := newTarget(f, patch)
	for _, o := range ops {
		if o.b != nil {
			_, err = tg.Write(o.b)
		} else {
			err = tg.CopyFrom(s, o.off, o.n)
		}
		require.NoError(t, err)
	}
	require.NoError(t, tg.finish())
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	return got, tg.wrote
}

// expect is what ops make of src.
func expect(src []byte, ops []op) []byte {
	var b []byte
	for _, o := range ops {
		if o.b != nil {
			b = append(b, o.b...)
		} else {
			b = append(b, src[o.off:o.off+o.n]...)
		}
	}
	return b
}

// TestTargetPatch: whatever the file held, a patch leaves exactly what was
// written, and writes only the pages that differ.
func TestTargetPatch(t *testing.T) {
	doc := []byte(strings.Repeat("0123456789abcdef", 40<<10)) // 640 KiB: spans several buffers
	tail := []byte(",\n    {\"id\": \"CLR-7-5001\"}\n  ]\n}\n")
	grown := append(append([]byte(nil), doc...), tail...)
	middle := append([]byte(nil), grown...)
	copy(middle[300<<10:], "CHANGED")
	for _, tc := range []struct {
		name     string
		old      []byte
		ops      []op
		maxWrote int64 // bytes a patch may write at most
	}{
		{"the file as it was", grown, []op{{off: 0, n: int64(len(doc))}, {b: tail}}, 0},
		{"append to the version before", doc, []op{{off: 0, n: int64(len(doc))}, {b: tail}}, 2 * page},
		{"an empty file", nil, []op{{off: 0, n: int64(len(doc))}, {b: tail}}, int64(len(grown))},
		{"a longer file is cut", append(append([]byte(nil), grown...), grown...), []op{{off: 0, n: int64(len(doc))}, {b: tail}}, 0},
		{"one change in the middle", middle, []op{{off: 0, n: int64(len(doc))}, {b: tail}}, page + 7},
		{"another document entirely", bytes.Repeat([]byte{'x'}, len(grown)), []op{{off: 0, n: int64(len(doc))}, {b: tail}}, int64(len(grown))},
		{"small writes between spans", grown, []op{{b: []byte("{")}, {off: 1, n: 1000}, {b: []byte(",")}, {off: 1002, n: 70000}, {b: tail}}, 3 * page},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := expect(doc, tc.ops)
			for _, patch := range []bool{false, true} {
				got, wrote := runTarget(t, tc.old, doc, patch, tc.ops)
				require.Equal(t, len(want), len(got), "patch %v", patch)
				require.True(t, bytes.Equal(want, got), "patch %v: the content is what was written", patch)
				if patch {
					assert.LessOrEqual(t, wrote, tc.maxWrote, "only the pages that differ are written")
				}
			}
		})
	}
}

// FuzzTarget: a patch of any old content by any sequence of writes and
// copies leaves exactly their bytes, as a plain write does.
func FuzzTarget(f *testing.F) {
	f.Add([]byte("old content"), []byte("the source file's bytes"), []byte{1, 5, 0, 3, 200, 2})
	f.Add([]byte(strings.Repeat("a", 70000)), []byte(strings.Repeat("a", 70000)), []byte{0, 255, 255, 1, 9, 0, 0, 200})
	f.Fuzz(func(t *testing.T, old, src, prog []byte) {
		if len(src) == 0 {
			src = []byte{'s'}
		}
		// each op is three bytes: kind, and two that choose offset and
		// length (scaled, so that spans cross buffer and page bounds)
		var ops []op
		for i := 0; i+2 < len(prog) && len(ops) < 16; i += 3 {
			a, b := int(prog[i+1]), int(prog[i+2])
			if prog[i]%2 == 0 {
				off := a * 257 % len(src)
				n := b * 311 % (len(src) - off + 1)
				ops = append(ops, op{off: int64(off), n: int64(n)})
			} else {
				ops = append(ops, op{b: bytes.Repeat([]byte{prog[i]}, a*b%(3*page))})
			}
		}
		want := expect(src, ops)
		for _, patch := range []bool{false, true} {
			got, _ := runTarget(t, old, src, patch, ops)
			if !bytes.Equal(want, got) {
				t.Fatalf("patch %v: %d bytes, want %d", patch, len(got), len(want))
			}
		}
	})
}

// TestShadowNames: a shadow's name is told from a temp file's, and leads
// back to the file it shadows (doctor reports a shadow whose file is gone).
func TestShadowNames(t *testing.T) {
	dir := filepath.Join("state", "clarifications")
	for _, c := range []struct {
		name         string
		shadow, temp bool
		shadowedBy   string
	}{
		{".issue-7.json.tmp-shadow", true, false, filepath.Join(dir, "issue-7.json")},
		{".issue-7.json.tmp-123", false, true, ""},
		{"issue-7.json", false, false, ""},
		{"issue-7.json.tmp-shadow", false, false, ""},
		{"..tmp-shadow", true, false, ""}, // the shadow of no file
	} {
		assert.Equal(t, c.shadow, IsShadow(c.name), c.name)
		assert.Equal(t, c.temp, IsTemp(c.name), c.name)
		assert.Equal(t, c.shadowedBy, ShadowedBy(filepath.Join(dir, c.name)), c.name)
	}
	p := filepath.Join(dir, "issue-12.json")
	assert.Equal(t, p, ShadowedBy(ShadowOf(p)))
}
