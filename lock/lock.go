package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// Defaults for the zero values of Options, and fixed timings.
const (
	DefaultWait     = 5 * time.Second
	DefaultStaleAge = 30 * time.Second
	DefaultAgent    = "agentx"

	// Grace is how long an empty or unparseable lock file counts as held,
	// by its mod time: a tool that creates the file and then writes it may
	// be between the two.
	Grace = 2 * time.Second

	// Suffix is appended to a data file's path to name its lock.
	Suffix = ".lock"
	// TakeoverSuffix is appended to a lock's path to name its flock guard
	// file. The guard file is never deleted (see the package doc).
	TakeoverSuffix = ".takeover"
	// TempInfix is in the names of lock files being prepared:
	// <lock>.tmp-<random>.
	TempInfix = ".tmp-"
)

const (
	backoffBase = time.Millisecond // first retry sleeps up to this
	// backoffCap is kept short so a process that has waited long polls as
	// often as a newcomer: a long cap lets fresh arrivals barge ahead of old
	// waiters, which then starve under steady contention.
	backoffCap = 8 * time.Millisecond
	// tempRefresh: a prepared lock whose timestamp is older than this is
	// rewritten before the next link attempt, so a lock is never born old.
	tempRefresh = time.Second
	// releaseGuardWait bounds how long Release waits for the takeover
	// guard, which others hold for a few system calls at a time.
	releaseGuardWait = 5 * time.Second
)

// ErrNotHeld is returned (wrapped) by Release when the lock file is gone or
// now carries another holder's token (it was taken over as stale); the file
// is then left alone.
var ErrNotHeld = errors.New("lock not held")

// errGuardTimeout: the Wait budget ran out while waiting for the takeover guard.
var errGuardTimeout = errors.New("takeover guard busy")

// Test hooks; nil outside tests.
var (
	testHookBeforeTakeover func() // after a stale lock is seen, before the guard is taken
	linkFile               = os.Link
)

// Options tune Acquire. Zero values take the defaults.
type Options struct {
	Wait     time.Duration    // how long Acquire keeps trying; default 5s (measured on the real clock)
	StaleAge time.Duration    // a lock older than this is stale; default 30s
	Agent    string           // written into the lock file; default "agentx"
	Now      func() time.Time // clock for lock timestamps and staleness; default time.Now
}

func (o Options) withDefaults() Options {
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.StaleAge <= 0 {
		o.StaleAge = DefaultStaleAge
	}
	if o.Agent == "" {
		o.Agent = DefaultAgent
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Info is the JSON content of a lock file. Timestamp and Created hold the
// same RFC 3339 UTC instant with milliseconds: the AgentX TypeScript tool
// reads timestamp, the PowerShell tool deletes locks without created.
type Info struct {
	PID       int    `json:"pid"`
	Host      string `json:"host"`
	Agent     string `json:"agent"`
	Token     string `json:"token"`
	Timestamp string `json:"timestamp"`
	Created   string `json:"created"`
}

// describe names a holder for messages: agent "x" (pid 1 on host "h").
func (i *Info) describe() string {
	if i == nil {
		return "an unreadable lock file"
	}
	agent := i.Agent
	if agent == "" {
		agent = "unknown"
	}
	var where []string
	if i.PID > 0 {
		where = append(where, fmt.Sprintf("pid %d", i.PID))
	}
	if i.Host != "" {
		where = append(where, fmt.Sprintf("host %q", i.Host))
	} else {
		where = append(where, "no host recorded")
	}
	return fmt.Sprintf("agent %q (%s)", agent, strings.Join(where, ", "))
}

// TimeoutError is returned by Acquire when the lock stayed held for the
// whole Wait budget. Holder is the last lock content seen (nil if it could
// not be parsed); Age is how old that lock was.
type TimeoutError struct {
	Path     string
	Holder   *Info
	Age      time.Duration
	Waited   time.Duration
	StaleAge time.Duration // the stale age in force, to say when the lock goes stale
}

func (e *TimeoutError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lock %s: still held after waiting %s: held by %s", e.Path, round(e.Waited), e.Holder.describe())
	if e.Age > 0 {
		fmt.Fprintf(&b, " for %s", round(e.Age))
	}
	fmt.Fprintf(&b, "; if that process is gone, delete %s", e.Path)
	if left := e.StaleAge - e.Age; e.StaleAge > 0 && left > 0 {
		fmt.Fprintf(&b, " or wait %ds for it to go stale", int(math.Ceil(left.Seconds())))
	}
	b.WriteString("; `agentx doctor --fix` removes stale locks")
	return b.String()
}

// Lock is a held lock.
type Lock struct {
	path     string
	info     Info
	prev     *Info  // the stale lock this one replaced, if any
	reason   string // why prev was stale
	mu       sync.Mutex
	released bool
}

// Path returns the lock file's path.
func (l *Lock) Path() string { return l.path }

// Info returns the content written into the lock file.
func (l *Lock) Info() Info { return l.info }

// TakenOver reports the stale lock this Acquire removed to get the lock, and
// why it was stale; prev is nil if there was none, and an empty Info if the
// stale lock was unparseable.
func (l *Lock) TakenOver() (prev *Info, reason string) { return l.prev, l.reason }

var hostname = sync.OnceValue(func() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
})

// Hostname is the host name written into locks and compared by IsStale ("" if
// os.Hostname fails, which makes our locks look foreign: judged by age only).
func Hostname() string { return hostname() }

// Acquire takes the lock file dataPath+".lock". It retries with short
// exponential backoff and full jitter (1 ms doubling to 8 ms) until
// opts.Wait has passed, then returns a *TimeoutError; if ctx ends first it
// returns ctx.Err(), wrapped. A stale lock (see IsStale) is taken over:
// under the flock guard <lock>.takeover it is re-read, removed only if it is
// still the same file with the same content, and the link is tried again, so
// of several processes taking over one stale lock at most one wins.
func Acquire(ctx context.Context, dataPath string, opts Options) (*Lock, error) {
	opts = opts.withDefaults()
	path := dataPath + Suffix
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock %s: acquire: %w", path, err)
	}
	token, err := newToken()
	if err != nil {
		return nil, fmt.Errorf("lock %s: token: %w", path, err)
	}
	a := &acquirer{
		ctx:   ctx,
		path:  path,
		opts:  opts,
		token: token,
		host:  hostname(),
		start: time.Now(),
	}
	defer a.removeTemp()
	return a.run()
}

func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// stamp formats t as RFC 3339 UTC with milliseconds.
func stamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

type acquirer struct {
	ctx   context.Context
	path  string
	opts  Options
	token string
	host  string
	start time.Time

	info   Info   // content of the prepared lock
	data   []byte // info as JSON
	tmp    string // prepared temp file, "" if none
	tmpAt  time.Time
	noLink bool // the file system has no hard links: create with O_EXCL

	prev   *Info
	reason string
}

func (a *acquirer) run() (*Lock, error) {
	deadline := a.start.Add(a.opts.Wait)
	var last *snapshot
	for attempt := 0; ; attempt++ {
		won, err := a.tryCreate()
		if err != nil {
			return nil, err
		}
		if won {
			return a.lock(), nil
		}

		snap, err := readSnapshot(a.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Released between our attempt and our read: try again at once.
			if time.Now().Before(deadline) {
				continue
			}
		case err != nil:
			return nil, fmt.Errorf("lock %s: read holder: %w", a.path, err)
		default:
			last = snap
			if stale, reason := IsStale(a.staleInput(snap)); stale {
				won, err := a.takeover(snap, reason, deadline)
				switch {
				case errors.Is(err, errGuardTimeout):
					return nil, a.timeout(last)
				case err != nil:
					return nil, err
				case won:
					return a.lock(), nil
				}
			}
		}

		now := time.Now()
		if !now.Before(deadline) {
			return nil, a.timeout(last)
		}
		if err := sleep(a.ctx, min(backoff(attempt), deadline.Sub(now))); err != nil {
			return nil, fmt.Errorf("lock %s: acquire: %w", a.path, err)
		}
	}
}

// backoff returns a full-jitter delay: uniform in [0, min(cap, base*2^n)].
func backoff(attempt int) time.Duration {
	ceil := backoffCap
	if attempt < 16 {
		ceil = min(backoffCap, backoffBase<<attempt)
	}
	return mrand.N(ceil + 1)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (a *acquirer) staleInput(s *snapshot) StaleInput {
	return StaleInput{
		Info:     s.info,
		ParseErr: s.parseErr,
		ModTime:  s.fi.ModTime(),
		Now:      a.opts.Now(),
		Hostname: a.host,
		PIDAlive: PIDAlive,
		StaleAge: a.opts.StaleAge,
		Grace:    Grace,
	}
}

func (a *acquirer) timeout(last *snapshot) error {
	e := &TimeoutError{Path: a.path, Waited: time.Since(a.start), StaleAge: a.opts.StaleAge}
	if last != nil {
		e.Holder = last.info
		created := last.fi.ModTime()
		if last.info != nil {
			created, _ = last.info.createdAt(created)
		}
		e.Age = max(a.opts.Now().Sub(created), 0)
	}
	return e
}

func (a *acquirer) lock() *Lock {
	return &Lock{path: a.path, info: a.info, prev: a.prev, reason: a.reason}
}

// prepare (re)writes the lock content, and unless the file system lacks
// hard links, a synced temp file holding it, when there is none yet or its
// timestamp is more than tempRefresh old.
func (a *acquirer) prepare() error {
	now := a.opts.Now()
	if a.data != nil {
		if age := now.Sub(a.tmpAt); age >= 0 && age <= tempRefresh {
			return nil
		}
	}
	ts := stamp(now)
	a.info = Info{PID: os.Getpid(), Host: a.host, Agent: a.opts.Agent, Token: a.token, Timestamp: ts, Created: ts}
	data, err := json.Marshal(a.info)
	if err != nil {
		return fmt.Errorf("lock %s: encode: %w", a.path, err)
	}
	a.data = append(data, '\n')
	a.tmpAt = now
	a.removeTemp()
	if a.noLink {
		return nil
	}
	tmp, err := writeTemp(a.path, a.data)
	if err != nil {
		return fmt.Errorf("lock %s: prepare: %w", a.path, err)
	}
	a.tmp = tmp
	return nil
}

// writeTemp writes data to a new file <lock>.tmp-* in the lock's directory
// (created O_CREAT|O_EXCL) and closes it.
func writeTemp(lockPath string, data []byte) (name string, err error) {
	f, err := os.CreateTemp(filepath.Dir(lockPath), filepath.Base(lockPath)+TempInfix+"*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return "", err
	}
	// No fsync: other processes see the content through the page cache
	// before link() makes it the lock, which is all "never half-written"
	// needs. A lock need not survive a power loss: after a reboot its
	// holder is gone, and an empty or garbled lock is stale after Grace.
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return f.Name(), nil
}

func (a *acquirer) removeTemp() {
	if a.tmp != "" {
		_ = os.Remove(a.tmp)
		a.tmp = ""
	}
}

// tryCreate makes one attempt to create the lock file: link the prepared
// temp file to the lock name, which fails with EEXIST while someone holds it.
// It reports false, nil when the lock is held.
func (a *acquirer) tryCreate() (bool, error) {
	if err := a.prepare(); err != nil {
		return false, err
	}
	if !a.noLink {
		err := linkFile(a.tmp, a.path)
		switch {
		case err == nil:
			a.removeTemp()
			return true, nil
		case errors.Is(err, fs.ErrExist):
			return false, nil
		case !linkUnsupported(err):
			return false, fmt.Errorf("lock %s: link: %w", a.path, err)
		}
		// No hard links here: fall back to writing the lock in place.
		a.noLink = true
		a.removeTemp()
	}
	return a.createExcl()
}

// linkUnsupported reports whether link(2) failed because the file system has
// no hard links (some FUSE, network and FAT mounts).
func linkUnsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.EPERM) ||
		errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) ||
		errors.Is(err, syscall.ENOSYS)
}

// createExcl creates the lock file with O_CREAT|O_EXCL and writes it in
// place: the fallback where hard links are missing. Readers may then see it
// empty for an instant, which IsStale's grace window covers.
func (a *acquirer) createExcl() (bool, error) {
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock %s: create: %w", a.path, err)
	}
	_, werr := f.Write(a.data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(a.path)
		return false, fmt.Errorf("lock %s: write: %w", a.path, werr)
	}
	return true, nil
}

// takeover replaces the stale lock seen in snap. Under the guard flock it
// re-reads the lock and removes it only if it is still the same file with the
// same content, then makes one attempt to create ours. won is false if
// someone else got there first.
func (a *acquirer) takeover(seen *snapshot, reason string, deadline time.Time) (won bool, err error) {
	if testHookBeforeTakeover != nil {
		testHookBeforeTakeover()
	}
	unlock, err := lockGuard(a.ctx, a.path, deadline)
	if err != nil {
		if errors.Is(err, errGuardTimeout) {
			return false, err
		}
		return false, fmt.Errorf("lock %s: takeover: %w", a.path, err)
	}
	defer func() {
		if uerr := unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("lock %s: takeover: unlock guard: %w", a.path, uerr)
		}
	}()

	removed := false
	cur, err := readSnapshot(a.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Gone already: just try to create ours.
	case err != nil:
		return false, fmt.Errorf("lock %s: takeover: re-read: %w", a.path, err)
	case !cur.same(seen):
		return false, nil // replaced or taken over by someone else meanwhile
	default:
		if err := os.Remove(a.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("lock %s: takeover: remove stale lock: %w", a.path, err)
		}
		removed = true
	}
	won, err = a.tryCreate()
	if won && removed {
		a.prev, a.reason = seen.info, reason
		if a.prev == nil {
			a.prev = &Info{}
		}
	}
	return won, err
}

// lockGuard takes the flock on <lockPath>.takeover, retrying with backoff
// until ctx ends (its error is returned) or the deadline, if not zero,
// passes (errGuardTimeout). The guard is only ever held for a few system
// calls.
func lockGuard(ctx context.Context, lockPath string, deadline time.Time) (unlock func() error, err error) {
	fl := flock.New(lockPath+TakeoverSuffix, flock.SetPermissions(0o644))
	for attempt := 0; ; attempt++ {
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("guard %s: %w", fl.Path(), err)
		}
		if ok {
			return fl.Unlock, nil
		}
		d := backoff(attempt)
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return nil, errGuardTimeout
			}
			d = min(d, left)
		}
		if err := sleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

// Release removes the lock file if its token is still ours. If the file is
// gone or holds another token (the lock was taken over as stale), it is left
// alone and the error wraps ErrNotHeld. Releasing twice also gives ErrNotHeld.
// The removal happens under the takeover guard, so it cannot remove a lock
// that a concurrent takeover has just put in place of ours.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return fmt.Errorf("lock %s: release: already released: %w", l.path, ErrNotHeld)
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseGuardWait)
	defer cancel()
	unlock, err := lockGuard(ctx, l.path, time.Time{})
	if err != nil {
		return fmt.Errorf("lock %s: release: %w", l.path, err)
	}
	err = l.release()
	if uerr := unlock(); uerr != nil && err == nil {
		err = fmt.Errorf("lock %s: release: unlock guard: %w", l.path, uerr)
	}
	return err
}

func (l *Lock) release() error {
	cur, err := readSnapshot(l.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		l.released = true
		return fmt.Errorf("lock %s: release: the lock file is gone (taken over as stale?): %w", l.path, ErrNotHeld)
	case err != nil:
		return fmt.Errorf("lock %s: release: re-read: %w", l.path, err)
	case cur.info == nil || cur.info.Token != l.info.Token:
		l.released = true
		return fmt.Errorf("lock %s: release: now held by %s: %w", l.path, cur.info.describe(), ErrNotHeld)
	}
	if err := os.Remove(l.path); err != nil {
		return fmt.Errorf("lock %s: release: remove: %w", l.path, err)
	}
	l.released = true
	return nil
}

// RemoveIfStale removes the lock file at lockPath if IsStale says it is stale
// (with opts.StaleAge and opts.Now), through the same guarded re-check as a
// takeover, so it never removes a lock that was replaced meanwhile. It is
// meant for a doctor command. A missing lock file is not an error.
func RemoveIfStale(ctx context.Context, lockPath string, opts Options) (removed bool, reason string, err error) {
	opts = opts.withDefaults()
	seen, err := readSnapshot(lockPath)
	if errors.Is(err, fs.ErrNotExist) {
		return false, "no lock file", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("lock %s: read: %w", lockPath, err)
	}
	a := &acquirer{path: lockPath, opts: opts, host: hostname()}
	stale, reason := IsStale(a.staleInput(seen))
	if !stale {
		return false, reason, nil
	}
	unlock, err := lockGuard(ctx, lockPath, time.Time{})
	if err != nil {
		return false, reason, fmt.Errorf("lock %s: remove stale: %w", lockPath, err)
	}
	defer func() {
		if uerr := unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("lock %s: remove stale: unlock guard: %w", lockPath, uerr)
		}
	}()
	cur, err := readSnapshot(lockPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, "no lock file", nil
	case err != nil:
		return false, reason, fmt.Errorf("lock %s: remove stale: re-read: %w", lockPath, err)
	case !cur.same(seen):
		return false, "the lock changed while checking it; left alone", nil
	}
	if err := os.Remove(lockPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, reason, fmt.Errorf("lock %s: remove stale: %w", lockPath, err)
	}
	return true, reason, nil
}
