package remote

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/safetext"
)

// A chain of ledger commits is three small objects per commit (a blob, a
// tree of one entry, the commit), and starting git fast-import for them
// cost more than the rest of a write but its push (about 6 of an
// uncontended ask's 38 ms). So where the repository is an ordinary one,
// agentx writes them itself, in git's loose object format, which git
// documents and has kept since its first release: the object's type, a
// space, its size in decimal, a NUL, its content, compressed with zlib, in
// objects/XX/YYYY... named by the SHA-1 of the uncompressed bytes.
//
// Only where nothing else decides where or how git stores objects: a
// SHA-1 repository (extensions.objectFormat) with no extension that could
// change how objects are stored (extensions.compatObjectFormat, which
// keeps a map of every object written, or any this code does not know),
// not shared (core.sharedRepository, which sets permissions), no GIT_DIR,
// GIT_COMMON_DIR, GIT_OBJECT_DIRECTORY or GIT_WORK_TREE in the
// environment, and an objects directory where git's own config file says
// the repository is. Everywhere else, and when a write fails, fast-import
// makes the chain as before.

// objectEnv are the variables that move a repository or its objects.
var objectEnv = []string{"GIT_DIR", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_WORK_TREE"}

// looseSettings are what git config said of the repository's storage
// (settings reads them in the same git config as the signing setting).
type looseSettings struct {
	config  string // the repository's own config file, as git named it ("" when not seen)
	format  string // extensions.objectFormat
	shared  string // core.sharedRepository
	foreign string // an extension that may change how objects are stored (compatObjectFormat, or one newer than this code)
}

// take notes one setting git config printed: its scope, origin, key
// (lower case, as git prints it) and value.
func (s *looseSettings) take(scope, origin, key, value string) {
	switch key {
	case "core.sharedrepository":
		s.shared = value
	case "core.repositoryformatversion":
		if scope == "local" {
			s.config, _ = strings.CutPrefix(origin, "file:")
		}
	case "extensions.objectformat":
		s.format = value
	case "extensions.worktreeconfig", "extensions.partialclone", "extensions.preciousobjects",
		"extensions.refstorage", "extensions.noop":
		// where refs, worktree settings or promised objects live: not
		// how an object is written
	default:
		if strings.HasPrefix(key, "extensions.") {
			s.foreign = key
		}
	}
}

// configPath is a configuration file as git named it (the origin it
// printed, less "file:"), made absolute: git names the repository's own
// relative to the top of the work tree (it moves there first), which is
// the nearest directory up from Dir holding a .git directory, Dir taken as
// git takes it, its symbolic links resolved. "" when that is not found
// (a .git file names its directory absolutely: not this case).
func (g *Git) configPath(name string) string {
	if name == "" || filepath.IsAbs(name) {
		return name
	}
	top, err := filepath.Abs(g.Dir)
	if err == nil {
		top, err = filepath.EvalSymlinks(top)
	}
	if err != nil {
		return ""
	}
	for {
		if st, err := os.Lstat(filepath.Join(top, ".git")); err == nil {
			if !st.IsDir() {
				return ""
			}
			return filepath.Join(top, name)
		}
		up := filepath.Dir(top)
		if up == top {
			return ""
		}
		top = up
	}
}

// objectsDir is where this repository's objects are, when agentx may write
// them itself; "" when fast-import must. The repository's config file is
// in its common directory, beside objects: git names it absolute, or
// relative to the top of the work tree (it moves there first), which is
// the nearest directory up from Dir holding a .git directory, Dir taken as
// git takes it, its symbolic links resolved (up from a link's own path
// could be another repository).
func (g *Git) objectsDir(s looseSettings) string {
	if s.config == "" || filepath.Base(s.config) != "config" || s.foreign != "" {
		return ""
	}
	if f := strings.ToLower(s.format); f != "" && f != "sha1" {
		return ""
	}
	switch strings.ToLower(s.shared) {
	case "", "false", "umask", "0", "off", "no":
	default:
		return ""
	}
	for _, v := range objectEnv {
		if os.Getenv(v) != "" {
			return ""
		}
	}
	config := g.configPath(s.config)
	if config == "" {
		return ""
	}
	dir := filepath.Join(filepath.Dir(config), "objects")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	if st, err := os.Stat(config); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return dir
}

// looseChain makes commits, each with issue's ledger as its one file, a
// chain whose first commit is on parents, as loose objects in objects
// (synced to disk when durable), and returns the last commit's id. The
// commits are the ones fast-import and commit-tree make of the same
// input, byte for byte.
func (g *Git) looseChain(objects string, durable bool, issue int, parents []string, commits []Commit) (string, error) {
	for _, p := range parents { // chain checked them; a SHA-256 id has no place here
		if len(p) != 2*sha1.Size {
			return "", fmt.Errorf("remote %s: %q is not a commit id of this repository", g.Remote, safetext.Line(p))
		}
	}
	ident := g.ident()
	w := looseWriter{objects: objects, durable: durable}
	var sha string
	for _, c := range commits {
		blob, err := w.write("blob", c.Data)
		if err != nil {
			return "", err
		}
		raw, _ := hex.DecodeString(blob)
		tree, err := w.write("tree", append([]byte("100644 "+File(issue)+"\x00"), raw...))
		if err != nil {
			return "", err
		}
		var b bytes.Buffer
		b.WriteString("tree " + tree + "\n")
		for _, p := range parents {
			b.WriteString("parent " + p + "\n")
		}
		b.WriteString("author " + ident + "committer " + ident + "\n" + g.message(c))
		if sha, err = w.write("commit", b.Bytes()); err != nil {
			return "", err
		}
		parents = []string{sha}
	}
	return sha, nil
}

// looseWriter writes objects into objects, synced to disk when durable,
// through one compressor: a compressor's tables are most of a write's
// cost in a process that makes three objects.
type looseWriter struct {
	objects string
	durable bool
	z       *zlib.Writer
	buf     bytes.Buffer // one object, compressed: written in one go
}

// write stores one object as git does: compressed (at git's own level for
// loose objects, core.looseCompression's default: the fastest) into a
// temporary file of the object's fan-out directory (tmp_obj_*, which git's
// prune removes if a crash leaves one), read-only, then linked to its name,
// so that an object already there is never written over, and a reader
// never sees half of one. It returns the object's id.
func (w *looseWriter) write(typ string, body []byte) (string, error) {
	h := sha1.New()
	head := typ + " " + strconv.Itoa(len(body)) + "\x00"
	h.Write([]byte(head))
	h.Write(body)
	id := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(w.objects, id[:2])
	name := filepath.Join(dir, id[2:])
	if _, err := os.Lstat(name); err == nil {
		// Already stored: freshened, as git does, so that a prune that
		// found it unreachable does not take it before the push lands.
		now := time.Now()
		_ = os.Chtimes(name, now, now)
		return id, nil
	}
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("write git object: %w", err)
	}
	w.buf.Reset()
	if w.z == nil {
		w.z, _ = zlib.NewWriterLevel(&w.buf, zlib.BestSpeed) // a valid level: no error
	} else {
		w.z.Reset(&w.buf)
	}
	_, _ = w.z.Write([]byte(head)) // into memory: no error
	_, _ = w.z.Write(body)
	_ = w.z.Close()
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := filepath.Join(dir, "tmp_obj_"+hex.EncodeToString(suffix[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return "", fmt.Errorf("write git object: %w", err)
	}
	defer os.Remove(tmp) // once linked, the name stays
	_, err = f.Write(w.buf.Bytes())
	if err == nil && w.durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write git object %s: %w", id, err)
	}
	if err := os.Link(tmp, name); err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: git renames then, as here.
		if err := os.Rename(tmp, name); err != nil {
			return "", fmt.Errorf("write git object %s: %w", id, err)
		}
	}
	return id, nil
}

// loose reads the loose object name from the objects directory o reads
// directly: its type and size from the header, and, with content, its
// content when it is at most max bytes (nil when bigger: not read). The
// bytes read are checked against the name (SHA-1 of the whole object) and
// zlib's checksum. ok false when there is no such file, or it cannot be
// read as the object named (git is asked then, and says what is wrong).
func (o *objects) loose(name string, max int64, content bool) (typ string, size int64, data []byte, ok bool) {
	if o.dir == "" || len(name) != 40 || !isHexID(name) {
		return "", 0, nil, false
	}
	f, err := os.Open(filepath.Join(o.dir, name[:2], name[2:]))
	if err != nil {
		return "", 0, nil, false
	}
	defer f.Close()
	z, err := zlib.NewReader(f)
	if err != nil {
		return "", 0, nil, false
	}
	defer z.Close()
	head, t, size, ok := looseHeader(z)
	if !ok {
		return "", 0, nil, false
	}
	if !content || size > max {
		return t, size, nil, true
	}
	h := sha1.New()
	h.Write(head)
	data = make([]byte, size)
	if _, err := io.ReadFull(z, data); err != nil {
		return "", 0, nil, false
	}
	// nothing after the content, and zlib's checksum holds (checked at
	// its end)
	if k, err := z.Read(head[:1]); k != 0 || err != io.EOF {
		return "", 0, nil, false
	}
	h.Write(data)
	if hex.EncodeToString(h.Sum(nil)) != name {
		return "", 0, nil, false
	}
	return t, size, data, true
}

// looseHeader reads a loose object's header from its decompressed
// stream: "TYPE SIZE\x00" (head, with its NUL), a known type and a size
// written as git writes it.
func looseHeader(z io.Reader) (head []byte, typ string, size int64, ok bool) {
	var buf [32]byte
	n := 0
	for ; ; n++ {
		if n == len(buf) {
			return nil, "", 0, false
		}
		if _, err := io.ReadFull(z, buf[n:n+1]); err != nil {
			return nil, "", 0, false
		}
		if buf[n] == 0 {
			break
		}
	}
	t, sz, found := strings.Cut(string(buf[:n]), " ")
	size, err := strconv.ParseInt(sz, 10, 64)
	if !found || err != nil || size < 0 || strconv.FormatInt(size, 10) != sz {
		return nil, "", 0, false
	}
	switch t {
	case "commit", "tree", "blob", "tag":
		return buf[:n+1], t, size, true
	}
	return nil, "", 0, false
}
