package lock

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// Fairness lets a foreign tool that polls for the lock file (the AgentX
// TypeScript and PowerShell tools: an O_EXCL create tried about five times
// in three seconds, 200 ms to 1.6 s apart) in while agentx processes hand
// the lock to one another. Without it the lock file is removed and made
// again microseconds apart for as long as agentx processes queue, and such
// a tool almost never finds it absent.
//
// A run is a stretch of agentx holders that followed one another with the
// lock file absent for less than Window in between. A holder that finds the
// run older than Bound leaves the lock file absent for Window first, holding
// only the kernel lock, then starts a new run. If a foreign tool creates the
// lock file in that window, the holder waits for it to go and leaves it
// absent for another Window, for foreign tools that tried meanwhile, up to
// FairChains windows in all. A holder after a quiet spell pays nothing; a
// burst of agentx writers pays at most Window once per Bound (plus the
// windows foreign tools use). Zero in either field turns it off.
//
// The windows are paid only where a foreign tool writes: only once a
// foreign tool's lock file has been seen on this ledger's lock within
// ForeignMemory (by a holder's create, which finds it while holding the
// kernel lock, or during a window), or noted by Lock.NoteForeign (a
// ledger found written by a foreign tool). Where none has been, agentx holders hand the
// lock straight to one another, as with fairness off. The cost of that: a
// foreign tool's very first write on an issue, tried while agentx writers
// keep its lock busy for longer than the tool polls (about 3 s), can time
// out; from its first lock seen on, it gets its turns.
type Fairness struct {
	Bound  time.Duration // how long agentx holders may follow one another before a window
	Window time.Duration // how long the lock file is left absent
}

// Defaults chosen by measure: see docs/file-formats.md ("A fair hand-off").
// A poller that tries 0, 200 and 600 ms after it starts (TypeScript), or 0,
// 200, 500 and 950 ms (PowerShell), meets an absence of 400 ms as long as no
// stretch of agentx holding lasts 500 ms.
const (
	DefaultFairBound  = 400 * time.Millisecond
	DefaultFairWindow = 400 * time.Millisecond
	// FairChains bounds the windows one holder leaves open in a row while
	// foreign tools keep coming in: a holder (and agentx processes queued
	// behind it) waits at most FairChains windows plus the foreign holds.
	FairChains = 4
	// fairPoll is how often the lock file is looked at during a window.
	fairPoll = 10 * time.Millisecond
	// ForeignMemory is how long a foreign tool's lock, once seen, keeps
	// the windows paid: a day, so a tool used now and then keeps its turns.
	ForeignMemory = 24 * time.Hour
)

func (f Fairness) on() bool { return f.Bound > 0 && f.Window > 0 }

// runState is what the queue file records: when the current run of agentx
// holders began, when the last of them released the lock, and when a
// foreign tool's lock was last seen (zero: never). Only the holder of the
// kernel lock reads or writes it.
type runState struct {
	Start   time.Time
	Release time.Time
	Foreign time.Time
}

// runMagic begins the queue file's content.
const runMagic = "agentx-run"

// formatRun is the queue file's content: "agentx-run START RELEASE
// FOREIGN\n", Unix times in nanoseconds (FOREIGN 0: never seen), 20 digits
// wide, so that every write is the same length and overwrites the last in
// place.
func formatRun(s runState) []byte {
	var foreign int64
	if !s.Foreign.IsZero() {
		foreign = s.Foreign.UnixNano()
	}
	return fmt.Appendf(nil, "%s %020d %020d %020d\n", runMagic, s.Start.UnixNano(), s.Release.UnixNano(), foreign)
}

// parseRun reads a queue file's content: what formatRun writes, or the
// earlier line without FOREIGN. Anything else (an empty file, damage)
// reports false: no run is known, and the next holder starts one.
func parseRun(data []byte) (runState, bool) {
	f := bytes.Fields(data)
	if (len(f) != 3 && len(f) != 4) || string(f[0]) != runMagic || !bytes.HasSuffix(data, []byte("\n")) {
		return runState{}, false
	}
	start, err1 := strconv.ParseInt(string(f[1]), 10, 64)
	release, err2 := strconv.ParseInt(string(f[2]), 10, 64)
	if err1 != nil || err2 != nil || start <= 0 || release < start {
		return runState{}, false
	}
	s := runState{Start: time.Unix(0, start), Release: time.Unix(0, release)}
	if len(f) == 4 {
		foreign, err := strconv.ParseInt(string(f[3]), 10, 64)
		if err != nil || foreign < 0 {
			return runState{}, false
		}
		if foreign > 0 {
			s.Foreign = time.Unix(0, foreign)
		}
	}
	return s, true
}

// foreignAbout reports whether a foreign tool's lock was seen within
// ForeignMemory of now (a date ahead of now, from a clock set back, counts:
// the windows are the safe side).
func (s runState) foreignAbout(now time.Time) bool {
	return !s.Foreign.IsZero() && now.Sub(s.Foreign) < ForeignMemory
}

// continuing reports whether a holder at now continues the run s: the lock
// file has been absent for less than window since s's last release. A date
// in the future (a clock set back) continues nothing.
func (s runState) continuing(now time.Time, window time.Duration) bool {
	return !s.Release.After(now) && now.Sub(s.Release) < window
}

// readRun reads the run state from the queue file at qpath; false if there
// is none (or it cannot be read: the state is advice, never a reason to
// fail).
func readRun(qpath string) (runState, bool) {
	f, err := os.OpenFile(qpath, os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return runState{}, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 128))
	if err != nil {
		return runState{}, false
	}
	return parseRun(data)
}

// writeRun records s in the queue file at qpath. The caller holds the
// kernel lock on it. It overwrites in place and then cuts what is longer
// (an empty file or one of the same length: nothing), never truncating to
// zero first, which ext4 answers by flushing the file to disk on close
// (0.6 ms a write, measured). A failure only costs the next holder its
// knowledge of the run, so it is ignored.
func writeRun(qpath string, s runState) {
	f, err := os.OpenFile(qpath, os.O_WRONLY|noFollow|nonBlock, 0)
	if err != nil {
		return
	}
	b := formatRun(s)
	if _, err := f.WriteAt(b, 0); err == nil {
		if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(b)) {
			_ = f.Truncate(int64(len(b)))
		}
	}
	_ = f.Close()
}

// fairTurn runs, holding the kernel lock, before the lock file is created:
// it returns when this holder's run began (zero with fairness off), after
// leaving the lock file absent for a window if the run it continues is
// older than the bound.
func (a *acquirer) fairTurn() (time.Time, error) {
	fair := a.opts.Fair
	if !fair.on() {
		return time.Time{}, nil
	}
	now := time.Now()
	s, ok := readRun(a.path + QueueSuffix)
	if ok && s.Foreign.After(a.foreign) {
		a.foreign = s.Foreign
	}
	if !ok || !s.continuing(now, fair.Window) {
		return now, nil // the lock file was absent long enough: a new run
	}
	if now.Sub(s.Start) < fair.Bound || !s.foreignAbout(now) {
		return s.Start, nil // no window yet, or no foreign tool to leave one for
	}
	if err := a.openWindow(s.Release); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

// openWindow leaves the lock file absent until it has been absent for the
// window since free (the last release), waiting for a foreign tool that
// takes it meanwhile and leaving it absent for another window after that
// one, up to FairChains windows or the wait budget. It stops at once for a
// lock file create would deal with at once: an agentx one (left by a dead
// process: this one holds the kernel lock), a stale one, one that is not a
// regular file.
func (a *acquirer) openWindow(free time.Time) error {
	window := a.opts.Fair.Window
	limit := time.Now().Add(FairChains * window)
	if d := a.deadline(); d.Before(limit) {
		limit = d
	}
	held := false
	for {
		now := time.Now()
		if !now.Before(limit) {
			return nil
		}
		snap, err := readSnapshot(a.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if held { // a foreign holder just left: another window for the next
				held, free = false, now
			}
			if now.Sub(free) >= window {
				return nil
			}
		case err != nil:
			return nil
		default:
			if snap.info.fromAgentx() {
				return nil
			}
			if stale, _ := IsStale(a.staleInput(snap)); stale {
				return nil
			}
			a.sawForeign(snap, now)
			held = true
		}
		if err := sleep(a.ctx, min(fairPoll, limit.Sub(now))); err != nil {
			return fmt.Errorf("lock %s: acquire: %w", a.path, err)
		}
	}
}

// sawForeign notes, at now, a lock file found while this acquirer holds
// the kernel lock and judged not stale by the caller: one no agentx
// process wrote is a foreign tool's, which turns the windows on for this
// file (see Fairness).
func (a *acquirer) sawForeign(snap *snapshot, now time.Time) {
	if !snap.info.fromAgentx() {
		a.foreign = now
	}
}

// NoteForeign records that a foreign tool wrote what l guards (a ledger
// found written by another tool, read under l), so that agentx holders
// leave it its windows from l's release on, as if its lock had been seen.
func (l *Lock) NoteForeign() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.foreign = time.Now()
}
