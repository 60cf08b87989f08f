package doctor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/words"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// The checks of the state files beside the ledgers.
const (
	CheckStatus = "status" // agent-status.json and the hook records parse
	CheckInbox  = "inbox"  // the inbox marks parse
	CheckEvents = "events" // events.jsonl is a regular file whose last lines are events
	CheckRemote = "remote" // remote mode's sync states (the outbox) parse
)

// Checks are every check a finding may name, the one list of them.
var Checks = []string{CheckLedger, CheckSchema, CheckLock, CheckTemp, CheckIndex, CheckLayout, CheckDecisions, CheckStatus, CheckInbox, CheckEvents, CheckVanished, CheckRemote, CheckLockTimeouts, CheckGitignore}

// EventsTail is how much of the end of events.jsonl doctor reads: where a
// writer killed mid-line leaves a fragment. A malformed line further back
// is skipped by every reader (agentx events counts it), and reading a log
// of millions of lines whole would make doctor slow.
const EventsTail = 1 << 20

// stateFile is a derived or advisory JSON file that doctor can move aside:
// what losing it means, for the finding's note.
type stateFile struct {
	check string
	name  string // relative to the state directory
	v     func() any
	loss  string
}

// checkState checks agent-status.json, the hook records, the inbox marks
// and the event log. A state file that does not parse blocks whatever
// writes it (agentx never overwrites a file it could not parse): --fix
// moves it aside, keeping its content, and the next write starts afresh.
func checkState(store *ledger.Store, opts Options, r *Report) error {
	files := []stateFile{{CheckStatus, ledger.AgentStatusFile, func() any { return &ledger.AgentStatuses{} },
		"the AgentX tools' view of the agents; the next hook writes it afresh (agentx state derives statuses from the ledgers and hook records)"}}
	issues, err := store.IssuesWithFile(router.HooksDir)
	if err != nil {
		return err
	}
	for _, n := range issues {
		files = append(files, stateFile{CheckStatus, router.HooksFile(n), func() any { return &ledger.AgentStatuses{} },
			fmt.Sprintf("the agents' last hooks on #%d: until then agentx hook on #%d fails; afterwards the next hook starts the record afresh", n, n)})
	}
	ents, err := os.ReadDir(filepath.Join(store.Dir(), inbox.Dir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("doctor: %w", err)
	}
	for _, e := range ents {
		agent, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || atomicfile.IsTemp(e.Name()) {
			continue
		}
		files = append(files, stateFile{CheckInbox, inbox.StateFile(agent), func() any { return &inbox.State{} },
			fmt.Sprintf("what %s has been delivered and has seen: until then its inbox fails; afterwards its next look is a first look (what is open now, and counts)", agent)})
	}
	for _, f := range files {
		checkStateFile(store, opts, r, f)
	}
	// Remote mode's sync states hold the outbox: changes that were
	// acknowledged and wait to be published. They are a record, not
	// derived: reported, never moved aside.
	synced, err := store.IssuesWithFile(remote.SyncDir)
	if err != nil {
		return err
	}
	for _, n := range synced {
		path := remote.SyncPath(store, n)
		if f, ok := notRegular(CheckRemote, path); ok {
			r.add(f)
			continue
		}
		st, err := remote.ReadSync(store, n)
		if err != nil {
			r.add(Finding{Check: CheckRemote, Severity: Error, Path: path, Problem: err.Error(),
				Action: fmt.Sprintf("it holds issue #%d's remote outbox (changes acknowledged but not yet published): fix the JSON by hand; agentx never overwrites it", n)})
			continue
		}
		if st.Refused != nil {
			r.add(Finding{Check: CheckRemote, Severity: Error, Path: path,
				Problem: fmt.Sprintf("since %s: %s", st.Refused.At.UTC().Format(time.RFC3339), st.Refused.Error()),
				Action:  RefusalAdvice(&st.Refused.HistoryError)})
		}
	}
	checkClock(store, opts, r)
	checkEvents(filepath.Join(store.Dir(), router.EventsFile), opts, r)
	return nil
}

// checkClock reports, in remote mode, another host's clock that disagrees
// with this host's (remote.Skews): meanwhile this host's monitor takes no
// time-based action on other hosts' questions. The record of the clocks is
// derived: one that does not parse is moved aside by --fix.
func checkClock(store *ledger.Store, opts Options, r *Report) {
	if remote.Of(store) == nil {
		return
	}
	var st remote.ClockState // read once: checked, then its skews reported
	if !checkStateFile(store, opts, r, stateFile{CheckRemote, filepath.Join(remote.SyncDir, remote.ClockFile), func() any { return &st },
		"what this host found comparing its clock with the commits it fetched; the next fetch starts the comparison afresh"}) {
		return
	}
	for _, s := range st.Standing() {
		r.add(Finding{Check: CheckRemote, Severity: Warning, Path: remote.ClockPath(store),
			Problem: fmt.Sprintf("since %s: %s, more than [remote] max_skew; until they agree this host takes no time-based action (stale, retry, escalate) on other hosts' questions",
				s.Found.UTC().Format(time.RFC3339), s),
			Action: "set the wrong clock right (NTP: timedatectl status, chronyc tracking); the finding lapses when a later commit of that host agrees, or a day after the last that disagreed"})
	}
}

func checkStateFile(store *ledger.Store, opts Options, r *Report, sf stateFile) (parsed bool) {
	path := filepath.Join(store.Dir(), sf.name)
	if f, ok := notRegular(sf.check, path); ok {
		r.add(f)
		return false
	}
	err := store.ReadState(sf.name, sf.v())
	var ce *ledger.CorruptError
	switch {
	case err == nil:
		return true
	case !errors.As(err, &ce):
		r.add(Finding{Check: sf.check, Severity: Error, Path: path, Problem: err.Error(), Action: "check the file by hand"})
		return false
	}
	problem := ce.Problem()
	if ce.Line > 0 {
		problem = fmt.Sprintf("line %d, column %d: %s", ce.Line, ce.Col, problem)
	}
	f := Finding{Check: sf.check, Severity: Error, Path: path, Problem: problem,
		Action: "agentx doctor --fix moves it aside (its content kept); it holds " + sf.loss}
	if opts.Fix {
		aside, err := moveAside(path, opts)
		if err != nil {
			f.Action = "could not move it aside: " + err.Error()
		} else {
			f.Fixed, f.Action = true, "moved aside to "+filepath.Base(aside)
		}
	}
	r.add(f)
	return false
}

// notRegular reports a state file that is a symbolic link, a FIFO or
// anything but a regular file: agentx reads through none and writes
// through none, so a person must look at it.
func notRegular(check, path string) (Finding, bool) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() {
		return Finding{}, false
	}
	what := "not a regular file"
	if fi.Mode()&fs.ModeSymlink != 0 {
		what = "a symbolic link"
		if t, err := os.Readlink(path); err == nil {
			what += " to " + t
		}
	}
	return Finding{Check: check, Severity: Error, Path: path, Problem: "is " + what + ": agentx does not write through it",
		Action: "find out who made it (one in a cloned repository can point anywhere) and remove it: rm " + path}, true
}

// moveAside renames path to a free name beside it, path.corrupt-TIME.
func moveAside(path string, opts Options) (string, error) {
	aside := path + ".corrupt-" + opts.Now().UTC().Format("20060102T150405Z")
	if _, err := os.Lstat(aside); err == nil {
		return "", fmt.Errorf("%s already exists", aside)
	}
	return aside, os.Rename(path, aside)
}

// checkEvents checks the event log: a regular file, its last EventsTail
// bytes whole events, and a newline at its end. A last line without one
// was torn by a writer that died mid-write: every reader skips it, and
// --fix ends it with a newline so that the next event starts a line of its
// own. The log is the record: doctor never rewrites it.
func checkEvents(path string, opts Options, r *Report) {
	if f, ok := notRegular(CheckEvents, path); ok {
		f.Action = "agentx appends no event through it; " + f.Action
		r.add(f)
		return
	}
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		r.add(Finding{Check: CheckEvents, Severity: Error, Path: path, Problem: err.Error(), Action: "check the file by hand"})
		return
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		r.add(Finding{Check: CheckEvents, Severity: Error, Path: path, Problem: err.Error(), Action: "check the file by hand"})
		return
	}
	start := max(fi.Size()-EventsTail, 0)
	tail := make([]byte, fi.Size()-start)
	if _, err := fh.ReadAt(tail, start); err != nil && !errors.Is(err, io.EOF) {
		r.add(Finding{Check: CheckEvents, Severity: Error, Path: path, Problem: err.Error(), Action: "check the file by hand"})
		return
	}
	if start > 0 {
		// the first line read is likely a part: start after it
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			tail, start = tail[i+1:], start+int64(i+1)
		}
	}
	torn := len(tail) > 0 && tail[len(tail)-1] != '\n'
	lines := bytes.SplitAfter(tail, []byte("\n"))
	var bad []string
	badN, off := 0, start
	for i, raw := range lines {
		at := off
		off += int64(len(raw))
		if (i == len(lines)-1 && torn) || len(bytes.TrimSpace(raw)) == 0 {
			continue // a torn last line is reported below
		}
		if _, ok := (router.Line{Raw: raw}).Decode(); !ok {
			badN++
			if len(bad) < 3 {
				bad = append(bad, fmt.Sprintf("byte %d", at))
			}
		}
	}
	if badN > 0 {
		r.add(Finding{Check: CheckEvents, Severity: Warning, Path: path,
			Problem: fmt.Sprintf("%d %s near the end %s not an event (at %s)", badN, words.Plural(badN, "line", "lines"), words.Plural(badN, "is", "are"), strings.Join(bad, ", ")),
			Action:  "every reader skips them (agentx events counts them as skipped); the log is append-only and is not rewritten"})
	}
	if !torn {
		return
	}
	f := Finding{Check: CheckEvents, Severity: Warning, Path: path,
		Problem: fmt.Sprintf("its last line (%d bytes) has no newline: a writer died while appending it", len(lines[len(lines)-1])),
		Action:  "readers skip it; agentx doctor --fix ends it with a newline, so that the next event starts a line of its own"}
	if opts.Fix {
		if err := endLine(path); err != nil {
			f.Action = "could not end it: " + err.Error()
		} else {
			f.Fixed, f.Action = true, "ended with a newline"
		}
	}
	r.add(f)
}

// endLine appends a newline to the event log, the way events are appended
// (O_APPEND, never through a link).
func endLine(path string) error {
	f, err := atomicfile.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte("\n")); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// RefusalAdvice is what the command line says to do about a shared ledger
// this host refused (remote.HistoryError, whose own hint names no
// command): doctor's action, and the command line's hint for the refusal.
func RefusalAdvice(e *remote.HistoryError) string {
	switch {
	case e.Settled == "" && e.Refused():
		return fmt.Sprintf("this host has no copy of issue #%d to put back: on a host that holds a good one, agentx sync --republish puts it back on the remote (agentx remote log --issue %d marks the refused commit)", e.Issue, e.Issue)
	case e.Refused():
		return fmt.Sprintf("agentx remote log --issue %d marks it; if this host's copy is right, agentx sync --republish puts it back on the remote (the ref then leaves the refused commit out)", e.Issue)
	}
	return fmt.Sprintf("if the remote lost the newer chain (a restored backup, git push --force or --mirror from an older clone), agentx sync --republish puts this host's copy back (what other hosts added since is kept, renumbered if need be); see docs/remote.md (protecting refs/agentx/*); git show %s:%s shows this host's version", e.Settled, remote.File(e.Issue))
}
