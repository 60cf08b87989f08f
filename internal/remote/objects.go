package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
)

// MaxShared is the largest ledger file a commit of the remote may hold, in
// bytes. A bigger one is refused from its size alone, never read.
const MaxShared = 64 << 20

// maxObject bounds the commit and tree objects read: a ledger commit's tree
// holds one entry, its message one line and a host line.
const maxObject = 1 << 20

// objects reads objects of the repository: where agentx may read and write
// them itself (Git.objectDir), a loose object's file directly (what a
// fetch of a few commits, and agentx's own commits, leave), and anything
// else through one git cat-file --batch-command process, started at the
// first object not found so (a packed one, a ref that is not a plain
// file): an ask's fetch, history check and merge then start no process to
// read what they fetched.
type objects struct {
	g   *Git
	ctx context.Context
	// dir: the objects directory read directly ("": all goes to git), and
	// common, the repository's directory that holds it and the refs ("":
	// refs go to git)
	dir, common string
	cf          *catFile // started at the first read it takes
}

// catFile is one git cat-file --batch-command process: each object's
// size and type before its content, so that none bigger than asked is
// read.
type catFile struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	done context.CancelFunc
	// borrowed: the process is held (Git.hold); close leaves it running
	borrowed bool
}

// objects returns a reader; close it when done. While a write holds the
// reader (hold), every read that needs git goes through the one process
// started at the first of them, and close leaves it running.
func (g *Git) objects(ctx context.Context) (*objects, error) {
	g.settings(ctx)
	o := &objects{g: g, ctx: ctx}
	if !g.looseOff.Load() {
		o.dir, o.common = g.plainDirs()
	}
	return o, nil
}

// plainDirs returns where this process reads objects and refs from the
// repository's files, looked at once (after settings): the objects
// directory agentx writes to, unless the repository has replace refs
// (git's readers follow them, so must this: then none), and its common
// directory for the refs, unless they are kept in a reftable ("" for
// either: git reads them).
func (g *Git) plainDirs() (objects, refs string) {
	g.plainOnce.Do(func() {
		if g.objectDir == "" {
			return
		}
		common := filepath.Dir(g.objectDir)
		if replaced(common) {
			return
		}
		g.plainObjs = g.objectDir
		if _, err := os.Stat(filepath.Join(common, "reftable")); errors.Is(err, fs.ErrNotExist) {
			g.plainRefDir = common
		}
	})
	return g.plainObjs, g.plainRefDir
}

// replaced reports whether the repository at common may hold replace
// refs (refs/replace/), which git's readers follow: its loose refs'
// directory exists, or packed-refs names one, or either cannot be read.
func replaced(common string) bool {
	if _, err := os.Lstat(filepath.Join(common, "refs", "replace")); !errors.Is(err, fs.ErrNotExist) {
		return true
	}
	packed, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	return bytes.Contains(packed, []byte(" refs/replace/"))
}

// proc is the git cat-file process the reads that need git go through:
// the held one while a write holds it, else one of o's own.
func (o *objects) proc() (*catFile, error) {
	if o.cf != nil {
		return o.cf, nil
	}
	g := o.g
	g.heldMu.Lock()
	defer g.heldMu.Unlock()
	if !g.holding {
		cf, err := startCatFile(o.ctx, g.Dir)
		o.cf = cf
		return cf, err
	}
	if g.held == nil {
		cf, err := startCatFile(g.heldCtx, g.Dir)
		if err != nil {
			return nil, err
		}
		g.held = cf
	}
	o.cf = &catFile{cmd: g.held.cmd, in: g.held.in, out: g.held.out, done: g.held.done, borrowed: true}
	return o.cf, nil
}

// hold has the reads until release go through one git cat-file, started
// at the first of them that needs git (none: none started): a write's
// fetch, history check and the hosts of what it pulled cost one process
// at most, not one each.
func (g *Git) hold(ctx context.Context) (release func()) {
	g.heldMu.Lock()
	defer g.heldMu.Unlock()
	if g.holding {
		return func() {}
	}
	g.holding, g.heldCtx = true, ctx
	return func() {
		g.heldMu.Lock()
		defer g.heldMu.Unlock()
		if g.held != nil {
			g.held.borrowed = false
			g.held.close()
		}
		g.holding, g.held, g.heldCtx = false, nil, nil
	}
}

// startCatFile starts a git cat-file --batch-command in the repository
// dir.
func startCatFile(ctx context.Context, dir string) (*catFile, error) {
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "cat-file", "--batch-command")
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANGUAGE=C")
	cmd.WaitDelay = time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, &GitError{Args: []string{"cat-file", "--batch-command"}, Err: err}
	}
	return &catFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10), done: cancel}, nil
}

func (o *objects) close() {
	if o.cf != nil {
		o.cf.close()
	}
}

func (c *catFile) close() {
	if c.borrowed {
		return
	}
	_ = c.in.Close()
	c.done()
	_ = c.cmd.Wait()
}

// errMissing is an object the repository does not have.
var errMissing = errors.New("no such object")

// info returns the type and size of the object name names.
func (c *catFile) info(name string) (typ string, size int64, err error) {
	if strings.ContainsAny(name, "\n\r") {
		return "", 0, fmt.Errorf("%q is not an object name", name)
	}
	if _, err := io.WriteString(c.in, "info "+name+"\n"); err != nil {
		return "", 0, err
	}
	return c.header()
}

// resolve returns the commit ref points to ("" when none), as rev-parse
// --verify ref^{commit} would: a ref kept as a plain file (loose, or in
// packed-refs) naming a loose commit is read directly, anything else
// (none found, a tag, a symbolic ref) asked of git.
func (o *objects) resolve(ref string) (string, error) {
	if strings.ContainsAny(ref, "\n\r \t") {
		return "", fmt.Errorf("%q is not a ref", ref)
	}
	if sha, ok := o.refFile(ref); ok {
		if typ, _, _, ok := o.loose(sha, maxObject, false); ok && typ == "commit" {
			return sha, nil
		}
	}
	cf, err := o.proc()
	if err != nil {
		return "", err
	}
	return cf.resolve(ref)
}

// refFile returns the object id ref holds in the repository's files: its
// loose file, else its line in packed-refs. ok false when it is not found
// there as a plain object id (git is asked then).
func (o *objects) refFile(ref string) (string, bool) {
	if o.common == "" || !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return "", false
	}
	data, err := os.ReadFile(filepath.Join(o.common, filepath.FromSlash(ref)))
	if err == nil {
		sha := strings.TrimSpace(string(data))
		return sha, isHexID(sha)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	refs := map[string]string{}
	dir, name := ref[:strings.LastIndexByte(ref, '/')], ref[strings.LastIndexByte(ref, '/')+1:]
	if !packedRefs(o.common, dir, refs) {
		return "", false
	}
	sha, ok := refs[name]
	return sha, ok
}

func (c *catFile) resolve(ref string) (string, error) {
	if _, err := io.WriteString(c.in, "info "+ref+"^{commit}\n"); err != nil {
		return "", err
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(line)
	switch {
	case len(f) == 2 && f[1] == "missing":
		return "", nil
	case len(f) != 3 || f[1] != "commit" || !isHexID(f[0]):
		return "", fmt.Errorf("git cat-file: unexpected answer %q for %s", safetext.Line(line), ref)
	}
	return f[0], nil
}

// header reads the line git answers a command with: "SHA TYPE SIZE", or
// "NAME missing".
func (c *catFile) header() (string, int64, error) {
	line, err := c.out.ReadString('\n')
	if err != nil {
		return "", 0, fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(line)
	if len(f) == 2 && (f[1] == "missing" || f[1] == "ambiguous") {
		return "", 0, errMissing
	}
	if len(f) != 3 {
		return "", 0, fmt.Errorf("git cat-file: unexpected answer %q", safetext.Line(line))
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || n < 0 {
		return "", 0, fmt.Errorf("git cat-file: unexpected size in %q", safetext.Line(line))
	}
	return f[1], n, nil
}

// contents returns the object name names, which must be of type typ and
// at most max bytes; a bigger one is refused (tooLargeError) from its size,
// not read. A loose object is read from its file; git is asked for the
// rest.
func (o *objects) contents(name, typ string, max int64) ([]byte, error) {
	if t, size, data, ok := o.loose(name, max, true); ok {
		switch {
		case t != typ:
			return nil, fmt.Errorf("%s is a %s, not a %s", safetext.Line(name), t, typ)
		case size > max:
			return nil, &tooLargeError{size: size, max: max}
		}
		return data, nil
	}
	cf, err := o.proc()
	if err != nil {
		return nil, err
	}
	return cf.contents(name, typ, max)
}

func (c *catFile) contents(name, typ string, max int64) ([]byte, error) {
	t, size, err := c.info(name)
	if err != nil {
		return nil, err
	}
	if t != typ {
		return nil, fmt.Errorf("%s is a %s, not a %s", safetext.Line(name), t, typ)
	}
	if size > max {
		return nil, &tooLargeError{size: size, max: max}
	}
	if _, err := io.WriteString(c.in, "contents "+name+"\n"); err != nil {
		return nil, err
	}
	if _, n, err := c.header(); err != nil {
		return nil, err
	} else if n != size {
		return nil, fmt.Errorf("git cat-file: %s changed size while read", safetext.Line(name))
	}
	data := make([]byte, size+1) // the content and git's newline after it
	if _, err := io.ReadFull(c.out, data); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return data[:size], nil
}

// tooLargeError is an object bigger than agentx reads.
type tooLargeError struct{ size, max int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("it is %d bytes, more than the %d a shared ledger may hold", e.size, e.max)
}

// commitInfo is what a ledger commit says of itself.
type commitInfo struct {
	ID      string
	Tree    string
	Parents []string
	Time    time.Time
	Message string
}

// commit reads and parses commit sha.
func (o *objects) commit(sha string) (*commitInfo, error) {
	data, err := o.contents(sha, "commit", maxObject)
	if err != nil {
		return nil, err
	}
	return parseCommit(sha, data)
}

// parseCommit parses a commit object's content.
func parseCommit(sha string, data []byte) (*commitInfo, error) {
	c := &commitInfo{ID: sha}
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c.Message = string(msg)
	for _, l := range strings.Split(string(head), "\n") {
		k, v, _ := strings.Cut(l, " ")
		switch k {
		case "tree":
			c.Tree = v
		case "parent":
			c.Parents = append(c.Parents, v)
		case "committer":
			// NAME <EMAIL> SECONDS ZONE
			if f := strings.Fields(v); len(f) >= 2 {
				if s, err := strconv.ParseInt(f[len(f)-2], 10, 64); err == nil {
					c.Time = time.Unix(s, 0).UTC()
				}
			}
		}
	}
	if !isHexID(c.Tree) {
		return nil, fmt.Errorf("commit %s names no tree", safetext.Line(sha))
	}
	for _, p := range c.Parents {
		if !isHexID(p) {
			return nil, fmt.Errorf("commit %s names a parent that is not a commit id", safetext.Line(sha))
		}
	}
	return c, nil
}

// ledgerAt reads the ledger file of issue at commit c. The tree must hold
// that one file, a regular file (not a link, not a directory), at most
// MaxShared bytes; otherwise the error says what is wrong.
func (o *objects) ledgerAt(c *commitInfo, issue int) ([]byte, error) {
	tree, err := o.contents(c.Tree, "tree", maxObject)
	if err != nil {
		return nil, err
	}
	blob, err := ledgerEntry(tree, len(c.Tree)/2, File(issue))
	if err != nil {
		return nil, err
	}
	return o.contents(blob, "blob", MaxShared)
}

// ledgerEntry returns the object id of file want in a tree object's
// content (hashLen: the bytes of an object id), which must hold that one
// entry, a regular file.
func ledgerEntry(tree []byte, hashLen int, want string) (string, error) {
	blob := ""
	for len(tree) > 0 {
		sp := bytes.IndexByte(tree, ' ')
		nul := bytes.IndexByte(tree, 0)
		if sp < 0 || nul < sp || len(tree) < nul+1+hashLen || hashLen <= 0 {
			return "", errors.New("its tree cannot be read")
		}
		mode, name := string(tree[:sp]), string(tree[sp+1:nul])
		id := fmt.Sprintf("%x", tree[nul+1:nul+1+hashLen])
		tree = tree[nul+1+hashLen:]
		switch {
		case name != want:
			return "", fmt.Errorf("its tree holds %q besides %s: a ledger commit's tree holds the ledger alone", safetext.Line(name), want)
		case mode == "120000":
			return "", fmt.Errorf("its %s is a symbolic link, not a file", want)
		case mode != "100644" && mode != "100755":
			return "", fmt.Errorf("its %s is not a regular file (mode %s)", want, safetext.Line(mode))
		case blob != "":
			return "", fmt.Errorf("its tree holds %s twice", want)
		}
		blob = id
	}
	if blob == "" {
		return "", fmt.Errorf("its tree has no file %s", want)
	}
	return blob, nil
}

// readAt reads the ledger of issue at commit sha: commit, tree, blob. An
// unreadable one is a *ledger.CorruptError naming the ref and the commit.
func (g *Git) readAt(o *objects, issue int, sha string) (*commitInfo, []byte, error) {
	c, err := o.commit(sha)
	if err == nil {
		var data []byte
		if data, err = o.ledgerAt(c, issue); err == nil {
			return c, data, nil
		}
	}
	if errors.Is(err, errMissing) {
		return nil, nil, &ledger.CorruptError{Path: g.Name(issue) + " at " + sha, Err: errors.New("the commit or its ledger is missing from the local repository")}
	}
	return nil, nil, &ledger.CorruptError{Path: g.Name(issue) + " at " + sha, Err: err}
}
