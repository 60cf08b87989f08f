package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Write replaces path with data: a temp file in the same directory is
// written, fsynced and closed, renamed over path, and the directory fsynced.
// If path is a symbolic link, Write refuses with a *SymlinkError and leaves
// the link, and what it points at, untouched.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteWith(path, data, perm, Options{Durable: true})
}

// Options tune WriteWith.
type Options struct {
	Durable bool // fsync the file before the rename and the directory after it
	// BeforeRename, when set, is called with the finished temp file's
	// FileInfo (its inode, size and mod time are those path will have)
	// right before the rename; an error from it cancels the write.
	BeforeRename func(tmp os.FileInfo) error
	// Shadow, when set, is a file in path's directory that keeps the
	// version of path a write replaces, to be patched into the next
	// version by the write after it: a large file that changes little
	// then costs what changed to write and fsync, not its whole size. The
	// write then ends in an atomic exchange of the two names instead of a
	// rename. A write lease (see openShadow) keeps the patching from anyone
	// who still has the version the shadow holds open, and any shadow
	// that cannot be used is replaced by a new file, as is one a write
	// failed on. Linux only; elsewhere, or when the file system has no
	// leases, the write is an ordinary one.
	Shadow string
	// ShadowHolds, with Shadow, is asked, once the shadow is open under
	// its lease and holds an earlier version (fi: its FileInfo), how many
	// of its first bytes the caller knows to be those of the file at path
	// now: n (0: none). The caller vouches for that (a ledger's layout
	// memo stamps the shadow it describes); CopyFrom then neither reads
	// nor compares what it copies from path's file to the same offset
	// below n, which the shadow already holds. Before the patch changes a
	// byte below n, forget is called, and must make the caller's word
	// durably forgotten: a patch cut short by a power loss could leave
	// those bytes changed under a stamp that did not reach the disk. An
	// error from forget cancels the write.
	ShadowHolds func(fi os.FileInfo) (n int64, forget func() error)
	// Locked says that the writer holds the one lock every writer that
	// sets Locked for path holds (a ledger's, under its issue's lock):
	// the temp file then has one name, LockedTemp(path), and what a killed
	// writer left there is replaced by the next write instead of staying
	// until doctor --fix removes it. A writer without that lock leaves
	// Locked unset and takes a name of its own: two writers never share
	// one.
	Locked bool
	// Wait, when set, is called once the new content is written (and,
	// Durable, fsynced) beside path, before anything else: the write
	// takes path's place only if it returns nil, and is dropped (the
	// temp file removed) with its error otherwise. So the slow part of a
	// write can be done while the writer learns whether it is to be made
	// (a ledger's local copy while the push that decides it runs). A
	// write that waits uses no Shadow: its lease would keep readers
	// waiting too.
	Wait func() error
}

// WriteWith replaces path with data like Write, as o says.
func WriteWith(path string, data []byte, perm os.FileMode, o Options) error {
	return write(path, perm, o, writeAll(data))
}

// WriteFile replaces path like WriteWith with what fill writes to the
// file's Target (which can copy from another file in the kernel where the
// system can). An error from fill cancels the write.
func WriteFile(path string, perm os.FileMode, o Options, fill func(t *Target) error) error {
	return write(path, perm, o, fill)
}

// WriteVolatile replaces path with data like Write, atomically for readers,
// but without the fsyncs: after a power loss the file may hold its previous
// content. For derived state that can be rebuilt, where the fsyncs would only
// lengthen the time a hot lock is held.
func WriteVolatile(path string, data []byte, perm os.FileMode) error {
	return WriteWith(path, data, perm, Options{})
}

// write replaces path with what fill writes to a temp file, or to its
// shadow.
func write(path string, perm os.FileMode, o Options, fill func(*Target) error) (err error) {
	durable := o.Durable
	dir := filepath.Dir(path)
	if o.Wait != nil {
		o.Shadow = ""
	}
	f, patch := openShadow(o.Shadow, path, perm)
	shadow := f != nil
	if !shadow {
		if f, err = createTemp(path, o.Locked); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	tmp := f.Name()
	keep := false // the name tmp is no longer ours to remove
	defer func() {
		if shadow && f != nil {
			_ = f.Close() // and with it the lease
		}
		// A failed write's temp file goes, and so does a shadow: after a
		// failed fsync its pages may look written and not be, and the
		// next write would trust them.
		if err != nil && !keep {
			_ = os.Remove(tmp)
		}
	}()
	done := func(err error, what string) error {
		if !shadow {
			_ = f.Close()
		}
		return fmt.Errorf("%s %s: %w", what, tmp, err)
	}
	if patch && durable {
		// The shadow was the file at path until the last write's exchange:
		// make that exchange durable before changing a byte of it, or a
		// power loss could leave path naming it half patched.
		if err = SyncDir(dir); err != nil {
			return err
		}
	}
	t := newTarget(f, patch)
	t.holds(path, o.ShadowHolds)
	if err = fill(t); err == nil {
		err = t.finish()
	}
	if err != nil {
		return done(err, "write")
	}
	if err = f.Chmod(perm); err != nil {
		return done(err, "chmod")
	}
	if durable {
		if err = f.Sync(); err != nil {
			return done(err, "fsync")
		}
	}
	var fi os.FileInfo
	if o.BeforeRename != nil {
		if fi, err = f.Stat(); err != nil {
			return done(err, "stat")
		}
	}
	if !shadow {
		if err = f.Close(); err != nil {
			return fmt.Errorf("close %s: %w", tmp, err)
		}
	}
	if o.Wait != nil {
		if err = o.Wait(); err != nil {
			return err
		}
	}
	// The temp file was created with O_EXCL, so it is no link. A link at
	// path would be replaced by the rename, not written through; it is
	// refused all the same, so a link someone made is never lost.
	if err = linkError(path); err != nil {
		return err
	}
	if o.BeforeRename != nil {
		if err = o.BeforeRename(fi); err != nil {
			return err
		}
	}
	if shadow {
		// The content is final: the lease ends before the exchange, so
		// that no reader of path ever waits for this writer.
		if err = publish(f, tmp, path); err != nil {
			keep = true
			return err
		}
	} else if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// createTemp creates the temp file a write of path goes through: a new
// name, or with locked LockedTemp(path), once what a killed writer left
// there is removed. Created O_EXCL either way: never through a link.
func createTemp(path string, locked bool) (*os.File, error) {
	if !locked {
		return os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	}
	return CreateAfresh(LockedTemp(path))
}

// CreateAfresh creates the file name (read-write, mode 0600, O_EXCL) once
// whatever is there is removed: a file a killed process left, or a link,
// which is never followed. For a name only the holder of a lock uses.
func CreateAfresh(name string) (*os.File, error) {
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// LockedTemp is the one temp file name of the writes of path made under
// its lock (Options.Locked): .NAME.tmp-locked beside it, a temp file's
// name (IsTemp).
func LockedTemp(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-locked")
}

// SyncDir fsyncs a directory so that a rename or create in it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}

// IsTemp reports whether name (a base name) is a temp file left by Write,
// for example by a process killed mid-write.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") && !IsShadow(name)
}

// ShadowSuffix ends the name of a shadow (see Options.Shadow): ".issue-7.json"
// + ShadowSuffix. It falls under the temp files' pattern (.*.tmp-*), so
// version control ignores shadows as it ignores temp files.
const ShadowSuffix = ".tmp-shadow"

// ShadowOf is the shadow of the file at path, in its directory.
func ShadowOf(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+ShadowSuffix)
}

// ShadowedBy is the path of the file whose shadow is at shadow (the
// inverse of ShadowOf), or "" if shadow is no shadow's name.
func ShadowedBy(shadow string) string {
	base := filepath.Base(shadow)
	if !IsShadow(base) || len(base) == 1+len(ShadowSuffix) {
		return ""
	}
	return filepath.Join(filepath.Dir(shadow), strings.TrimSuffix(base[1:], ShadowSuffix))
}

// IsShadow reports whether name (a base name) is a shadow, which is kept
// on purpose and may be deleted at any time.
func IsShadow(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, ShadowSuffix)
}

// WriteDerived writes a derived file (a cache agentx can rebuild) at path
// under base: never through a symbolic link between base and path, the
// directories created as needed, without fsync (see WriteVolatile).
func WriteDerived(base, path string, data []byte) error {
	return writeDerived(base, path, Options{}, writeAll(data))
}

// WriteDerivedLocked is WriteDerived by a writer that holds the lock
// every other writer of path that calls it holds (Options.Locked).
func WriteDerivedLocked(base, path string, data []byte) error {
	return writeDerived(base, path, Options{Locked: true}, writeAll(data))
}

// WriteDerivedFile is WriteDerived (WriteDerivedLocked when locked) of
// what fill writes to the file's Target: a large file made of pieces
// (an index file of the entries as read) is written without being put
// together in memory first.
func WriteDerivedFile(base, path string, locked bool, fill func(t *Target) error) error {
	return writeDerived(base, path, Options{Locked: locked}, fill)
}

// writeAll is the fill that writes data.
func writeAll(data []byte) func(t *Target) error {
	return func(t *Target) error {
		_, err := t.Write(data)
		return err
	}
}

func writeDerived(base, path string, o Options, fill func(t *Target) error) error {
	if err := CheckNoLinks(base, path); err != nil {
		return err
	}
	// The directory is there (and, checked above, no link) on every write
	// but the first: only one that makes it checks the way again.
	if fi, err := os.Lstat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := CheckNoLinks(base, path); err != nil { // a link made meanwhile
			return err
		}
	}
	return write(path, 0o644, o, fill)
}
