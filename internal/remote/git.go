package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/workflow"
)

// Git is a remote of the repository holding the workspace, reached with
// the system git: its credential helpers, SSH agent and CI token work as
// they do for the user. It implements Transport.
type Git struct {
	Dir      string        // the repository (the workspace's root)
	Remote   string        // the remote's name or URL, as git takes it
	Refs     string        // the ref prefix: refs/agentx/clarifications
	Timeout  time.Duration // one exchange with the remote
	Tries    int           // tries of one write
	Interval time.Duration // reads fetch at most once per interval
	Host     string        // names this machine in commits (default: the host name)
	// RequireSigned has every commit pulled verified by git verify-commit
	// ([remote] require_signed).
	RequireSigned bool
	// MaxSkew is how far a fetched commit's time may be from when this
	// host's clock says it was made ([remote] max_skew; 0: the default).
	MaxSkew time.Duration
	// Now is this host's clock, which dates the commits it makes (nil:
	// the system clock; Attach sets the store's).
	Now func() time.Time

	settingsOnce sync.Once
	signing      bool        // git is configured to sign commits (commit.gpgSign)
	fsyncSet     bool        // the user has chosen what git syncs to disk (core.fsync*)
	syncLoose    bool        // and that includes loose objects: so are the ones agentx writes
	objectDir    string      // where agentx writes the objects of a commit itself ("": fast-import does)
	looseOff     atomic.Bool // a push found objects written there missing: fast-import from then on
	// plain: where objects and refs are read from the repository's files
	// (plainDirs), looked at once a process
	plainOnce              sync.Once
	plainObjs, plainRefDir string
	// settingsState is the state directory whose remote/SettingsFile
	// keeps what settings read for the next process ("": none; Attach
	// sets it)
	settingsState string

	// one git cat-file for the reads of a write (hold)
	heldMu  sync.Mutex
	holding bool
	heldCtx context.Context
	held    *catFile
}

// settingsKeys are the keys settings reads: signing, syncing, and where
// and how the repository stores objects (loose.go). A git that shows
// scopes lists them all, for what they were read from as well.
const settingsKeys = `^(commit\.gpgsign|core\.fsync.*|core\.sharedrepository|extensions\..*|core\.repositoryformatversion)$`

// settings reads, once, with one git config, the settings the commit
// path depends on: whether git signs commits, whether the user has
// chosen what git syncs to disk, and whether agentx may write a commit's
// objects itself, and where.
func (g *Git) settings(ctx context.Context) {
	g.settingsOnce.Do(func() { g.readSettings(ctx) })
}

// readSettings is settings' one read: from SettingsFile when a process
// before found them and nothing they depend on changed, else from git
// config.
func (g *Git) readSettings(ctx context.Context) {
	if g.loadSettings() {
		return
	}
	// Read once for the process's life: not cut short by one command's
	// context (what it found would stand for all).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	start := time.Now()
	out, per, err := g.listConfig(ctx)
	if err != nil {
		return // none set (exit 1), or git cannot say: not signing, fast-import
	}
	cr := configRead{followable: true}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+per <= len(fields); i += per {
		var scope, origin string
		if per == 3 {
			scope, origin = fields[i], fields[i+1]
			cr.from(scope, origin)
		}
		g.takeSetting(&cr, scope, origin, fields[i+per-1])
	}
	g.objectDir = g.objectsDir(cr.loose)
	g.syncLoose = cr.objectFiles || cr.fsyncGiven && syncsLoose(cr.fsync)
	if per == 3 {
		g.keepSettings(cr.origins, cr.followable && cr.loose.config != "", start)
	}
}

// listConfig lists the settings with git config: each its scope, its
// origin and KEY\nVALUE (or KEY alone, a boolean set true), each ended by
// a NUL; per is 3. A git older than 2.26 knows no --show-scope: the
// settings alone (KEY\nVALUE), per 1, and fast-import.
func (g *Git) listConfig(ctx context.Context) (out []byte, per int, err error) {
	out, err = g.git(ctx, nil, nil, "config", "--null", "--show-scope", "--show-origin", "--list")
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() != 1 {
		out, err = g.git(ctx, nil, nil, "config", "--null", "--get-regexp", settingsKeys)
		return out, 1, err
	}
	return out, 3, err
}

// configRead is what readSettings gathers from git config's list.
type configRead struct {
	loose       looseSettings
	fsync       string // core.fsync
	fsyncGiven  bool
	objectFiles bool // core.fsyncObjectFiles
	// what git read, for SettingsFile: its files, and whether that is
	// all it depends on
	origins    []string
	followable bool
}

// from notes where a setting was read from.
func (cr *configRead) from(scope, origin string) {
	if file, ok := strings.CutPrefix(origin, "file:"); ok {
		cr.origins = append(cr.origins, file)
	} else if scope != "command" {
		cr.followable = false // read from somewhere else than a file
	}
}

// takeSetting takes one setting, field (KEY\nVALUE, or KEY alone: a
// boolean set true), read in scope from origin.
func (g *Git) takeSetting(cr *configRead, scope, origin, field string) {
	k, v, hasValue := strings.Cut(field, "\n")
	switch {
	case k == "include.path" || strings.HasPrefix(k, "includeif.") && strings.HasSuffix(k, ".path"),
		k == "extensions.worktreeconfig" && (!hasValue || gitBool(v)):
		// files read on conditions, or per worktree: not followed
		cr.followable = false
	case k == "commit.gpgsign":
		g.signing = !hasValue || gitBool(v) // the last one set wins
	case strings.HasPrefix(k, "core.fsync"):
		g.fsyncSet = true
		switch k {
		case "core.fsync":
			cr.fsync, cr.fsyncGiven = v, true
		case "core.fsyncobjectfiles":
			cr.objectFiles = !hasValue || gitBool(v)
		}
	case k == "core.sharedrepository" || k == "core.repositoryformatversion" || strings.HasPrefix(k, "extensions."):
		cr.loose.take(scope, origin, k, v)
	}
}

// syncsLoose reports whether a core.fsync value has git sync loose
// objects: its components in order on git's default (which does not),
// "none" clearing, "-x" taking x away; loose-object and the aggregates
// holding it (objects, committed, added, all) adding them.
func syncsLoose(value string) bool {
	loose := false
	for _, c := range strings.Split(strings.ToLower(value), ",") {
		name, off := strings.CutPrefix(strings.TrimSpace(c), "-")
		switch name {
		case "none":
			loose = false
		case "loose-object", "objects", "committed", "added", "all":
			loose = !off
		}
	}
	return loose
}

// warm implements warmer: the settings, read while the change is made.
func (g *Git) warm(ctx context.Context) { g.settings(ctx) }

// gitBool is a git boolean's value: true, yes, on, or a non-zero number.
func gitBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "":
		return true
	case "false", "no", "off":
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	return err == nil && n != 0
}

// signArgs is what makes git commit-tree sign a commit when git is
// configured to (commit.gpgSign: commit-tree does not read it itself),
// with the user's own key and format (user.signingKey, gpg.format).
func (g *Git) signArgs(ctx context.Context) []string {
	g.settings(ctx)
	if g.signing {
		return []string{"-S"}
	}
	return nil
}

// importArgs are the settings fast-import runs with. Its few objects are
// written as one small pack, which it then unpacks into loose objects and
// deletes (fastimport.unpackLimit): unless the user has chosen what git
// syncs to disk, that transient pack is not synced (git syncs packs by
// default, not loose objects), so the commit costs what hash-object,
// mktree and commit-tree's loose objects cost, not a disk flush.
func (g *Git) importArgs(ctx context.Context) []string {
	g.settings(ctx)
	if g.fsyncSet {
		return nil
	}
	return []string{"-c", "core.fsync=-pack,-pack-metadata"}
}

// New returns the remote a [remote] table configures for the repository at dir.
func New(dir string, cfg *workflow.RemoteConfig) *Git {
	host, _ := os.Hostname()
	return &Git{Dir: dir, Remote: cfg.Git, Refs: cfg.Refs(), Timeout: cfg.Timeout.Duration,
		Tries: cfg.Attempts, Interval: cfg.Interval.Duration, Host: host, RequireSigned: cfg.RequireSigned, MaxSkew: cfg.MaxSkew.Duration}
}

// Ref is the ref of issue's ledger.
func (g *Git) Ref(issue int) string { return g.Refs + "/issue-" + strconv.Itoa(issue) }

// File is the name of the ledger in each commit's tree.
func File(issue int) string { return "issue-" + strconv.Itoa(issue) + ".json" }

// Name implements Transport.
func (g *Git) Name(issue int) string { return g.Remote + " " + g.Ref(issue) }

// Attempts implements Transport.
func (g *Git) Attempts() int { return g.Tries }

// GitError is a git command that failed for a reason other than the remote
// being out of reach or having moved on.
type GitError struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	return fmt.Sprintf("git %s: %v: %s", strings.Join(e.Args, " "), e.Err, safetext.Line(strings.TrimSpace(e.Stderr)))
}

func (e *GitError) Unwrap() error { return e.Err }

// offlineError is the remote out of reach, with git's words for it.
type offlineError struct {
	remote string
	why    string
}

func (e *offlineError) Error() string {
	return fmt.Sprintf("remote %s: %s", e.remote, e.why)
}

func (e *offlineError) Unwrap() error { return ErrOffline }

// bigFile has git stream an object bigger than a shared ledger may be
// (a fetch writing it, a read) instead of holding it whole in memory: a
// ref carrying a huge body costs the disk it takes, not its size in
// memory (git's own threshold is 512 MiB).
var bigFile = "core.bigFileThreshold=" + strconv.Itoa(MaxShared)

// git runs the system git in the repository, with stdin, bounded by ctx.
// It never prompts (no terminal, GIT_TERMINAL_PROMPT=0), speaks C, does
// no automatic maintenance, and streams big objects (bigFile). Another
// git of this host holding a ref's lock, or packed-refs' (which deleting
// any ref takes: a fetch that prunes), is waited for up to five seconds,
// not git's 0.1 and 1: this host busy is not the remote out of reach.
func (g *Git) git(ctx context.Context, stdin []byte, env []string, args ...string) ([]byte, error) {
	full := append([]string{"-C", g.Dir, "-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "core.filesRefLockTimeout=5000", "-c", "core.packedRefsTimeout=5000", "-c", bigFile}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never", "LC_ALL=C", "LANGUAGE=C")
	cmd.Env = append(cmd.Env, env...)
	cmd.WaitDelay = time.Second // a child (ssh, a helper) holding the pipes does not hold us
	// a write carrying other processes' changes has git hold its mark
	// too (lock.Inheritance): killed, its push still tells them when it ends
	cmd.ExtraFiles = lock.InheritedFiles(ctx)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			return out.Bytes(), &GitError{Args: args, Stderr: errb.String(), Err: context.Cause(ctx)}
		}
		return out.Bytes(), &GitError{Args: args, Stderr: errb.String(), Err: err}
	}
	return out.Bytes(), nil
}

// exchange runs a git command that talks to the remote, within the
// timeout: past it, or when git cannot reach the remote, the error wraps
// ErrOffline.
func (g *Git) exchange(ctx context.Context, args ...string) ([]byte, error) {
	tctx, cancel := context.WithTimeout(ctx, g.Timeout)
	defer cancel()
	out, err := g.git(tctx, nil, nil, args...)
	if err == nil {
		return out, nil
	}
	if ctx.Err() != nil {
		return out, context.Cause(ctx)
	}
	var ge *GitError
	if !errors.As(err, &ge) {
		return out, err
	}
	if tctx.Err() != nil {
		return out, &offlineError{remote: g.Remote, why: fmt.Sprintf("no answer within %s", g.Timeout)}
	}
	if notRepo(ge.Stderr) || badObject(ge) {
		return out, err
	}
	return out, &offlineError{remote: g.Remote, why: firstLine(ge.Stderr)}
}

// notRepo reports git saying the workspace is not in a repository: a
// setup problem, not an outage.
func notRepo(stderr string) bool { return strings.Contains(stderr, "not a git repository") }

// badObject reports git saying an object it was to send is not in the
// repository (a push of a commit it does not have): a local fault, not an
// outage, even when the remote answered.
func badObject(err error) bool {
	var ge *GitError
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "fatal: bad object ")
}

// firstLine is the first meaningful line git printed, one line, safe.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "hint:") {
			return safetext.Line(l)
		}
	}
	return "git failed"
}

// Fetch implements Transport: it fetches issue's ref into the same ref
// locally and reads the ledger at its head.
func (g *Git) Fetch(ctx context.Context, issue int) (Snapshot, error) {
	ref := g.Ref(issue)
	specs := []string{"+" + ref + ":" + ref}
	if g.queued() {
		specs = append(specs, g.markSpec(issue)) // what PushOnCopy leases
	}
	err := g.fetchRefs(ctx, nil, specs...)
	if err != nil {
		var oe *offlineError
		if errors.As(err, &oe) && strings.Contains(oe.why, "couldn't find remote ref") {
			return Snapshot{}, nil // no ledger of the issue on the remote yet
		}
		return Snapshot{}, err
	}
	// The ref's head and the ledger at it, through one git cat-file.
	o, err := g.objects(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	defer o.close()
	sha, err := o.resolve(ref)
	if err != nil || sha == "" {
		return Snapshot{}, err
	}
	_, data, err := g.readAt(o, issue, sha)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Version: sha, Data: data}, nil
}

// resolve returns the commit a local ref points to ("" when none).
func (g *Git) resolve(ctx context.Context, ref string) (string, error) {
	out, err := g.git(ctx, nil, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		var ge *GitError
		var ee *exec.ExitError
		if errors.As(err, &ge) && errors.As(ge.Err, &ee) && ee.ExitCode() == 1 {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Read returns the ledger of issue at commit sha. The commit came from the
// remote: its tree must hold the ledger alone, as a regular file of at
// most MaxShared bytes (its size is read first: a bigger one is never read
// into memory), and the content is decoded by the caller like any ledger
// file.
func (g *Git) Read(ctx context.Context, issue int, sha string) (Snapshot, error) {
	if !isHexID(sha) {
		return Snapshot{}, fmt.Errorf("remote %s: %q is not a commit id", g.Remote, safetext.Line(sha))
	}
	o, err := g.objects(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	defer o.close()
	_, data, err := g.readAt(o, issue, sha)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Version: sha, Data: data}, nil
}

// isHexID reports whether s is a full object id in lower-case hex, SHA-1
// (40 digits) or SHA-256 (64).
func isHexID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Push implements Transport: each commit's tree holds the ledger
// alone; the chain is pushed with a lease on the version fetched (an
// explicit id, or that the ref does not exist), never forced.
func (g *Git) Push(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error) {
	return g.push(ctx, issue, base, commits, nil)
}

// push is Push, with also (more refspecs: deletions of waiters) in the
// same git push, atomic: all of them or none, so that a push refused
// removes no waiter. Only the ledger's ref decides what it reports: when
// the push failed for one of the others (or the remote cannot push
// atomically), the ledger is pushed alone, and they are removed after it
// lands. leases ("REF:ID") hold refs also names to what they were seen
// to hold: one that moved fails the whole push, as ErrMoved.
func (g *Git) push(ctx context.Context, issue int, base Snapshot, commits []Commit, also []string, leases ...string) (Snapshot, error) {
	var parents []string
	if base.Version != "" {
		parents = []string{base.Version}
	}
	head, err := g.publish(ctx, issue, parents, commits, func(head string) error {
		return g.pushHead(ctx, issue, base, head, also, leases...)
	})
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Version: head, Data: commits[len(commits)-1].Data}, nil
}

// PushOnCopy implements OnCopy: Push, atomic with a lease on the issue's
// intents' mark (markRef) at what this host last fetched of it, none if
// nothing: an intent posted since fails the push (errLeased). A remote
// without the mark gets one, the version the push was made on, which the
// next intent moves. Where there is no queue there are no intents: Push.
func (g *Git) PushOnCopy(ctx context.Context, issue int, base Snapshot, commits []Commit) (Snapshot, error) {
	if !g.queued() || base.Version == "" {
		return g.Push(ctx, issue, base, commits)
	}
	mark := g.markRef(issue)
	seen := ""
	if refs, err := g.localRefs(ctx, g.queueRef(issue)); err == nil {
		seen = refs["mark"] // whatever it names: it is only leased
	}
	src := seen
	if src == "" {
		src = base.Version
	}
	pushed, err := g.push(ctx, issue, base, commits, []string{src + ":" + mark}, mark+":"+seen)
	if err == nil && seen == "" && !remoteName(g.Remote) {
		// as the remote now has it (a named remote's push did it)
		_, _ = g.git(ctx, nil, nil, "update-ref", mark, src)
	}
	return pushed, err
}

// publish makes commits a chain on parents (chain), has send push its
// head, and returns the head. Should the push find objects agentx wrote
// missing (loose.go: not where git looks for them), the chain is made
// again by fast-import, which makes every chain after it, and sent again.
func (g *Git) publish(ctx context.Context, issue int, parents []string, commits []Commit, send func(head string) error) (string, error) {
	head, err := g.chain(ctx, issue, parents, commits)
	if err != nil {
		return "", err
	}
	err = send(head)
	if badObject(err) && g.objectDir != "" && !g.looseOff.Swap(true) {
		if head, err = g.chain(ctx, issue, parents, commits); err == nil {
			err = send(head)
		}
	}
	return head, err
}

// pushHead pushes head, a chain made on base, onto issue's ref, with also
// and its leases (push).
func (g *Git) pushHead(ctx context.Context, issue int, base Snapshot, head string, also []string, leases ...string) error {
	ref := g.Ref(issue)
	// The local ref follows what the remote now holds: a named remote's
	// push updates it itself, as a remote-tracking ref of the ledgers'
	// refs (one fetch refspec more, for this push only); a URL's with
	// update-ref after it.
	var args []string
	named := remoteName(g.Remote)
	if named {
		args = append(args, "-c", "remote."+g.Remote+".fetch=+"+g.Refs+"/*:"+g.Refs+"/*")
		if mark := g.markRef(issue); slices.ContainsFunc(also, func(a string) bool { return strings.HasSuffix(a, ":"+mark) }) {
			args = append(args, "-c", "remote."+g.Remote+".fetch=+"+mark+":"+mark) // PushOnCopy's
		}
	}
	args = append(args, "push", "--porcelain", "--no-verify", "--force-with-lease="+ref+":"+base.Version)
	for _, l := range leases {
		args = append(args, "--force-with-lease="+l)
	}
	if len(also) > 0 {
		args = append(args, "--atomic")
	}
	out, err := g.exchange(ctx, append(append(args, "--", g.Remote, head+":"+ref), also...)...)
	if err != nil {
		// A leased ref that moved fails the push, by its lease or, moved
		// as the remote took the push, by its transaction: the ledger is
		// never pushed alone then.
		switch {
		case rejected(out, ref):
			return fmt.Errorf("push %s: %w", g.Name(issue), ErrMoved)
		case len(leases) > 0 && (bytes.Contains(out, []byte("(stale info)")) || bytes.Contains(out, []byte("(atomic transaction failed)"))):
			return fmt.Errorf("push %s: %w", g.Name(issue), errLeased)
		}
		switch {
		case landed(out, ref):
		case len(also) > 0 && (bytes.Contains(out, []byte(":"+ref+"\t")) || strings.Contains(err.Error(), "support --atomic")):
			// The remote answered, and refused the ledger for the others'
			// sake (one of them, or an atomic push it cannot do): push it
			// alone, then the others.
			if err := g.pushHead(ctx, issue, base, head, nil); err != nil {
				return err
			}
			_ = g.deleteRefs(ctx, also)
			return nil
		default:
			return err
		}
	}
	if !named {
		_, _ = g.git(ctx, nil, nil, "update-ref", ref, head)
	}
	return nil
}

// remoteName reports whether remote is a remote's name, not a URL or a
// path: letters, digits, '.', '_' and '-', not starting with '-' or '.'.
func remoteName(remote string) bool {
	if remote == "" || remote[0] == '-' || remote[0] == '.' {
		return false
	}
	for _, c := range remote {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// chain makes commits, each with issue's ledger as its one file, a chain
// whose first commit is on parents, and returns the last one's id (no
// index, no work tree, no ref written). In an ordinary repository agentx
// writes the chain's objects itself (loose.go); elsewhere it is one git
// fast-import for the whole chain; when git is set to sign commits, or
// [remote] require_signed, each commit is made by git commit-tree
// instead, which signs (neither of the others can).
func (g *Git) chain(ctx context.Context, issue int, parents []string, commits []Commit) (string, error) {
	if len(commits) == 0 {
		return "", errors.New("no commit to make")
	}
	for _, p := range parents { // never into a stream or a command line unchecked
		if !isHexID(p) {
			return "", fmt.Errorf("remote %s: %q is not a commit id", g.Remote, safetext.Line(p))
		}
	}
	if g.RequireSigned || len(g.signArgs(ctx)) > 0 {
		var sha string
		for _, c := range commits {
			var err error
			if sha, err = g.commitTree(ctx, issue, c, parents); err != nil {
				return "", err
			}
			parents = []string{sha}
		}
		return sha, nil
	}
	if g.objectDir != "" && !g.looseOff.Load() {
		if sha, err := g.looseChain(g.objectDir, g.syncLoose, issue, parents, commits); err == nil {
			return sha, nil
		}
		// fast-import from now on; it says what is wrong, if anything
		// still is
		g.looseOff.Store(true)
	}
	return g.fastImport(ctx, issue, parents, commits)
}

// importRef is the branch fast-import builds a chain on. It is never
// written: the stream resets it before its end, and only the commit's id
// (get-mark) is kept.
const importRef = "refs/agentx-import/chain"

// fastImport makes the chain with one git fast-import: each commit's
// blob, tree and commit, in a stream built here, dated as commit-tree
// dates them (commitTime), the last commit's id read back with get-mark.
func (g *Git) fastImport(ctx context.Context, issue int, parents []string, commits []Commit) (string, error) {
	var s bytes.Buffer
	ident := g.ident()
	data := func(b []byte) {
		fmt.Fprintf(&s, "data %d\n", len(b))
		s.Write(b)
		s.WriteByte('\n')
	}
	for i, c := range commits {
		s.WriteString("blob\nmark :" + strconv.Itoa(2*i+1) + "\n")
		data(c.Data)
		s.WriteString("commit " + importRef + "\nmark :" + strconv.Itoa(2*i+2) + "\nauthor " + ident + "committer " + ident)
		data([]byte(g.message(c)))
		if i == 0 {
			for j, p := range parents {
				if j == 0 {
					s.WriteString("from " + p + "\n")
				} else {
					s.WriteString("merge " + p + "\n")
				}
			}
		}
		s.WriteString("M 100644 :" + strconv.Itoa(2*i+1) + " " + File(issue) + "\n\n")
	}
	s.WriteString("get-mark :" + strconv.Itoa(2*len(commits)) + "\nreset " + importRef + "\n\ndone\n")
	out, err := g.git(ctx, s.Bytes(), nil, append(g.importArgs(ctx), "fast-import", "--quiet", "--done", "--date-format=raw")...)
	if err != nil {
		return "", err
	}
	sha := strings.TrimSpace(string(out))
	if !isHexID(sha) {
		return "", &GitError{Args: []string{"fast-import"}, Stderr: "unexpected answer to get-mark: " + sha, Err: errors.New("no commit id")}
	}
	return sha, nil
}

// commitTime is the date of the commits this host makes, in git's raw
// form ("1772100000 +0000"): by the clock that dates the change a commit
// records (Now, which Attach sets to the store's), so that other hosts
// compare the two with theirs (checkClock); the system's without one.
func (g *Git) commitTime() string {
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	return strconv.FormatInt(now().Unix(), 10) + " +0000"
}

// ident is the author and committer line of a commit made now, as
// fast-import and loose objects write it: agentx, of this host.
func (g *Git) ident() string {
	return "agentx <agentx@" + g.host() + "> " + g.commitTime() + "\n"
}

// message is c's commit message: the change, and the host that made it.
func (g *Git) message(c Commit) string { return c.Message + "\n\nhost: " + g.host() + "\n" }

// commitTree makes c a commit on parents with hash-object, mktree and
// commit-tree, signed when git is set to sign, and returns its id.
func (g *Git) commitTree(ctx context.Context, issue int, c Commit, parents []string) (string, error) {
	blob, err := g.git(ctx, c.Data, nil, "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	tree, err := g.git(ctx, []byte("100644 blob "+strings.TrimSpace(string(blob))+"\t"+File(issue)+"\n"), nil, "mktree")
	if err != nil {
		return "", err
	}
	args := append([]string{"commit-tree", strings.TrimSpace(string(tree)), "-F", "-"}, g.signArgs(ctx)...)
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	at := g.commitTime()
	env := []string{"GIT_AUTHOR_NAME=agentx", "GIT_AUTHOR_EMAIL=agentx@" + g.host(), "GIT_COMMITTER_NAME=agentx", "GIT_COMMITTER_EMAIL=agentx@" + g.host(),
		"GIT_AUTHOR_DATE=@" + at, "GIT_COMMITTER_DATE=@" + at}
	sha, err := g.git(ctx, []byte(g.message(c)), env, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(sha)), nil
}

func (g *Git) host() string {
	h := g.Host
	if h == "" {
		h = "localhost"
	}
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == '<' || r == '>' || r > '~' {
			return '-'
		}
		return r
	}, h)
}

// rejected reports whether git push --porcelain says ref was refused
// because the remote moved on (a stale lease, not a fast-forward).
func rejected(out []byte, ref string) bool {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, ":"+ref+"\t") {
			continue // another ref of the push
		}
		// A lease or fast-forward refusal, or the remote's ref locked by a
		// push landing at the same moment.
		if strings.HasPrefix(l, "!") && (strings.Contains(l, "stale info") || strings.Contains(l, "fetch first") ||
			strings.Contains(l, "non-fast-forward") || strings.Contains(l, "already exists") ||
			strings.Contains(l, "failed to lock") || strings.Contains(l, "cannot lock") || strings.Contains(l, "failed to update ref")) {
			return true
		}
	}
	return false
}

// landed reports whether git push --porcelain says ref was updated.
func landed(out []byte, ref string) bool {
	for _, l := range strings.Split(string(out), "\n") {
		flag, rest, ok := strings.Cut(l, "\t")
		if !ok || len(flag) != 1 || !strings.Contains(rest, ":"+ref+"\t") {
			continue
		}
		return flag == " " || flag == "+" || flag == "*" || flag == "="
	}
	return false
}

// Head asks the remote which commit issue's ref points to ("" when it has
// none), without fetching: git ls-remote.
func (g *Git) Head(ctx context.Context, issue int) (string, error) {
	out, err := g.exchange(ctx, "ls-remote", "--refs", "--", g.Remote, g.Ref(issue))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(out), "\n") {
		if sha, ref, ok := strings.Cut(l, "\t"); ok && ref == g.Ref(issue) && isHexID(sha) {
			return sha, nil
		}
	}
	return "", nil
}

// FetchAll fetches every issue's ref and returns the issues' heads as now
// known locally.
func (g *Git) FetchAll(ctx context.Context) (map[int]string, error) {
	specs := []string{"+" + g.Refs + "/*:" + g.Refs + "/*"}
	if g.queued() {
		marks := g.Refs + "-queue/*/mark" // the intents' marks, which PushOnCopy leases
		specs = append(specs, "+"+marks+":"+marks)
	}
	if err := g.fetchRefs(ctx, []string{"--prune"}, specs...); err != nil {
		return nil, err
	}
	return g.Local(ctx)
}

// Local returns the heads of the issues' refs in the local repository.
func (g *Git) Local(ctx context.Context) (map[int]string, error) {
	g.settings(ctx)
	if refs, ok := g.refFiles(g.Refs); ok {
		heads := map[int]string{}
		for name, sha := range refs {
			if n, ok := ledger.IssueOfFile(name + ".json"); ok {
				heads[n] = sha
			}
		}
		return heads, nil
	}
	out, err := g.git(ctx, nil, nil, "for-each-ref", "--format=%(objectname) %(refname)", g.Refs+"/")
	if err != nil {
		return nil, err
	}
	heads := map[int]string{}
	for _, l := range strings.Split(string(out), "\n") {
		sha, ref, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		if n, ok := ledger.IssueOfFile(strings.TrimPrefix(ref, g.Refs+"/") + ".json"); ok && isHexID(sha) {
			heads[n] = sha
		}
	}
	return heads, nil
}

// Check verifies that the workspace is in a git repository and the remote
// answers: git ls-remote of the ledgers' refs. It returns how many issues
// the remote holds.
func (g *Git) Check(ctx context.Context) (int, error) {
	if _, err := g.git(ctx, nil, nil, "rev-parse", "--git-dir"); err != nil {
		return 0, fmt.Errorf("%s is not in a git repository: the remote mode keeps the ledgers in the repository's remote (git init, git remote add origin URL): %w", g.Dir, err)
	}
	out, err := g.exchange(ctx, "ls-remote", "--refs", "--", g.Remote, g.Refs+"/*")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n, nil
}

// Log returns the chain of issue's local ref, newest first, at most max
// commits (more reports whether there were more): each commit's id, time,
// host and message (the change it made). The commits came from the
// remote: a message is one neutralised line, a host a plain name or "".
func (g *Git) Log(ctx context.Context, issue, max int) (cs []Change, more bool, err error) {
	sha, err := g.resolve(ctx, g.Ref(issue))
	if err != nil || sha == "" {
		return []Change{}, false, err
	}
	out, err := g.git(ctx, nil, nil, "log", "--format=%H%x00%cI%x00%B%x1e", "--max-count="+strconv.Itoa(max+1), sha)
	if err != nil {
		return nil, false, err
	}
	cs = []Change{}
	for _, rec := range strings.Split(string(out), "\x1e") {
		f := strings.SplitN(strings.TrimSpace(rec), "\x00", 3)
		if len(f) != 3 || !isHexID(f[0]) {
			continue
		}
		if len(cs) == max {
			return cs, true, nil
		}
		t, _ := time.Parse(time.RFC3339, f[1])
		subject, host := parseMessage(f[2])
		if len(subject) > maxMessage {
			subject = strings.ToValidUTF8(subject[:maxMessage], "") + "..."
		}
		cs = append(cs, Change{Commit: f[0], Time: ledger.T(t), Host: host, Message: safetext.Line(subject)})
	}
	return cs, false, nil
}

// maxMessage bounds the bytes of a commit message Log keeps.
const maxMessage = 500

// Change is one commit of an issue's chain.
type Change struct {
	Commit  string      `json:"commit"`
	Time    ledger.Time `json:"time"`
	Host    string      `json:"host,omitempty"`
	Message string      `json:"message"`
	// Refused says why this host refuses the commit (it does not only
	// append, or the ref was moved back to it); "" when it does not.
	Refused string `json:"refused,omitempty"`
}
