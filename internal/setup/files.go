package setup

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// maxFile bounds what is read of a config file.
const maxFile = 4 << 20

// Merge is one file to change: its path relative to the root
// (slash-separated) and the merge of its content.
type Merge struct {
	Rel   string
	Merge func(data []byte) ([]byte, error)
}

// File is one file as it is and as the merge makes it.
type File struct {
	Rel    string // relative to the root, slash-separated
	Path   string
	Exists bool
	Mode   fs.FileMode // of the file there; 0644 for a new one
	Before []byte
	After  []byte
}

// The statuses of a file.
const (
	Created   = "created"
	Changed   = "changed"
	Unchanged = "unchanged"
)

// Status says what writing f does: created, changed or unchanged.
func (f *File) Status() string {
	switch {
	case !f.Exists:
		return Created
	case bytes.Equal(f.Before, f.After):
		return Unchanged
	}
	return Changed
}

// Plan reads and merges every file under root, writing nothing. A file,
// or a directory on the way to it, that is a symbolic link is a
// *atomicfile.SymlinkError; a file that cannot be merged an error naming
// it.
func Plan(root string, merges []Merge) ([]*File, error) {
	var files []*File
	for _, m := range merges {
		f := &File{Rel: m.Rel, Path: filepath.Join(root, filepath.FromSlash(m.Rel)), Mode: 0o644}
		if err := atomicfile.CheckNoLinks(root, f.Path); err != nil {
			return nil, err
		}
		data, err := atomicfile.ReadAtMost(f.Path, maxFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			f.Exists, f.Before = true, data
			if fi, err := os.Stat(f.Path); err == nil {
				f.Mode = fi.Mode().Perm()
			}
		}
		if f.After, err = m.Merge(f.Before); err != nil {
			var de *DataError
			var me *MergeError
			switch {
			case errors.As(err, &de):
				de.Path = f.Path
			case errors.As(err, &me):
				me.Path = f.Path
			}
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// Apply writes the files Plan made that change, each atomically, never
// through a symbolic link; directories it makes get mode 0755, new files
// 0644, and a file written keeps its mode.
func Apply(root string, files []*File) error {
	for _, f := range files {
		if f.Status() == Unchanged {
			continue
		}
		if err := atomicfile.CheckNoLinks(root, f.Path); err != nil {
			return err
		}
		if err := mkdirs(filepath.Dir(f.Path)); err != nil {
			return err
		}
		if err := atomicfile.CheckNoLinks(root, f.Path); err != nil { // a link made meanwhile
			return err
		}
		if err := atomicfile.Write(f.Path, f.After, f.Mode); err != nil {
			return err
		}
	}
	return nil
}

// mkdirs makes dir and its parents as needed, each with mode 0755 whatever
// the umask.
func mkdirs(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return nil
	}
	if err := mkdirs(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return os.Chmod(dir, 0o755)
}
