package lock

import (
	"context"
	"encoding/binary"
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

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/words"
)

// Defaults for the zero values of Options, and fixed timings.
const (
	DefaultWait     = 5 * time.Second
	DefaultStaleAge = 30 * time.Second
	// MinStaleAge is the floor of Options.StaleAge: a shorter stale age
	// would let a foreign tool's live lock be removed under it.
	MinStaleAge  = time.Second
	DefaultAgent = "agentx"

	// Grace is how long an empty or unparseable lock file counts as held,
	// by its mod time: a tool that creates the file and then writes it may
	// be between the two.
	Grace = 2 * time.Second

	// Suffix is appended to a data file's path to name its lock.
	Suffix = ".lock"
	// QueueSuffix is appended to a lock's path to name the file agentx
	// processes queue on in the kernel (flock). It is never deleted: a
	// deleted flock file lets two processes "hold" it at once.
	QueueSuffix = ".queue"
	// TempInfix is in the names of lock files being prepared:
	// <lock>.tmp-<random>.
	TempInfix = ".tmp-"
)

const (
	// Foreign holders (tools that do not queue in the kernel) are polled
	// with full-jitter backoff from pollBase doubling to pollCap.
	pollBase = time.Millisecond
	pollCap  = 25 * time.Millisecond
	// tempRefresh: a prepared lock whose timestamp is older than this is
	// rewritten before the next link attempt, so a lock is never born old.
	tempRefresh = time.Second
)

// ErrNotHeld is returned (wrapped) by Release and Check when the lock file
// is gone or now carries another holder's token.
var ErrNotHeld = errors.New("lock not held")

// Test hooks; nil outside tests.
var (
	linkFile = os.Link
)

// Options tune Acquire. Zero values take the defaults.
type Options struct {
	Wait     time.Duration    // how long Acquire may wait in all; default 5s (measured on the real clock)
	StaleAge time.Duration    // a foreign lock older than this is stale; default 30s, at least MinStaleAge
	Agent    string           // written into the lock file; default "agentx"
	Now      func() time.Time // clock for lock timestamps and staleness; default time.Now
	Fair     Fairness         // a window for foreign pollers in a long run of agentx holders; zero: none (see Fairness)
	Hand     *Handoff         // lets a writer that finds the lock held hand its change to the holder; nil: none (see Handoff)
}

func (o Options) withDefaults() Options {
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.StaleAge <= 0 {
		o.StaleAge = DefaultStaleAge
	}
	o.StaleAge = max(o.StaleAge, MinStaleAge)
	if o.Agent == "" {
		o.Agent = DefaultAgent
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Info is the JSON content of a lock file. Timestamp and Created hold the
// same instant, with milliseconds, in the forms the two AgentX tools read
// right: Timestamp is RFC 3339 UTC ("...T10:00:00.123Z"), which the
// TypeScript tool reads (new Date(timestamp)); Created is the UTC wall time
// with no zone designator ("...T10:00:00.123"), which the PowerShell tool
// subtracts from [datetime]::UtcNow as it stands (see CreatedStamp). The
// PowerShell tool deletes a lock without created.
type Info struct {
	PID       int    `json:"pid"`
	Host      string `json:"host"`
	Agent     string `json:"agent"`
	Token     string `json:"token"`
	Timestamp string `json:"timestamp"`
	Created   string `json:"created"`
}

// fromAgentx reports whether an agentx process wrote the lock (only agentx
// writes a token).
func (i *Info) fromAgentx() bool { return i != nil && i.Token != "" }

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
// whole Wait budget. Holder is the last lock content seen (nil if none
// could be read); Age is how old that lock was. Queued is how many other
// agentx processes were waiting for the lock in the kernel when this one
// gave up, Ahead how many of them had queued before it (-1: unknown on
// this system). Foreign says the holder is a tool
// that does not queue in the kernel (an AgentX TypeScript or PowerShell
// tool, or a lock file left by one).
type TimeoutError struct {
	Path     string
	Holder   *Info
	Age      time.Duration
	Waited   time.Duration
	StaleAge time.Duration // the stale age in force, to say when a foreign lock goes stale
	Queued   int
	Ahead    int
	Foreign  bool
	// HolderStopped and HolderRunning say, where the system tells (Linux),
	// whether the holder, a process of this host, is paused or running;
	// neither when it cannot be told.
	HolderStopped, HolderRunning bool
}

func (e *TimeoutError) Error() string {
	var b strings.Builder
	b.WriteString(e.Summary())
	if e.Foreign {
		if left := e.StaleAge - e.Age; left > 0 {
			fmt.Fprintf(&b, "; it goes stale in %ds (stale age %s) and is then taken over", int(math.Ceil(left.Seconds())), e.StaleAge)
		}
		fmt.Fprintf(&b, "; if that tool is gone, delete %s", e.Path)
		return b.String()
	}
	local := e.Holder != nil && e.Holder.PID > 0 && e.Holder.Host == Hostname()
	switch {
	case local && e.HolderStopped:
		fmt.Fprintf(&b, "; the holder (pid %d) is paused (stopped by a signal or a debugger): resume it (kill -CONT %d) and its write finishes; its lock is freed the moment it exits", e.Holder.PID, e.Holder.PID)
	case local && e.HolderRunning:
		// a running holder is slow, not stuck, until it has held the
		// lock far longer than any write takes: only then advise ending it
		fmt.Fprintf(&b, "; the holder (pid %d) is running: a slow write (a loaded machine, a slow disk, a remote exchange) or a queue of writers; retry, or wait longer ([lock] wait in .agentx/config.toml)", e.Holder.PID)
		if e.Age >= time.Minute {
			fmt.Fprintf(&b, "; it has held the lock for over a minute, so it may be stuck: if it does not finish, end it (kill %d)", e.Holder.PID)
		}
		return b.String()
	case local:
		fmt.Fprintf(&b, "; agentx waiters are served one at a time and a write holds the lock for milliseconds, so a long hold means the holder is stuck or paused: resume it (kill -CONT %d) or end it (kill %d); its lock is freed the moment it exits", e.Holder.PID, e.Holder.PID)
	default:
		b.WriteString("; agentx waiters are served one at a time and a write holds the lock for milliseconds, so a long hold means the holder is stuck or paused: resume or end that process; its lock is freed the moment it exits")
	}
	b.WriteString("; or retry with a longer wait ([lock] wait in .agentx/config.toml)")
	return b.String()
}

// Summary is what was found, without the advice: the lock, the wait, who
// held it and for how long, the queue, and whether the holder was
// another tool.
func (e *TimeoutError) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lock %s: still held after waiting %s", e.Path, round(e.Waited))
	if e.Holder != nil || e.Age > 0 {
		fmt.Fprintf(&b, ": held by %s", e.Holder.describe())
		if e.Age > 0 {
			fmt.Fprintf(&b, " for %s", round(e.Age))
		}
	}
	if e.Queued > 0 {
		fmt.Fprintf(&b, "; %d other agentx %s waiting for it", e.Queued, words.Plural(e.Queued, "process was", "processes were"))
		if e.Ahead >= 0 {
			fmt.Fprintf(&b, ", %d of them queued before this one", e.Ahead)
		}
		b.WriteString(" (the lock goes to one waiter at a time, each holding it for one write: the wait grows with the queue)")
	}
	if e.Foreign {
		b.WriteString("; the holder is not an agentx process")
	}
	return b.String()
}

// holderState fills in whether the holder, a process of this host, is
// stopped or running, where the system says.
func (e *TimeoutError) holderState() {
	if e.Holder == nil || e.Holder.PID <= 0 || e.Holder.Host != Hostname() || e.Foreign {
		return
	}
	if stopped, known := pidStopped(e.Holder.PID); known {
		e.HolderStopped, e.HolderRunning = stopped, !stopped
	}
}

// NotRegularError is a lock (or queue) path that is a symlink or another
// non-regular file. agentx never follows or removes it: a person must.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a regular file"
	if e.Mode&fs.ModeSymlink != 0 {
		what = "a symbolic link"
	}
	return fmt.Sprintf("lock %s: is %s; agentx neither follows nor removes it: check where it came from, then delete it (rm %s)", e.Path, what, e.Path)
}

// LostError says the lock file no longer carries the caller's token: a
// foreign tool removed it as stale (the holder was paused past the stale
// age) and someone else may hold it now. Whatever the caller was about to
// write must not be written.
type LostError struct {
	Path string
	Now  *Info // the lock file's content now; nil if it is gone
}

func (e *LostError) Error() string {
	now := "the lock file is gone"
	if e.Now != nil {
		now = "it is now held by " + e.Now.describe()
	}
	return fmt.Sprintf("lock %s: lost while held (this process was paused or slow past the stale age and another tool took the lock over): %s; nothing was written, run the command again", e.Path, now)
}

func (e *LostError) Unwrap() error { return ErrNotHeld }

// Lock is a held lock.
type Lock struct {
	path     string
	info     Info
	queue    *flock.Flock
	run      time.Time // when the run of agentx holders this one is part of began; zero: no fairness
	foreign  time.Time // when a foreign tool's lock was last seen on this file (see Fairness); zero: never
	prev     *Info     // the stale lock this one replaced, if any
	reason   string    // why prev was stale
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

// Acquire takes the lock of dataPath in two steps:
//
//  1. it queues in the kernel for an exclusive flock on dataPath+".lock.queue",
//     sleeping until the holder releases it (no polling), for at most
//     opts.Wait or until ctx ends; the kernel frees it when its holder
//     exits, so a crashed holder costs nothing and a live one, even
//     paused, is never taken over;
//  2. holding that, and after a window for foreign pollers if opts.Fair
//     calls for one (see Fairness), it creates the AgentX lock file
//     dataPath+".lock" exclusively (a prepared temp file hard-linked into place), the
//     protocol foreign AgentX writers follow. A lock file found there was
//     written by a foreign tool or left by a dead process (any live agentx
//     holder would hold the kernel lock): a stale one (IsStale) is
//     removed, a live foreign one is polled with backoff until it goes.
//
// When the budget runs out it returns a *TimeoutError; when ctx ends,
// ctx.Err() wrapped. A lock path that is a symlink gives a
// *NotRegularError at once.
func Acquire(ctx context.Context, dataPath string, opts Options) (*Lock, error) {
	opts = opts.withDefaults()
	path := dataPath + Suffix
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock %s: acquire: %w", path, err)
	}
	a := &acquirer{
		ctx:   ctx,
		path:  path,
		opts:  opts,
		token: newToken(),
		host:  hostname(),
		start: time.Now(),
	}
	defer a.removeTemp()
	return a.run()
}

// newToken is a lock's owner token: 128 random bits from the runtime's
// generator (ChaCha8, seeded by the system at start), which makes two
// holders' tokens differ without linking the crypto packages into every
// command.
func newToken() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], mrand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], mrand.Uint64())
	return hex.EncodeToString(b[:])
}

// stamp formats t as RFC 3339 UTC with milliseconds: a lock's timestamp.
func stamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// CreatedStamp formats t as a lock's created: the UTC wall time with
// milliseconds and no zone designator. The AgentX PowerShell tool computes a
// lock's age as [datetime]::UtcNow minus [datetime]$lock.created, and .NET
// subtracts the clock readings whatever their kind. A time with a zone
// ("Z" or "+00:00") is turned into local time on the way in (by the
// [datetime] cast of a string in Windows PowerShell; by ConvertFrom-Json
// for an offset in PowerShell 7), so west of UTC a live lock looked hours
// old and was deleted, and east of UTC a dead one never went stale. A time
// without a zone is taken as written by both, which is UTC here. agentx
// reads a created without a zone as UTC (and still reads the RFC 3339 form
// it wrote before).
func CreatedStamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000")
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
	// lostTemps counts prepared files removed before they were linked (a
	// cleanup of temp files, such as doctor --fix's, judging by a clock
	// set ahead): each is prepared again, a few times.
	lostTemps int
	// foreign is when a foreign tool's lock was last seen on this file:
	// read from the queue file (fairTurn), or now when create or a window
	// finds one
	foreign time.Time

	prev   *Info
	reason string

	posted bool // opts.Hand's Post was called
}

func (a *acquirer) deadline() time.Time { return a.start.Add(a.opts.Wait) }

func (a *acquirer) run() (*Lock, error) {
	q, err := a.queue()
	if err != nil {
		return nil, err
	}
	if a.posted && a.opts.Hand.Done() {
		_ = q.Unlock()
		return nil, ErrHanded
	}
	run, err := a.fairTurn()
	if err != nil {
		_ = q.Unlock()
		return nil, err
	}
	lk, err := a.create()
	if err != nil {
		_ = q.Unlock()
		return nil, err
	}
	lk.queue, lk.run, lk.foreign = q, run, a.foreign
	return lk, nil
}

// queue takes the kernel lock on the queue file, sleeping in the kernel
// while another process holds it. A wait that gives up leaves a goroutine
// behind that releases the lock the moment the kernel grants it.
func (a *acquirer) queue() (*flock.Flock, error) {
	qpath := a.path + QueueSuffix
	if err := os.MkdirAll(filepath.Dir(qpath), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", a.path, err)
	}
	fl := flock.New(qpath, flock.SetFlag(os.O_CREATE|os.O_RDONLY|noFollow), flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, a.queueErr(qpath, err)
	}
	if ok {
		return fl, nil
	}
	if a.opts.Hand != nil {
		a.opts.Hand.Post()
		a.posted = true
	}
	done := make(chan error, 1)
	go func() { done <- fl.Lock() }()
	timer := time.NewTimer(time.Until(a.deadline()))
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return nil, a.queueErr(qpath, err)
		}
		return fl, nil
	case <-a.ctx.Done():
		abandon(fl, done)
		return nil, fmt.Errorf("lock %s: acquire: %w", a.path, a.ctx.Err())
	case <-timer.C:
		queued, ahead := queueOf(qpath)
		abandon(fl, done)
		e := &TimeoutError{Path: a.path, Waited: time.Since(a.start), StaleAge: a.opts.StaleAge, Queued: queued, Ahead: ahead}
		if snap, err := readSnapshot(a.path); err == nil {
			e.Holder, e.Age = snap.info, a.age(snap)
		}
		e.holderState()
		return nil, e
	}
}

// abandon leaves a kernel wait: if the lock is granted after all, it is
// released at once.
func abandon(fl *flock.Flock, done <-chan error) {
	go func() {
		if <-done == nil {
			_ = fl.Unlock()
		}
	}()
}

func (a *acquirer) queueErr(qpath string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return &NotRegularError{Path: qpath, Mode: fs.ModeSymlink}
	}
	if fi, lerr := os.Lstat(qpath); lerr == nil && !fi.Mode().IsRegular() {
		return &NotRegularError{Path: qpath, Mode: fi.Mode()}
	}
	return fmt.Errorf("lock %s: queue: %w", a.path, err)
}

// create makes the AgentX lock file while the kernel lock is held.
func (a *acquirer) create() (*Lock, error) {
	deadline := a.deadline()
	for attempt := 0; ; attempt++ {
		won, err := a.tryCreate()
		if err != nil {
			return nil, err
		}
		if won {
			return &Lock{path: a.path, info: a.info, prev: a.prev, reason: a.reason}, nil
		}
		snap, err := readSnapshot(a.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // a foreign tool released it between our attempt and our read
		case err != nil:
			return nil, err
		}
		if stale, reason := IsStale(a.staleInput(snap)); stale {
			if err := os.Remove(a.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("lock %s: remove stale lock: %w", a.path, err)
			}
			a.prev, a.reason = snap.info, reason
			if a.prev == nil {
				a.prev = &Info{}
			}
			continue
		}
		now := time.Now()
		a.sawForeign(snap, now)
		if !now.Before(deadline) {
			return nil, &TimeoutError{Path: a.path, Waited: now.Sub(a.start), StaleAge: a.opts.StaleAge,
				Holder: snap.info, Age: a.age(snap), Foreign: true, Queued: -1, Ahead: -1}
		}
		if err := sleep(a.ctx, min(backoff(attempt), deadline.Sub(now))); err != nil {
			return nil, fmt.Errorf("lock %s: acquire: %w", a.path, err)
		}
	}
}

// age is how old the lock in snap is.
func (a *acquirer) age(s *snapshot) time.Duration {
	created := s.fi.ModTime()
	if s.info != nil {
		created, _ = s.info.createdAt(created)
	}
	return max(a.opts.Now().Sub(created), 0)
}

// backoff returns a full-jitter delay: uniform in [0, min(cap, base*2^n)].
func backoff(attempt int) time.Duration {
	ceil := pollCap
	if attempt < 16 {
		ceil = min(pollCap, pollBase<<attempt)
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

// staleInput judges a lock file found while holding the kernel lock:
// Orphaned, since no live agentx process on this host can hold it.
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
		Orphaned: true,
	}
}

// prepare (re)writes the lock content, and unless the file system lacks
// hard links, a temp file holding it, when there is none yet or its
// timestamp is more than tempRefresh old.
func (a *acquirer) prepare() error {
	now := a.opts.Now()
	if a.data != nil {
		if age := now.Sub(a.tmpAt); age >= 0 && age <= tempRefresh {
			return nil
		}
	}
	a.info = Info{PID: os.Getpid(), Host: a.host, Agent: a.opts.Agent, Token: a.token, Timestamp: stamp(now), Created: CreatedStamp(now)}
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

// writeTemp writes data to <lock>.tmp-held in the lock's directory
// (created O_CREAT|O_EXCL, once what a killed process left there is
// removed: only the holder of the kernel lock prepares the lock file, so
// the name is its alone) and closes it.
func writeTemp(lockPath string, data []byte) (name string, err error) {
	f, err := atomicfile.CreateAfresh(lockPath + TempInfix + "held")
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
	// holder is gone.
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
// temp file to the lock name (link(2) never follows a symlink there). It
// reports false, nil when a lock file is in the way.
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
		case errors.Is(err, fs.ErrNotExist) && a.lostTemps < 3:
			a.lostTemps++
			a.tmp, a.data = "", nil
			return a.tryCreate()
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
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o644)
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

// Check reports whether the lock file still carries this lock's token: a
// *LostError if a foreign tool took it over meanwhile. A writer calls it
// right before it makes its write visible.
func (l *Lock) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return fmt.Errorf("lock %s: check: already released: %w", l.path, ErrNotHeld)
	}
	return l.check()
}

func (l *Lock) check() error {
	cur, err := readSnapshot(l.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &LostError{Path: l.path}
	case err != nil:
		return err
	case cur.info == nil || cur.info.Token != l.info.Token:
		return &LostError{Path: l.path, Now: cur.info}
	}
	return nil
}

// Release removes the lock file if its token is still ours, then frees the
// kernel lock, waking the next waiter. If the file is gone or holds another
// token it is left alone and the error wraps ErrNotHeld. Releasing twice
// also gives ErrNotHeld.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return fmt.Errorf("lock %s: release: already released: %w", l.path, ErrNotHeld)
	}
	l.released = true
	err := l.check()
	if err == nil {
		if rerr := os.Remove(l.path); rerr != nil {
			err = fmt.Errorf("lock %s: release: remove: %w", l.path, rerr)
		}
	} else {
		err = fmt.Errorf("lock %s: release: %w", l.path, err)
	}
	if l.queue != nil {
		if !l.run.IsZero() { // for the next holder's fairTurn, before it can run
			writeRun(l.path+QueueSuffix, runState{Start: l.run, Release: time.Now(), Foreign: l.foreign})
		}
		if uerr := l.queue.Unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("lock %s: release: unlock queue: %w", l.path, uerr)
		}
	}
	return err
}

// Examination is what Examine found about a lock file.
type Examination struct {
	Held    bool   // a live agentx process holds the kernel lock
	Stale   bool   // nobody holds it: it may be removed
	Removed bool   // RemoveIfStale removed it
	Reason  string // why, for messages
}

// tryQueue takes the kernel lock of lockPath without waiting: ok is false
// when a live agentx process holds it.
func tryQueue(lockPath string) (fl *flock.Flock, ok bool, err error) {
	fl = flock.New(lockPath+QueueSuffix, flock.SetFlag(os.O_CREATE|os.O_RDONLY|noFollow), flock.SetPermissions(0o644))
	ok, err = fl.TryLock()
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: queue: %w", lockPath, err)
	}
	return fl, ok, nil
}

// heldByAgentx is the reason given for a lock a live agentx process holds.
const heldByAgentx = "held by a live agentx process (it holds the kernel lock)"

// Examine judges the lock file at lockPath for a doctor command: held by a
// live agentx process (it holds the kernel lock), or stale by the same
// rules Acquire applies. A symlink or other non-regular file gives a
// *NotRegularError; a missing file an error matching fs.ErrNotExist.
func Examine(lockPath string, opts Options) (Examination, error) {
	return examine(lockPath, opts, false)
}

// RemoveIfStale removes the lock file at lockPath if Examine finds it
// stale, holding the kernel lock meanwhile so that no agentx process can
// take or release it in between. It is meant for a doctor command. A
// missing lock file is not an error.
func RemoveIfStale(lockPath string, opts Options) (removed bool, reason string, err error) {
	ex, err := examine(lockPath, opts, true)
	if errors.Is(err, fs.ErrNotExist) {
		return false, "no lock file", nil
	}
	return ex.Removed, ex.Reason, err
}

func examine(lockPath string, opts Options, remove bool) (Examination, error) {
	opts = opts.withDefaults()
	if _, err := readSnapshot(lockPath); err != nil {
		return Examination{}, err // missing, or not a regular file
	}
	var ex Examination
	held, err := IfIdle(lockPath, func() error {
		snap, err := readSnapshot(lockPath)
		if err != nil {
			return err
		}
		a := &acquirer{path: lockPath, opts: opts, host: hostname()}
		ex.Stale, ex.Reason = IsStale(a.staleInput(snap))
		if ex.Stale && remove {
			if err := os.Remove(lockPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("lock %s: remove stale: %w", lockPath, err)
			}
			ex.Removed = true
		}
		return nil
	})
	if held {
		return Examination{Held: true, Reason: heldByAgentx}, nil
	}
	return ex, err
}
