package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SymlinkError is a write refused because the file, or a directory on the
// way to it, is a symbolic link. A link can point anywhere (a cloned
// repository can hold one to ~/.bashrc), so agentx neither writes through
// one nor replaces it.
type SymlinkError struct {
	Path   string // the link
	Target string // what it points at, when it could be read
}

func (e *SymlinkError) Error() string {
	if e.Target == "" {
		return fmt.Sprintf("%s is a symbolic link: agentx does not write through or replace links", e.Path)
	}
	return fmt.Sprintf("%s is a symbolic link to %s: agentx does not write through or replace links", e.Path, e.Target)
}

// Hint says what to do.
func (e *SymlinkError) Hint() string {
	return "find out who made the link (one in a cloned repository can point anywhere); delete it, or put a regular file in its place, and run the command again"
}

// linkError returns a *SymlinkError for path if path itself (not what it
// points at) is a symbolic link, and nil if it is anything else or absent.
func linkError(path string) error {
	_, err := linkAt(path)
	return err
}

// linkAt reports whether path exists, with a *SymlinkError if it is a
// symbolic link (one lstat).
func linkAt(path string) (exists bool, err error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("lstat %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink == 0:
		return true, nil
	}
	target, _ := os.Readlink(path)
	return true, &SymlinkError{Path: path, Target: target}
}

// CheckNoLinks returns a *SymlinkError if path, or any directory between
// base and path, is a symbolic link. base itself is not checked: it is where
// the caller trusts the tree to start (a workspace's .agentx directory).
// Components that do not exist yet end the check: they will be created as
// directories, not followed.
func CheckNoLinks(base, path string) error {
	rel, err := filepath.Rel(base, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is not inside %s", path, base)
	}
	p := base
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		if exists, err := linkAt(p); err != nil || !exists {
			return err
		}
	}
	return nil
}

// OpenFile is os.OpenFile that refuses to follow a symbolic link in the last
// component of path (O_NOFOLLOW where the system has it), with a
// *SymlinkError. Use it wherever a file is opened for writing or created
// in place rather than written with Write.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	if noFollow == 0 {
		if err := linkError(path); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, flag|noFollow, perm)
	if err != nil {
		// ELOOP on most systems, EMLINK on some BSDs: ask the file system.
		if lerr := linkError(path); lerr != nil {
			return nil, lerr
		}
	}
	return f, err
}

// ErrTooLarge is returned by ReadAtMost for a file larger than asked.
var ErrTooLarge = errors.New("larger than allowed")

// ReadAtMost reads the file at path, never through a symbolic link in its
// last component (see OpenFile), and never more than max bytes: a larger
// file gives an error wrapping ErrTooLarge, which callers word for theirs.
func ReadAtMost(path string, max int64) ([]byte, error) {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w (%d bytes)", path, ErrTooLarge, max)
	}
	return data, nil
}
