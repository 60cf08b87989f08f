package brief

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentx-cli/agentx/internal/gate/scope"
)

// DefaultReadCap is the most of one file agentx reads for a question's
// context, in bytes: a larger file is not read at all (its size is known
// before), and a file that grows past it while read is dropped.
const DefaultReadCap = 1 << 20

// reader reads files for a question's context, and only those it may:
// inside the repository root (links followed only where they stay inside
// it), outside .git, within the asker's step scope (for the files the
// asker names), regular, not binary, within the read cap.
type reader struct {
	root     string // the repository root, as given
	realRoot string // and with its links resolved
	dir      *os.Root
	cap      int64
	scope    []string // the asker's step's write scope; empty: unrestricted
	who      string   // the asker and its step, as a refusal names them
	err      error    // the root could not be opened: nothing is read
}

// newReader reads below root; it is opened on the first read. A root that
// cannot be opened reads nothing: every file is refused, saying why.
func newReader(root string, readCap int64) *reader {
	if readCap <= 0 {
		readCap = DefaultReadCap
	}
	return &reader{root: root, cap: readCap}
}

// open opens the root for the first read.
func (rd *reader) open() error {
	if rd.dir != nil || rd.err != nil {
		return rd.err
	}
	if rd.root == "" {
		rd.err = errors.New("no repository root")
		return rd.err
	}
	real, err := filepath.EvalSymlinks(rd.root)
	if err == nil {
		rd.realRoot = real
		rd.dir, err = os.OpenRoot(real)
	}
	if err != nil {
		rd.err = fmt.Errorf("the repository root cannot be read: %w", err)
	}
	return rd.err
}

func (rd *reader) close() {
	if rd.dir != nil {
		_ = rd.dir.Close()
	}
}

// file is one file as read.
type file struct {
	rel  string // repository-relative, slash-separated, as named (links not resolved)
	data []byte
	sum  string // SHA-256 of data, in hex
}

// refusal is why a file was not read, worded to follow its path in a note.
type refusal string

// rel is p, as named (relative to the root, or absolute), as a cleaned
// repository-relative path; ok is false when it lies outside the root.
func (rd *reader) relOf(p string) (string, bool) {
	if filepath.IsAbs(p) {
		for _, base := range []string{rd.root, rd.realRoot} {
			if r, err := filepath.Rel(base, p); err == nil && local(r) {
				return filepath.ToSlash(r), true
			}
		}
		return "", false
	}
	r := filepath.Clean(filepath.FromSlash(p))
	return filepath.ToSlash(r), local(r)
}

// local reports whether a cleaned relative path stays below its base.
func local(r string) bool {
	return r != "." && r != ".." && !filepath.IsAbs(r) && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && filepath.IsLocal(r)
}

// read reads the file at p (relative to the root), or says why not.
// scoped: the asker named it, and its step's scope applies.
func (rd *reader) read(p string, scoped bool) (file, refusal) {
	if err := rd.open(); err != nil {
		return file{}, refusal(err.Error() + ": not read")
	}
	rel, ok := rd.relOf(p)
	if !ok {
		return file{}, "outside the repository: not read"
	}
	if slices.Contains(strings.Split(rel, "/"), ".git") {
		return file{}, "inside .git: not read"
	}
	resolved, err := filepath.EvalSymlinks(filepath.Join(rd.realRoot, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return file{}, "not found"
	}
	if err != nil {
		return file{}, refusal("cannot be read: " + pathless(err))
	}
	target, err := filepath.Rel(rd.realRoot, resolved)
	if err != nil || !local(target) {
		return file{}, "a symbolic link leading outside the repository: not read"
	}
	target = filepath.ToSlash(target)
	if slices.Contains(strings.Split(target, "/"), ".git") {
		return file{}, "a symbolic link into .git: not read"
	}
	if scoped && len(rd.scope) > 0 && !scope.Match(rd.scope, target) {
		return file{}, refusal(fmt.Sprintf("outside the scope of %s (%s): not read", rd.who, strings.Join(rd.scope, ", ")))
	}
	// Opened below the root by the path whose links were resolved: a link
	// put in its place meanwhile is followed only where it stays inside.
	fi, err := rd.dir.Stat(filepath.FromSlash(target))
	if err != nil {
		return file{}, refusal("cannot be read: " + pathless(err))
	}
	if !fi.Mode().IsRegular() {
		return file{}, "not a regular file: not read"
	}
	if fi.Size() > rd.cap {
		return file{}, refusal(fmt.Sprintf("too large (%d bytes; agentx reads at most %d): not read", fi.Size(), rd.cap))
	}
	f, err := rd.dir.OpenFile(filepath.FromSlash(target), os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return file{}, refusal("cannot be read: " + pathless(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return file{}, "not a regular file: not read"
	}
	data, err := io.ReadAll(io.LimitReader(f, rd.cap+1))
	if err != nil {
		return file{}, refusal("cannot be read: " + pathless(err))
	}
	if int64(len(data)) > rd.cap {
		return file{}, refusal(fmt.Sprintf("too large (more than %d bytes, agentx's most): not read", rd.cap))
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return file{}, "binary (it holds NUL bytes): not read"
	}
	sum := sha256.Sum256(data)
	return file{rel: rel, data: data, sum: hex.EncodeToString(sum[:])}, ""
}

// pathless is err's message without the path an *fs.PathError adds: the
// note names the file already, as the asker named it.
func pathless(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
