package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Queue is a Transport on which the hosts that keep losing their pushes
// on an issue take turns, oldest first, instead of backing off at random.
// With random backoff, the host that has just landed starts its next write
// while the hosts it beat are still waiting, and lands again: a few hosts
// land over and over while others lose ten times in a row. A waiter is a
// ref on the remote (Git: refs/agentx/clarifications-queue/issue-N/NAME,
// NAME sorting by when it joined), so that every host sees who waits: a
// host pushes only when no live waiter joined before it, and its landing
// push removes its own waiter.
type Queue interface {
	// Join adds a waiter on issue, made at now, pointing at version (a
	// commit the remote has), and returns its name.
	Join(ctx context.Context, issue int, version string, now time.Time) (string, error)
	// Waiters returns issue's head on the remote ("" when none) and the
	// names of its waiters, oldest first.
	Waiters(ctx context.Context, issue int) (head string, names []string, err error)
	// PushLeaving is Push, removing the waiters named by leave in the same
	// push (whether or not they are still there).
	PushLeaving(ctx context.Context, issue int, base Snapshot, commits []Commit, leave []string) (Snapshot, error)
	// Leave removes the waiters named by leave (a write that gave up).
	Leave(ctx context.Context, issue int, leave []string) error
}

// Turn-taking: a waiter ahead is taken for gone once it is older than
// waiterLife (no write waits that long in turn: past turnWait it competes
// again), or when the shared ledger has not moved for turnStall while
// someone was ahead (a waiter killed or paused); past turnWait a waiter
// stops waiting its turn. While waiting, the queue is read every
// turnPoll per waiter ahead (at most 8), half of it random.
var (
	waiterLife = 8 * time.Second
	turnStall  = time.Second
	turnWait   = 5 * time.Second
	turnPoll   = 15 * time.Millisecond
)

// waiterName is the name of a waiter that joined at now: the time in
// milliseconds (13 digits, so that names sort by it), this process, and
// this host, in characters a ref name takes.
func waiterName(now time.Time, host string) string {
	safe := strings.Map(func(r rune) rune {
		if r < 0x80 && refWord(string(r), "-_") {
			return r
		}
		return '_'
	}, host)
	if len(safe) > 64 {
		safe = safe[:64]
	}
	return fmt.Sprintf("%013d-%d-%s", now.UnixMilli(), os.Getpid(), safe)
}

// waiterTime is when the waiter name joined; ok false for a name that is
// not a waiter's, as waiterName makes them (anything else found in the
// queue is ignored, and never removed).
func waiterTime(name string) (time.Time, bool) {
	stamp, rest, ok := strings.Cut(name, "-")
	pid, host, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 || len(stamp) != 13 || pid == "" || len(host) > 64 || strings.Trim(stamp+pid, "0123456789") != "" || !refWord(host, "-_") {
		return time.Time{}, false
	}
	ms, _ := strconv.ParseInt(stamp, 10, 64) // 13 digits
	return time.UnixMilli(ms), true
}

// waiterState says whether name is a waiter's (ok) and, if so, whether it
// joined more than waiterLife ago by now (gone: nobody waits for it).
func waiterState(name string, now time.Time) (ok, gone bool) {
	at, ok := waiterTime(name)
	return ok, ok && now.Sub(at) > waiterLife
}

// refWord reports whether s holds only ASCII letters, digits and the
// bytes in extra (what a ref name component takes safely).
func refWord(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// turn is a write's place in an issue's queue.
type turn struct {
	q     Queue
	issue int
	name  string    // this write's waiter
	since time.Time // when it joined (this host's clock)
	gone  []string  // waiters ahead taken for gone: the landing push removes them
}

// waiting reports whether t holds a place in the queue it may still wait
// in (joined less than turnWait ago): its losses do not count against the
// write's attempts, as they are the turns of the waiters ahead.
func (t *turn) waiting(now time.Time) bool {
	return t != nil && now.Sub(t.since) <= turnWait
}

// leave is what the landing push removes.
func (t *turn) leave() []string {
	if t == nil {
		return nil
	}
	return append(slices.Clone(t.gone), t.name)
}

// wait waits until no live waiter is ahead of t's. now is this host's
// clock. An error is ctx's, or a queue that could not be read (then the
// write goes on: the fetch after it finds whether the remote is there).
func (t *turn) wait(ctx context.Context, now func() time.Time) error {
	lastHead, moved := "", time.Now()
	for {
		head, names, err := t.q.Waiters(ctx, t.issue)
		if err != nil {
			return err
		}
		if head != lastHead {
			lastHead, moved = head, time.Now()
		}
		var ahead, gone []string
		for _, n := range names {
			if n >= t.name {
				break
			}
			switch ok, old := waiterState(n, now()); {
			case old:
				gone = append(gone, n)
			case ok:
				ahead = append(ahead, n)
			}
		}
		stalled := len(ahead) > 0 && time.Since(moved) > turnStall
		if stalled {
			gone = append(gone, ahead...)
		}
		if len(ahead) == 0 || stalled || now().Sub(t.since) > turnWait {
			t.gone = gone
			return nil
		}
		d := turnPoll * time.Duration(min(len(ahead), 8))
		tm := time.NewTimer(d/2 + rand.N(d/2+1))
		select {
		case <-ctx.Done():
			tm.Stop()
			return context.Cause(ctx)
		case <-tm.C:
		}
	}
}

// queued reports whether the ledgers' refs have a queue beside them (its
// waiters, the intents and their mark): not where the ledgers are
// branches, whose waiters would be branches too.
func (g *Git) queued() bool { return !strings.HasPrefix(g.Refs, "refs/heads/") }

// queueRef is the ref prefix of issue's waiters.
func (g *Git) queueRef(issue int) string { return g.Refs + "-queue/issue-" + strconv.Itoa(issue) }

// errNoQueue is a remote whose ledgers are branches ([remote] branch):
// waiters there would be branches too, made and deleted by the dozen, and
// each may start a CI run or a notification; hosts back off at random.
var errNoQueue = errors.New("no queue where the ledgers are branches")

// Join implements Queue: a ref, created (never forced), pointing at
// version, which the remote has, so the push carries no object.
func (g *Git) Join(ctx context.Context, issue int, version string, now time.Time) (string, error) {
	if !g.queued() {
		return "", errNoQueue
	}
	if !isHexID(version) {
		return "", fmt.Errorf("remote %s: %q is not a commit id", g.Remote, version)
	}
	name := waiterName(now, g.host())
	ref := g.queueRef(issue) + "/" + name
	if _, err := g.exchange(ctx, "push", "--porcelain", "--no-verify", "--force-with-lease="+ref+":", "--", g.Remote, version+":"+ref); err != nil {
		return "", err
	}
	return name, nil
}

// Waiters implements Queue: one git ls-remote of the issue's ref and its
// waiters.
func (g *Git) Waiters(ctx context.Context, issue int) (string, []string, error) {
	if !g.queued() {
		return "", nil, errNoQueue
	}
	ref, prefix := g.Ref(issue), g.queueRef(issue)+"/"
	out, err := g.exchange(ctx, "ls-remote", "--refs", "--", g.Remote, ref, prefix+"*")
	if err != nil {
		return "", nil, err
	}
	head, names := parseWaiters(out, ref, prefix)
	return head, names, nil
}

// parseWaiters reads git ls-remote's answer (the remote's: untrusted):
// ref's commit, and the names under prefix, sorted.
func parseWaiters(out []byte, ref, prefix string) (head string, names []string) {
	for _, l := range strings.Split(string(out), "\n") {
		sha, name, ok := strings.Cut(l, "\t")
		if !ok || !isHexID(sha) {
			continue
		}
		switch {
		case name == ref:
			head = sha
		case strings.HasPrefix(name, prefix):
			if n := strings.TrimPrefix(name, prefix); !strings.Contains(n, "/") {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return head, names
}

// PushLeaving implements Queue.
func (g *Git) PushLeaving(ctx context.Context, issue int, base Snapshot, commits []Commit, leave []string) (Snapshot, error) {
	return g.push(ctx, issue, base, commits, g.deletions(issue, leave))
}

// Leave implements Queue.
func (g *Git) Leave(ctx context.Context, issue int, leave []string) error {
	return g.deleteRefs(ctx, g.deletions(issue, leave))
}

// deleteRefs pushes del, refspecs that delete refs, in one git push
// (none: nothing).
func (g *Git) deleteRefs(ctx context.Context, del []string) error {
	if len(del) == 0 {
		return nil
	}
	_, err := g.exchange(ctx, append([]string{"push", "--porcelain", "--no-verify", "--", g.Remote}, del...)...)
	return err
}

// deletions are the refspecs that remove the waiters leave names.
func (g *Git) deletions(issue int, leave []string) []string {
	var del []string
	for _, n := range leave {
		if _, ok := waiterTime(n); ok {
			del = append(del, ":"+g.queueRef(issue)+"/"+n)
		}
	}
	return del
}

// contendedFor is how long after a write of this host found another
// host's change on the issue (SyncState.Moved) its next writes look for
// waiters before they push.
const contendedFor = 3 * time.Second

// PruneWaiters removes, on every issue, the waiters that joined more than
// waiterLife ago by now (left by a process killed or stopped while it
// waited; nobody waits for them any more): one ls-remote, and one push
// when there are some. It returns how many.
func (g *Git) PruneWaiters(ctx context.Context, now time.Time) (int, error) {
	if !g.queued() {
		return 0, nil
	}
	prefix := g.Refs + "-queue/"
	out, err := g.exchange(ctx, "ls-remote", "--refs", "--", g.Remote, prefix+"*")
	if err != nil {
		return 0, err
	}
	var del []string
	for _, l := range strings.Split(string(out), "\n") {
		_, ref, _ := strings.Cut(l, "\t")
		dir, name, ok := strings.Cut(strings.TrimPrefix(ref, prefix), "/")
		if !strings.HasPrefix(ref, prefix) || !ok || !strings.HasPrefix(dir, "issue-") || !refWord(dir, "-") {
			continue
		}
		if _, gone := waiterState(name, now); gone {
			del = append(del, ":"+ref)
		}
	}
	return len(del), g.deleteRefs(ctx, del)
}
