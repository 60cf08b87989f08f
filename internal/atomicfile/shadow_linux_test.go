package atomicfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// version is the n-th version of a large file: each adds a line at the end.
func version(n int) []byte {
	var b bytes.Buffer
	b.WriteString(strings.Repeat("a line every version keeps, where it was\n", 8000)) // 328 KB
	for i := 1; i <= n; i++ {
		b.WriteString("version " + strconv.Itoa(i) + "\n")
	}
	return b.Bytes()
}

func writeShadowed(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, WriteWith(path, data, 0o644, Options{Durable: true, Shadow: ShadowOf(path)}))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "the file holds what was written")
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(path, &st))
	return st.Ino
}

// written is the bytes this process has written so far (write and pwrite
// alike), from /proc/self/io.
func written(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no wchar in /proc/self/io")
	return 0
}

// TestShadowKeepsTheVersionBefore: a write with a shadow leaves the version
// it replaced in the shadow, and the write after it patches that file
// into the new version, writing little more than what changed.
func TestShadowKeepsTheVersionBefore(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "issue-7.json")
	require.NoError(t, Write(p, version(1), 0o644))
	first := inode(t, p)
	writeShadowed(t, p, version(2))
	shadow, err := os.ReadFile(ShadowOf(p))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(version(1), shadow), "the shadow holds the version replaced")
	assert.Equal(t, first, inode(t, ShadowOf(p)), "the replaced file itself, renamed")
	second := inode(t, p)

	before := written(t)
	writeShadowed(t, p, version(3))
	assert.Less(t, written(t)-before, int64(2*page), "the third version is patched into the first's file: one page written, not %d bytes", len(version(3)))
	assert.Equal(t, first, inode(t, p), "the file of the first version holds the third")
	assert.Equal(t, second, inode(t, ShadowOf(p)))
	assert.Equal(t, []string{".issue-7.json" + ShadowSuffix, "issue-7.json"}, names(t, dir), "no temp file left")

	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	// The shadow now holds version 2: writing version 2 again changes no
	// byte of it, and still gives it a new modification time (caches
	// keyed on the file's stamp must see a write).
	hourAgo := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(ShadowOf(p), hourAgo, hourAgo))
	before = written(t)
	writeShadowed(t, p, version(2))
	// (the runtime's poller may write its 8-byte wake-up: no page is written)
	assert.Less(t, written(t)-before, int64(64), "no byte differed")
	fi, err = os.Stat(p)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), fi.ModTime(), 5*time.Second, "a patched file has a new modification time")
}

// TestShadowNeverChangesWhatAReaderHolds: a reader still reading an old
// version keeps reading it whole; the write that would patch its file
// makes a new one instead.
func TestShadowNeverChangesWhatAReaderHolds(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "issue-7.json")
	require.NoError(t, Write(p, version(1), 0o644))
	reader, err := os.Open(p)
	require.NoError(t, err)
	defer reader.Close()
	held := inode(t, p)
	writeShadowed(t, p, version(2))
	writeShadowed(t, p, version(3)) // would patch the reader's file
	assert.NotEqual(t, held, inode(t, p), "the reader's file is not reused")
	got, err := os.ReadFile("/proc/self/fd/" + strconv.Itoa(int(reader.Fd())))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(version(1), got), "the reader still reads the version it opened")
	require.NoError(t, reader.Close())
	writeShadowed(t, p, version(4))
	writeShadowed(t, p, version(5))
}

// TestShadowThatIsNotOurs: whatever sits where the shadow should be, a
// link, another file's second name, the file itself, a directory or a
// FIFO, a write neither writes through it nor hangs, and the file ends
// right.
func TestShadowThatIsNotOurs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, path, shadow, victim string)
		stays bool // the thing planted is still there after the write
	}{
		{"a symbolic link", func(t *testing.T, path, shadow, victim string) {
			require.NoError(t, os.Symlink(victim, shadow))
		}, false},
		{"a dangling link", func(t *testing.T, path, shadow, victim string) {
			require.NoError(t, os.Symlink(victim+".missing", shadow))
		}, false},
		{"a second name of another file", func(t *testing.T, path, shadow, victim string) {
			require.NoError(t, os.Link(victim, shadow))
		}, false},
		{"a second name of the file itself", func(t *testing.T, path, shadow, victim string) {
			require.NoError(t, os.Link(path, shadow))
		}, false},
		{"a directory", func(t *testing.T, path, shadow, victim string) {
			require.NoError(t, os.Mkdir(shadow, 0o755))
		}, true},
		{"a FIFO", func(t *testing.T, path, shadow, victim string) {
			require.NoError(t, syscall.Mkfifo(shadow, 0o644))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p, victim := filepath.Join(dir, "issue-7.json"), filepath.Join(t.TempDir(), "victim")
			require.NoError(t, os.WriteFile(victim, version(1), 0o644))
			require.NoError(t, Write(p, version(1), 0o644))
			tc.plant(t, p, ShadowOf(p), victim)
			for n := 2; n <= 4; n++ {
				done := make(chan struct{})
				go func() {
					defer close(done)
					writeShadowed(t, p, version(n))
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("the write hangs")
				}
			}
			got, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(version(1), got), "the file the plant pointed at is untouched")
			fi, err := os.Lstat(ShadowOf(p))
			require.NoError(t, err)
			assert.Equal(t, tc.stays, !fi.Mode().IsRegular(), "mode %v", fi.Mode())
		})
	}
}

// TestOpenReadWaitsOutALease: a reader that opens a file while a writer
// holds its lease gets it once the writer lets go, not an error.
func TestOpenReadWaitsOutALease(t *testing.T) {
	p := filepath.Join(t.TempDir(), "issue-7.json")
	require.NoError(t, os.WriteFile(p, version(1), 0o644))
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, lease(f))
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = f.WriteAt([]byte("patched"), 0)
		_ = f.Close()
	}()
	start := time.Now()
	got, err := ReadFile(p)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 40*time.Millisecond, "the open waited for the lease")
	assert.Equal(t, "patched", string(got[:7]), "and read what the writer left")
}

// TestShadowGoesWithAFailedWrite: a write that fails once the shadow is in
// play removes it (after a failed fsync its pages may look written and not
// be), and leaves the file as it was.
func TestShadowGoesWithAFailedWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    func(shadow string) Options
		fill func(t *Target) error
	}{
		{"the fill fails", func(string) Options { return Options{Durable: true} }, func(t *Target) error {
			_, _ = t.Write([]byte("half"))
			return errors.New("encode failed")
		}},
		{"the check before the exchange fails", func(string) Options {
			return Options{Durable: true, BeforeRename: func(os.FileInfo) error { return errors.New("the lock was lost") }}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "issue-7.json")
			require.NoError(t, Write(p, version(1), 0o644))
			writeShadowed(t, p, version(2))
			require.FileExists(t, ShadowOf(p))
			o := tc.o(ShadowOf(p))
			o.Shadow = ShadowOf(p)
			fill := tc.fill
			if fill == nil {
				fill = func(t *Target) error { _, err := t.Write(version(3)); return err }
			}
			require.Error(t, WriteFile(p, 0o644, o, fill))
			assert.NoFileExists(t, ShadowOf(p))
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(version(2), got), "the file as it was")
			writeShadowed(t, p, version(3)) // the next write starts a new one
			assert.FileExists(t, ShadowOf(p))
		})
	}
}

// TestShadowReplacedDuringTheWrite: if the shadow's name is given to
// another file while a write patches it, the write fails and publishes
// neither, and the other file is left where it is.
func TestShadowReplacedDuringTheWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "issue-7.json")
	require.NoError(t, Write(p, version(1), 0o644))
	writeShadowed(t, p, version(2))
	err := WriteFile(p, 0o644, Options{Durable: true, Shadow: ShadowOf(p), BeforeRename: func(os.FileInfo) error {
		other := p + ".other"
		require.NoError(t, os.WriteFile(other, []byte("someone else's"), 0o644))
		return os.Rename(other, ShadowOf(p))
	}}, func(t *Target) error { _, err := t.Write(version(3)); return err })
	require.ErrorContains(t, err, "removed or replaced during the write")
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(version(2), got), "the file as it was")
	got, err = os.ReadFile(ShadowOf(p))
	require.NoError(t, err)
	assert.Equal(t, "someone else's", string(got))
}

// TestShadowOfAnotherUser: a shadow another user owns is not reused (it
// would become the file, theirs); a new one is made.
func TestShadowOfAnotherUser(t *testing.T) {
	p := filepath.Join(t.TempDir(), "issue-7.json")
	require.NoError(t, Write(p, version(1), 0o644))
	writeShadowed(t, p, version(2))
	if err := os.Lchown(ShadowOf(p), 4321, 4321); err != nil {
		t.Skip("cannot give a file to another user here:", err)
	}
	writeShadowed(t, p, version(3))
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(p, &st))
	assert.Equal(t, uint32(os.Geteuid()), st.Uid, "their file did not become the file")
}

// copyFromPath is a WriteFile fill that copies path's file whole, but for
// its line "version N", which it writes as "version M" instead: in place
// when N and M are as long.
func copyFromPath(path string, from, to []byte) func(*Target) error {
	return func(t *Target) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		at := bytes.Index(data, from)
		if err := t.CopyFrom(f, 0, int64(at)); err != nil {
			return err
		}
		if _, err := t.Write(to); err != nil {
			return err
		}
		return t.CopyFrom(f, int64(at+len(from)), int64(len(data)-at-len(from)))
	}
}

// TestShadowHoldsTakenOnTheCallersWord: what the caller vouches the
// shadow holds (Options.ShadowHolds) is neither read nor written, and
// forget is called before the patch changes a byte of it, not otherwise.
func TestShadowHoldsTakenOnTheCallersWord(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "issue-7.json")
	require.NoError(t, Write(p, version(3), 0o644))
	writeShadowed(t, p, version(3)) // the shadow holds version 3 too
	forgot := 0
	holds := func(n int64) func(os.FileInfo) (int64, func() error) {
		return func(os.FileInfo) (int64, func() error) { return n, func() error { forgot++; return nil } }
	}
	// the last line changes: after what the caller vouches for
	keep := int64(len(version(2)))
	want := append(version(2), "version 4\n"...)
	require.NoError(t, WriteFile(p, 0o644, Options{Durable: true, Shadow: ShadowOf(p), ShadowHolds: holds(keep)},
		copyFromPath(p, []byte("version 3\n"), []byte("version 4\n"))))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Zero(t, forgot, "nothing the caller vouched for changed")

	// the first version line changes: inside it
	want = bytes.Replace(want, []byte("version 1\n"), []byte("version 9\n"), 1)
	require.NoError(t, WriteFile(p, 0o644, Options{Durable: true, Shadow: ShadowOf(p), ShadowHolds: holds(keep)},
		copyFromPath(p, []byte("version 1\n"), []byte("version 9\n"))))
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Equal(t, 1, forgot, "forgotten once, before the change")

	// a forget that fails cancels the write
	before := want
	fail := func(os.FileInfo) (int64, func() error) {
		return int64(len(before)), func() error { return errors.New("cannot forget") }
	}
	err = WriteFile(p, 0o644, Options{Durable: true, Shadow: ShadowOf(p), ShadowHolds: fail},
		copyFromPath(p, []byte("version 2\n"), []byte("version 8\n")))
	require.ErrorContains(t, err, "cannot forget")
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(got), "the file is as it was")
}
