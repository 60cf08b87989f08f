package brief

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// The kinds of file a question carries (ledger.ContextRef.Kind).
const (
	KindRef      = "ref"      // the asker named it
	KindArtifact = "artifact" // the asked agent's step's output
	KindIssue    = "issue"    // the issue's text
)

// Pad is how many lines either side of the lines named an excerpt gives,
// while the budget allows.
const Pad = 3

// IssuesDir holds the issues' texts, relative to the repository root:
// N.md, its first line "# Title" (agentx issue describe writes them).
const IssuesDir = ".agentx/issues"

// IssuePath is where issue n's text is kept, relative to the root.
func IssuePath(n int) string { return IssuesDir + "/" + strconv.Itoa(n) + ".md" }

// IssueNumberPlaceholder is what a step's output names its issue by.
const IssueNumberPlaceholder = "{{issue_number}}"

// Request is one question about to be asked, as Gather needs it.
type Request struct {
	Root     string        // the repository root
	Rules    *workflow.Set // the budget, the asker's scope, the asked agent's artifact
	Workflow string        // the workflow whose rules apply ("" = the default)
	Step     string        // the asker's step ("" = its first with a scope, for the scope)
	From, To string
	Issue    int
	Refs     []Ref // what the asker named
	ReadCap  int64 // the most of one file read (0: DefaultReadCap)
}

// Gather reads what a question carries (see the package doc) and returns
// what the ledger records of it: nil when there is nothing (no file given
// or refused, no commit).
func Gather(ctx context.Context, req Request) *ledger.Context {
	g := newGatherer(req)
	defer g.rd.close()
	for _, r := range req.Refs {
		g.add(KindRef, r, true)
	}
	if req.Issue > 0 {
		g.optional(KindIssue, IssuePath(req.Issue))
	}
	if p := g.artifact(); p != "" {
		g.optional(KindArtifact, p)
	}
	g.cx.Commit = Commit(ctx, req.Root)
	if g.cx.Commit == "" && len(g.cx.Refs) == 0 && len(g.cx.Omitted) == 0 {
		return nil
	}
	return &g.cx
}

// gatherer is one Gather under way.
type gatherer struct {
	req    Request
	rd     *reader
	budget int // bytes of file text still to give
	total  int // the whole budget, as notes name it
	cx     ledger.Context
}

func newGatherer(req Request) *gatherer {
	g := &gatherer{req: req, rd: newReader(req.Root, req.ReadCap), total: workflow.DefaultContextBudget}
	if req.Rules != nil && req.Rules.Config != nil {
		g.total = req.Rules.Config.Context.Budget
	}
	g.budget = g.total
	if w := g.workflow(); w != nil {
		if s, err := w.Scoped(req.From, req.Step); err == nil && s != nil && len(s.Scope) > 0 {
			g.rd.scope = s.Scope
			g.rd.who = fmt.Sprintf("%s's step %s", req.From, s.ID)
		}
	}
	return g
}

func (g *gatherer) workflow() *workflow.Workflow {
	if g.req.Rules == nil {
		return nil
	}
	w, err := g.req.Rules.Workflow(g.req.Workflow)
	if err != nil {
		return nil
	}
	return w
}

// artifact is the asked agent's upstream artifact, relative to the root:
// the output of its step (of those with one, the step the asker's step
// needs, else its first), its issue number filled in; "" when it has none.
func (g *gatherer) artifact() string {
	w := g.workflow()
	if w == nil {
		return ""
	}
	var needs []string
	if s := w.Step(g.req.Step); s != nil {
		needs = s.Needs
	}
	out := ""
	for _, s := range w.Steps {
		if s.Agent != g.req.To || s.Output == "" {
			continue
		}
		if out == "" || slices.Contains(needs, s.ID) {
			out = s.Output
		}
		if slices.Contains(needs, s.ID) {
			break
		}
	}
	if strings.Contains(out, IssueNumberPlaceholder) {
		if g.req.Issue <= 0 {
			return ""
		}
		out = strings.ReplaceAll(out, IssueNumberPlaceholder, strconv.Itoa(g.req.Issue))
	}
	if strings.Contains(out, "{{") {
		return "" // a placeholder agentx does not fill
	}
	return out
}

// optional gives the file at p whole, as far as the budget allows, if it
// exists; a file that does not exist is no news.
func (g *gatherer) optional(kind, p string) {
	for _, r := range g.cx.Refs {
		if r.Path == p && r.Lines == "" {
			return // given whole already
		}
	}
	if _, err := os.Lstat(filepath.Join(g.req.Root, filepath.FromSlash(p))); err != nil {
		return
	}
	g.add(kind, Ref{Path: p}, false)
}

// add reads r and gives what of it the budget allows, noting the rest.
func (g *gatherer) add(kind string, r Ref, scoped bool) {
	f, why := g.rd.read(r.Path, scoped)
	if why != "" {
		g.note("%s: %s", r.String(), why)
		return
	}
	ls := splitLines(f.data)
	n := len(ls)
	from, to := 1, n
	if !r.Whole() {
		if r.From > n {
			g.note("%s: the file has %d lines: nothing given", r.String(), n)
			return
		}
		from, to = r.From, min(r.To, n)
	}
	// the lines around those named, while they fit; then the lines named,
	// from the first, as many as fit
	a, b := from, to
	if !r.Whole() {
		a, b = max(1, from-Pad), min(n, to+Pad)
	}
	if cost(ls, a, b) > g.budget {
		a, b = from, to
		for b >= a && cost(ls, a, b) > g.budget {
			b--
		}
	}
	switch {
	case n > 0 && b < a:
		g.note("%s: left out to keep within the context budget (%d bytes)", r.String(), g.total)
		return
	case b < to:
		g.note("%s: lines %s left out to keep within the context budget (%d bytes)", f.rel, lines(b+1, to), g.total)
	}
	ref := ledger.ContextRef{Kind: kind, Path: f.rel, SHA256: f.sum}
	if n > 0 && (a != 1 || b != n) {
		ref.Lines = lines(a, b)
	}
	for _, have := range g.cx.Refs {
		if have == ref {
			return // named twice
		}
	}
	g.cx.Refs = append(g.cx.Refs, ref)
	g.budget -= cost(ls, a, b)
}

// maxNote bounds one note, in bytes.
const maxNote = 300

func (g *gatherer) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if len(s) > maxNote {
		s = ledger.FirstSentence(s, maxNote)
	}
	if !slices.Contains(g.cx.Omitted, s) {
		g.cx.Omitted = append(g.cx.Omitted, s)
	}
}

// splitLines is data's lines, without their line breaks: a last line with
// no line break is a line; an empty file has none.
func splitLines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" && len(data) <= 1 {
		if len(data) == 0 {
			return nil
		}
		return []string{""}
	}
	return strings.Split(s, "\n")
}

// cost is the bytes lines a to b (1-based, inclusive) take, line breaks
// included.
func cost(ls []string, a, b int) int {
	n := 0
	for i := a; i <= b && i <= len(ls); i++ {
		n += len(ls[i-1]) + 1
	}
	return n
}

// gitTimeout bounds the one git command a question runs.
const gitTimeout = 5 * time.Second

// Commit is the commit checked out in the repository at root, or "" when
// root is no git repository (it has no .git), has no commit yet, or it
// cannot be told. It is read from the files git keeps (HEAD, the ref it
// names, packed-refs; a worktree's .git file followed), with no process
// on an ask's path; only a layout those do not answer (reftable) asks git
// (rev-parse HEAD).
func Commit(ctx context.Context, root string) string {
	if root == "" {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(root, ".git")); err != nil {
		return ""
	}
	if id, ok := headFromFiles(root); ok {
		return id
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--verify", "--quiet", "HEAD")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return commitID(strings.TrimSpace(string(out)))
}

// commitID is id when it is a commit id (40 or 64 hex digits), else "".
func commitID(id string) string {
	if (len(id) != 40 && len(id) != 64) || strings.Trim(id, "0123456789abcdef") != "" {
		return ""
	}
	return id
}

// maxGitFile bounds what is read of one of git's files (packed-refs may be
// long; HEAD and a ref are a line).
const maxGitFile = 8 << 20

// headFromFiles reads HEAD's commit from root's git files; ok false when
// they do not say (a layout they do not answer), "" and true when HEAD
// names a branch with no commit yet.
func headFromFiles(root string) (string, bool) {
	read := func(p string) (string, bool) {
		b, err := atomicfile.ReadAtMost(p, maxGitFile)
		return string(b), err == nil
	}
	gitDir := filepath.Join(root, ".git")
	if fi, err := os.Lstat(gitDir); err == nil && fi.Mode().IsRegular() {
		// a worktree or a submodule: "gitdir: PATH"
		b, ok := read(gitDir)
		dir, found := strings.CutPrefix(strings.TrimSpace(b), "gitdir: ")
		if !ok || !found {
			return "", false
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		gitDir = dir
	}
	head, ok := read(filepath.Join(gitDir, "HEAD"))
	if !ok {
		return "", false
	}
	head = strings.TrimSpace(head)
	ref, isRef := strings.CutPrefix(head, "ref: ")
	if !isRef {
		id := commitID(head)
		return id, id != ""
	}
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return "", false
	}
	// a worktree keeps its refs with the main repository (commondir)
	common := gitDir
	if c, ok := read(filepath.Join(gitDir, "commondir")); ok {
		c = strings.TrimSpace(c)
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	for _, dir := range []string{gitDir, common} {
		if b, ok := read(filepath.Join(dir, filepath.FromSlash(ref))); ok {
			id := commitID(strings.TrimSpace(b))
			return id, id != ""
		}
	}
	if packed, ok := read(filepath.Join(common, "packed-refs")); ok {
		for line := range strings.Lines(packed) {
			if id, name, found := strings.Cut(strings.TrimSpace(line), " "); found && name == ref {
				id = commitID(id)
				return id, id != ""
			}
		}
	}
	if _, err := os.Stat(filepath.Join(common, "reftable")); err == nil {
		return "", false // refs git keeps in its own format: git says
	}
	return "", true // a branch with no commit yet
}
