package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrUnparseable marks lock content that is empty or not a JSON object
// (Inspect wraps it). Another tool may still be writing such a file; IsStale
// treats it as held during the Grace window.
var ErrUnparseable = errors.New("unparseable lock content")

// StaleInput is everything IsStale looks at. It is plain data so that the
// rules can be tested with a table and reused by a doctor command.
type StaleInput struct {
	Info     *Info          // parsed lock content; nil when ParseErr is set
	ParseErr error          // non-nil when the content is empty or unparseable
	ModTime  time.Time      // the lock file's modification time
	Now      time.Time      // the current time
	Hostname string         // our host name (os.Hostname)
	PIDAlive func(int) bool // reports whether a PID runs on this host; nil: assume alive
	StaleAge time.Duration  // a lock older than this is stale; 0: DefaultStaleAge
	Grace    time.Duration  // how long unparseable content counts as held; 0: Grace
	// Orphaned says the caller holds the kernel lock, so no live agentx
	// process can hold this lock file: one written by agentx on this host
	// is left by a dead process (or one whose pid was reused) and stale.
	Orphaned bool
}

// IsStale applies the staleness rules to one lock and says why:
//
//   - empty or unparseable content is held for the grace window after its
//     mod time (another tool may be writing it), stale after that;
//   - a lock written by agentx on this host while the caller holds the
//     kernel lock (Orphaned) is stale at once: its writer is gone;
//   - on our host, a lock whose PID is no longer running is stale at once;
//   - a lock dated after its file was last written (clock skew, or a
//     forged date) is judged by its file's mod time instead, so that one
//     found stale stays stale once its date is overtaken; if the mod time
//     is in the future too, it is stale once its date is more than the
//     stale age ahead, so no date can hold an issue forever;
//   - a lock older than the stale age is stale, wherever it comes from.
//
// The age is taken from created, else timestamp, else the mod time. A lock
// from another host, or with no host at all (the AgentX TypeScript and
// PowerShell tools write none, with or without a pid), is judged by age
// only: its PID means nothing here.
func IsStale(in StaleInput) (stale bool, reason string) {
	staleAge := in.StaleAge
	if staleAge <= 0 {
		staleAge = DefaultStaleAge
	}
	grace := in.Grace
	if grace <= 0 {
		grace = Grace
	}

	if in.Info == nil || in.ParseErr != nil {
		age := in.Now.Sub(in.ModTime)
		if age <= grace {
			return false, fmt.Sprintf("unparseable lock within the %s grace window (it may still be being written)", grace)
		}
		return true, fmt.Sprintf("unparseable lock modified %s ago (grace window %s)", round(age), grace)
	}
	info := in.Info
	local := info.Host != "" && info.Host == in.Hostname

	if in.Orphaned && local && info.fromAgentx() {
		return true, fmt.Sprintf("left by agentx pid %d, which no longer holds it", info.PID)
	}
	if local && info.PID > 0 && in.PIDAlive != nil && !in.PIDAlive(info.PID) {
		return true, fmt.Sprintf("pid %d is no longer running on this host (%s)", info.PID, info.Host)
	}

	created, from := info.createdAt(in.ModTime)
	age := in.Now.Sub(created)
	// A lock dated after its file was last written: a clock that is wrong
	// (or a forged date). The file's mod time is judged instead, and for
	// as long as the lock lasts, so that a lock found stale stays stale
	// when its date is overtaken.
	if from != "modified" && !in.ModTime.IsZero() && created.After(in.ModTime) {
		if mage := in.Now.Sub(in.ModTime); mage >= 0 {
			skew := fmt.Sprintf(" (its %s date is %s after the file was written: clock skew)", from, round(created.Sub(in.ModTime)))
			if mage > staleAge {
				return true, fmt.Sprintf("modified %s ago, older than the stale age %s%s", round(mage), staleAge, skew)
			}
			return false, fmt.Sprintf("modified %s ago, within the stale age %s%s", round(mage), staleAge, skew)
		}
	}
	switch {
	case age < -staleAge:
		return true, fmt.Sprintf("%s is %s in the future, more than the stale age %s: a wrong clock or a forged date", from, round(-age), staleAge)
	case age < 0:
		return false, fmt.Sprintf("%s is %s in the future (clock skew); stale once it is more than %s ahead or older than %s", from, round(-age), staleAge, staleAge)
	case age > staleAge:
		return true, fmt.Sprintf("%s %s ago, older than the stale age %s", from, round(age), staleAge)
	default:
		return false, fmt.Sprintf("%s %s ago, within the stale age %s", from, round(age), staleAge)
	}
}

// CreatedAt returns when the lock was taken: created, else timestamp (any
// RFC 3339 form), else ok is false.
func (i *Info) CreatedAt() (t time.Time, ok bool) {
	for _, s := range []string{i.Created, i.Timestamp} {
		if t, ok := parseTime(s); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// createdAt is CreatedAt falling back to the mod time, with the field's name.
func (i *Info) createdAt(modTime time.Time) (time.Time, string) {
	if t, ok := parseTime(i.Created); ok {
		return t, "created"
	}
	if t, ok := parseTime(i.Timestamp); ok {
		return t, "timestamp"
	}
	return modTime, "modified"
}

// timeLayouts are the forms other AgentX writers use; RFC3339Nano parses
// RFC 3339 with or without fractional seconds.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999", // no zone: taken as UTC
	"2006-01-02 15:04:05.999999999Z07:00",
}

func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func round(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// parseInfo decodes lock content leniently: any JSON object is accepted,
// fields of the wrong type are ignored (a pid written as a string is read),
// so a foreign tool's lock is never mistaken for garbage and deleted.
func parseInfo(data []byte) (*Info, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrUnparseable)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnparseable, err)
	}
	if raw == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrUnparseable)
	}
	str := func(key string) string {
		var s string
		if json.Unmarshal(raw[key], &s) == nil {
			return s
		}
		return ""
	}
	info := &Info{
		Host:      str("host"),
		Agent:     str("agent"),
		Token:     str("token"),
		Timestamp: str("timestamp"),
		Created:   str("created"),
	}
	if v, ok := raw["pid"]; ok {
		var n json.Number
		if json.Unmarshal(v, &n) == nil {
			if pid, err := strconv.Atoi(n.String()); err == nil {
				info.PID = pid
			}
		} else if s := str("pid"); s != "" {
			if pid, err := strconv.Atoi(s); err == nil {
				info.PID = pid
			}
		}
	}
	return info, nil
}

// snapshot is one read of a lock file: its bytes and the identity of the
// file they came from (read from the same open descriptor).
type snapshot struct {
	raw      []byte
	fi       os.FileInfo
	info     *Info
	parseErr error
}

// readSnapshot reads a lock file without following a symlink and without
// blocking on a FIFO. Errors are unwrapped os errors, so
// errors.Is(err, fs.ErrNotExist) tells a vanished lock; a symlink or other
// non-regular file is a *NotRegularError.
func readSnapshot(path string) (*snapshot, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	raw, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, err
	}
	s := &snapshot{raw: raw, fi: fi}
	s.info, s.parseErr = parseInfo(raw)
	return s, nil
}

// Inspect reads the lock file at lockPath (for a doctor command) and returns
// its content and modification time. A missing file gives an error matching
// fs.ErrNotExist. Content that cannot be parsed gives a nil Info, the mod
// time, and an error wrapping ErrUnparseable: pass it on as
// StaleInput.ParseErr.
func Inspect(lockPath string) (*Info, time.Time, error) {
	s, err := readSnapshot(lockPath)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("lock %s: inspect: %w", lockPath, err)
	}
	if s.parseErr != nil {
		return nil, s.fi.ModTime(), fmt.Errorf("lock %s: inspect: %w", lockPath, s.parseErr)
	}
	return s.info, s.fi.ModTime(), nil
}
