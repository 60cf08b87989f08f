package atomicfile

import (
	"fmt"
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
}

// WriteWith replaces path with data like Write, as o says.
func WriteWith(path string, data []byte, perm os.FileMode, o Options) error {
	return write(path, perm, o, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteFile replaces path like WriteWith with what fill writes to the
// temp file itself (which it may copy into with f.ReadFrom, in the kernel
// where the system can). An error from fill cancels the write.
func WriteFile(path string, perm os.FileMode, o Options, fill func(f *os.File) error) error {
	return write(path, perm, o, fill)
}

// WriteVolatile replaces path with data like Write, atomically for readers,
// but without the fsyncs: after a power loss the file may hold its previous
// content. For derived state that can be rebuilt, where the fsyncs would only
// lengthen the time a hot lock is held.
func WriteVolatile(path string, data []byte, perm os.FileMode) error {
	return WriteWith(path, data, perm, Options{})
}

// write replaces path with what fill writes to a temp file.
func write(path string, perm os.FileMode, o Options, fill func(*os.File) error) (err error) {
	durable := o.Durable
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if err = fill(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err = f.Chmod(perm); err != nil {
		_ = f.Close()
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if durable {
		if err = f.Sync(); err != nil {
			_ = f.Close()
			return fmt.Errorf("fsync %s: %w", tmp, err)
		}
	}
	var fi os.FileInfo
	if o.BeforeRename != nil {
		if fi, err = f.Stat(); err != nil {
			_ = f.Close()
			return fmt.Errorf("stat %s: %w", tmp, err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
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
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	if !durable {
		return nil
	}
	return SyncDir(dir)
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
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// WriteDerived writes a derived file (a cache agentx can rebuild) at path
// under base: never through a symbolic link between base and path, the
// directories created as needed, without fsync (see WriteVolatile).
func WriteDerived(base, path string, data []byte) error {
	if err := CheckNoLinks(base, path); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := CheckNoLinks(base, path); err != nil { // a link made meanwhile
		return err
	}
	return WriteVolatile(path, data, 0o644)
}
