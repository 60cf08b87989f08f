package remote

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// fetchRefs runs git fetch of refspecs, with the options opts. Another
// process of this host fetching the same ref at the same moment makes git
// fail to lock it ("cannot lock ref"): that is not an outage, and a moment
// later the fetch goes through.
func (g *Git) fetchRefs(ctx context.Context, opts []string, refspecs ...string) error {
	for try := 1; ; try++ {
		_, err := g.exchange(ctx, append(append(append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head"}, opts...), "--", g.Remote), refspecs...)...)
		var oe *offlineError
		if err == nil || try == 5 || !errors.As(err, &oe) || !strings.Contains(oe.why, "cannot lock ref") {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(time.Duration(try*20) * time.Millisecond):
		}
	}
}

// maxPulledCommits bounds the commits Hosts reads.
const maxPulledCommits = 500

// Hosts implements Origins: per clarification id, the host named by
// the newest commit between from (excluded; "" for the chain's start) and
// to that changed it, read from the commits' messages ("CLR-42-001
// answered by architect; ...", then "host: NAME"). The text came from the
// remote: a host is kept only if it is a plain name.
func (g *Git) Hosts(ctx context.Context, issue int, from, to string) (map[string]string, error) {
	if !isHexID(to) || (from != "" && !isHexID(from)) {
		return nil, fmt.Errorf("remote %s: not a commit id", g.Remote)
	}
	msgs, ok := g.linearMessages(ctx, from, to)
	if !ok {
		args := []string{"log", "--format=%B%x1e", fmt.Sprintf("--max-count=%d", maxPulledCommits), to}
		if from != "" {
			args = append(args, "^"+from)
		}
		out, err := g.git(ctx, nil, nil, args...)
		if err != nil {
			return nil, err
		}
		msgs = strings.Split(string(out), "\x1e")
	}
	hosts := map[string]string{}
	for _, msg := range msgs {
		subject, host := parseMessage(msg)
		for _, phrase := range strings.Split(subject, "; ") {
			id, _, _ := strings.Cut(phrase, " ")
			if _, seen := hosts[id]; !seen && id != "" {
				hosts[id] = host // "" when the newest does not say: unknown
			}
		}
	}
	for id, h := range hosts {
		if h == "" {
			delete(hosts, id)
		}
	}
	return hosts, nil
}

// linearMessages are the messages of the commits from to down to from
// (excluded), newest first, read through git cat-file, when they are a
// chain of one parent each (linearSince); ok false otherwise, or past
// maxPulledCommits.
func (g *Git) linearMessages(ctx context.Context, from, to string) ([]string, bool) {
	o, err := g.objects(ctx)
	if err != nil {
		return nil, false
	}
	defer o.close()
	var msgs []string
	for sha := to; len(msgs) < maxPulledCommits; {
		c, err := o.commit(sha)
		if err != nil || len(c.Parents) > 1 || len(c.Parents) == 0 && from != "" {
			return nil, false
		}
		msgs = append(msgs, c.Message)
		if len(c.Parents) == 0 || c.Parents[0] == from {
			return msgs, true
		}
		sha = c.Parents[0]
	}
	return nil, false
}

// linearDescends is Descends read through git cat-file, when the chain
// from version is one of commits of one parent each until it meets base
// or its root (then base is not in it); ok false otherwise (a merge, a
// commit not read, past maxLinear): git merge-base says.
func (g *Git) linearDescends(ctx context.Context, version, base string) (yes, ok bool) {
	o, err := g.objects(ctx)
	if err != nil {
		return false, false
	}
	defer o.close()
	for sha, n := version, 0; n < maxLinear; n++ {
		if sha == base {
			return true, true
		}
		c, err := o.commit(sha)
		if err != nil || len(c.Parents) > 1 {
			return false, false
		}
		if len(c.Parents) == 0 {
			return false, true
		}
		sha = c.Parents[0]
	}
	return false, false
}

// Committed implements Authored: the committer time of version, and
// whether its host: line names another host than this one (a commit
// naming none is taken as another's).
func (g *Git) Committed(ctx context.Context, version string) (time.Time, bool, error) {
	o, err := g.objects(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	defer o.close()
	c, err := o.commit(version)
	if err != nil {
		return time.Time{}, false, err
	}
	_, host := parseMessage(c.Message)
	return c.Time, host != hostName(g.host()), nil
}

// parseMessage splits a ledger commit's message into its subject and the
// host of its "host:" line ("" when there is none, or it is not a plain
// name).
func parseMessage(msg string) (subject, host string) {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	subject = strings.TrimSpace(lines[0])
	for _, l := range lines[1:] {
		if h, ok := strings.CutPrefix(strings.TrimSpace(l), "host: "); ok {
			host = hostName(strings.TrimSpace(h))
		}
	}
	return subject, host
}

// PlainHost reports whether h is a plain host name, as a commit's host:
// line must be to be taken: letters, digits, '.', '-', '_', at most 64
// bytes.
func PlainHost(h string) bool { return hostName(h) != "" }

// hostName returns h if it is a plain host name (letters, digits, '.',
// '-', '_', at most 64 bytes), else "".
func hostName(h string) string {
	if h == "" || len(h) > 64 {
		return ""
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return ""
		}
	}
	return h
}

// Descends implements Lineage: git merge-base --is-ancestor, in the
// local repository.
func (g *Git) Descends(ctx context.Context, version, base string) (bool, error) {
	if !isHexID(version) || !isHexID(base) {
		return false, fmt.Errorf("remote %s: not a commit id", g.Remote)
	}
	if yes, ok := g.linearDescends(ctx, version, base); ok {
		return yes, nil
	}
	_, err := g.git(ctx, nil, nil, "merge-base", "--is-ancestor", base, version)
	var ge *GitError
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && errors.As(ge.Err, &ee) && ee.ExitCode() == 1:
		return false, nil
	default:
		return false, err
	}
}
