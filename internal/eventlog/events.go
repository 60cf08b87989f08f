package eventlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
)

// EventType names a state change of a clarification.
type EventType string

// The event types, one per state change.
const (
	EventRequested  EventType = "clarification-requested"
	EventAnswered   EventType = "clarification-answered"
	EventFollowedUp EventType = "clarification-followed-up"
	EventStale      EventType = "clarification-stale"
	EventResolved   EventType = "clarification-resolved"
	EventEscalated  EventType = "clarification-escalated"
	EventAbandoned  EventType = "clarification-abandoned"
	// EventResponderFailed: the responder failed (reason: why, and what
	// follows: a retry, or the escalation).
	EventResponderFailed EventType = "clarification-responder-failed"
	// EventSuperseded: the responder's result came after the clarification
	// had moved on, and was not recorded.
	EventSuperseded EventType = "clarification-responder-superseded"
	// EventRemoteRefused: with a [remote], a version of an issue's shared
	// ledger was refused (its ref moved back, deleted, or given a commit
	// that does not only append): no clarification; the ref as topic, why
	// as reason, the refused commit's host as host.
	EventRemoteRefused EventType = "remote-refused"
	// EventClockSkew: with a [remote], another host's clock was found to
	// disagree with this host's by more than [remote] max_skew (from the
	// time of a commit it fetched): no clarification; the issue of that
	// commit, "clock" as topic, what was found as reason, the other host
	// as host. Until they agree this host takes no time-based action on
	// other hosts' questions.
	EventClockSkew EventType = "remote-clock-skew"
	// EventRenumbered (remote mode): a question this host asked while the
	// remote was out of reach was delivered under another id, as another
	// host had taken its own; ClarificationID is the new id, Was the old.
	EventRenumbered EventType = "clarification-renumbered"
	// EventChangeSuperseded (remote mode): a change this host acknowledged
	// while the remote was out of reach (an answer, follow-up, resolution)
	// was not delivered: another host changed the clarification first. By
	// is who made the change, Reason what it was; the clarification is as
	// the other host left it.
	EventChangeSuperseded EventType = "clarification-change-superseded"
)

// The event types of what was refused or failed: nothing changed (a
// question refused by the rules is not recorded; a write that timed out
// wrote nothing), so they make no inbox item and nothing to mirror
// (Event.Refusal). They are for a person reading the log, the digest
// (agentx clarify stats) and agentx doctor.
const (
	// EventScopeRefused: an agent tried what its workflow step's scope
	// does not allow, and was refused. An ask of someone the step's
	// can_clarify does not list: fromAgent the asker, toAgent whom it
	// asked, topic the question's. A write outside the step's write scope
	// (a tool call the scope hook denied): fromAgent the agent, topic the
	// file, no toAgent. by is the agent, reason the refusal.
	EventScopeRefused EventType = "scope-refused"
	// EventLockTimeout: a write to the issue's ledger gave up waiting for
	// the issue's lock (the command failed, exit 5, nothing written):
	// clarificationId, the agents and topic are what was being written
	// (the clarification changed, or the question asked), by who wrote
	// when known, reason who held the lock and for how long.
	EventLockTimeout EventType = "lock-timeout"
)

// refusals are the event types of what was refused or failed.
var refusals = []EventType{EventScopeRefused, EventLockTimeout}

// Refusal reports whether e records something refused or failed rather
// than a change (EventScopeRefused, EventLockTimeout).
func (e Event) Refusal() bool { return slices.Contains(refusals, e.Type) }

// EachRefusal streams the refusal events (Event.Refusal) that match f to
// fn, in file order, decoding only the lines that hold one: a reader of a
// long log that wants only these pays a byte search a line.
func (l EventLog) EachRefusal(f EventFilter, fn func(Event) error) error {
	marks := make([][]byte, len(refusals))
	for i, t := range refusals {
		marks[i] = []byte(`{"type":"` + t + `"`) // how Append starts its line
	}
	_, err := l.ReadFrom(0, func(line Line) error {
		if !slices.ContainsFunc(marks, func(m []byte) bool { return bytes.Contains(line.Raw, m) }) {
			return nil
		}
		e, ok := line.Decode()
		if !ok || !e.Refusal() || !f.Match(e) {
			return nil
		}
		return fn(e)
	})
	return err
}

// The event types of enhancement proposals (package proposal): they carry
// ProposalID, Issues, the title as Topic and who acted as By, and no
// clarification.
const (
	EventProposalCreated     EventType = "proposal-created"
	EventProposalEvidence    EventType = "proposal-evidence" // the gate added evidence to a pending one
	EventProposalApproved    EventType = "proposal-approved"
	EventProposalRejected    EventType = "proposal-rejected"
	EventProposalImplemented EventType = "proposal-implemented"
)

// Event is one line of .agentx/state/events.jsonl. Type is the first field
// so that every line starts with {"type":".
type Event struct {
	Type            EventType   `json:"type"`
	ClarificationID string      `json:"clarificationId,omitempty"` // empty on a proposal's event
	IssueNumber     int         `json:"issueNumber"`               // 0 on a proposal's event: Issues names them
	FromAgent       string      `json:"fromAgent,omitempty"`
	ToAgent         string      `json:"toAgent,omitempty"`
	Topic           string      `json:"topic"`
	Blocking        bool        `json:"blocking"`
	Round           int         `json:"round"`
	Timestamp       ledger.Time `json:"timestamp"`
	By              string      `json:"by,omitempty"`         // who acted
	Reason          string      `json:"reason,omitempty"`     // why, for stale, escalated, abandoned
	ProposalID      string      `json:"proposalId,omitempty"` // a proposal's event: PROP-001
	Issues          []int       `json:"issues,omitempty"`     // a proposal's event: the issues it names
	// Via is ViaRemote for a change made on another host and pulled from
	// the shared remote (remote mode), ViaForeign for one another AgentX
	// tool wrote here; Host names the other host, if known.
	Via  string `json:"via,omitempty"`
	Host string `json:"host,omitempty"`
	// Was is, on EventRenumbered, the id the question had when it was asked.
	Was string `json:"was,omitempty"`
}

// Touches are the issues a change is about: a clarification's issue, or
// the issues a proposal names.
func (e Event) Touches() []int {
	if e.ProposalID != "" {
		return e.Issues
	}
	return []int{e.IssueNumber}
}

// EventFor is the event of type t for clarification c of issue at now. By
// and Reason are left for the caller to fill.
func EventFor(t EventType, issue int, c *ledger.Clarification, now time.Time) Event {
	e := Event{Type: t, IssueNumber: issue, Timestamp: ledger.T(now)}
	if c != nil {
		e.ClarificationID = c.ID
		e.FromAgent = c.From
		e.ToAgent = c.To
		e.Topic = c.Topic
		e.Blocking = c.Blocking
		e.Round = c.Round
	}
	return e
}

// EventLog is the append-only event log, one JSON object a line. Any number
// of processes may append at once: each line is one write(2) on a file
// opened with O_APPEND, so lines never interleave.
type EventLog struct {
	Path string
}

// beforeAppend is a test hook (see crashpoint.go); nil in agentx.
var beforeAppend func(Event)

// Append adds e as one line, creating the file (0644) and its directory if
// missing.
func (l EventLog) Append(e Event) error {
	if beforeAppend != nil {
		beforeAppend(e)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("event log %s: encode: %w", l.Path, err)
	}
	b = append(b, '\n')
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o755); err != nil {
		return fmt.Errorf("event log %s: %w", l.Path, err)
	}
	// Never through a symlink: a cloned repository could point the log at
	// ~/.bashrc, and a topic would be appended there.
	f, err := atomicfile.OpenFile(l.Path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("event log %s: %w", l.Path, err)
	}
	n, err := f.Write(b) // one write(2): the line lands whole
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("event log %s: append: %w", l.Path, err)
	}
	return nil
}

// EventFilter selects events; a zero field matches everything.
type EventFilter struct {
	Issue *int      // only this issue number
	Since time.Time // only events at or after this instant
	ID    string    // only this clarification (or proposal)
}

// Match reports whether e passes the filter.
func (f EventFilter) Match(e Event) bool {
	switch {
	case f.Issue != nil && !slices.Contains(e.Touches(), *f.Issue):
		return false
	case !f.Since.IsZero() && e.Timestamp.Before(f.Since):
		return false
	case f.ID != "" && e.ClarificationID != f.ID && e.ProposalID != f.ID:
		return false
	}
	return true
}

// ReadResult is what Read found: the matching events in file order and the
// number of lines that were not events (torn or malformed) and were skipped.
type ReadResult struct {
	Events  []Event
	Skipped int
}

// Read returns the events that match f. A missing file holds no events. A
// malformed line, such as a torn last line, is skipped and counted, not an
// error.
func (l EventLog) Read(f EventFilter) (ReadResult, error) {
	var res ReadResult
	skipped, err := l.Each(f, func(e Event) error {
		res.Events = append(res.Events, e)
		return nil
	})
	res.Skipped = skipped
	return res, err
}

// Each streams the events that match f to fn, in file order, in constant
// memory, and returns how many malformed lines it skipped (see Read). An
// error from fn stops it and is returned.
func (l EventLog) Each(f EventFilter, fn func(Event) error) (skipped int, err error) {
	var days dayCache
	err = l.eachLine(func(line []byte) error {
		e, ok, n := parseLine(line, &days)
		skipped += n
		if ok && f.Match(e) {
			return fn(e)
		}
		return nil
	})
	return skipped, err
}

// eachLine passes each line of the log to fn, in file order, newline
// included, a last line without its newline too; the line is valid only
// during the call. A missing file has no lines. An error from fn stops it
// and is returned.
func (l EventLog) eachLine(fn func([]byte) error) error {
	file, err := os.Open(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("event log %s: %w", l.Path, err)
	}
	defer file.Close()
	return eachLineIn(file, l.Path, fn)
}

// eachLineIn is eachLine of what in reads of the log at path.
func eachLineIn(in io.Reader, path string, fn func([]byte) error) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, rerr := r.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			// a line longer than the buffer: gather it whole
			long := append([]byte(nil), line...)
			for errors.Is(rerr, bufio.ErrBufferFull) {
				line, rerr = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			if err := fn(line); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("event log %s: read: %w", path, rerr)
		}
	}
}

// eventStart begins every line Append writes. It cannot occur inside an
// encoded string (json.Marshal escapes every quote), so it marks where an
// event starts even when a torn line was glued to the front of it.
var eventStart = []byte(`{"type":"`)

// parseEventLine decodes one line (with or without its newline). ok says
// whether it held an event; skipped counts the torn or malformed text
// dropped (0 or 1). A torn fragment followed by a whole event on the same
// line (a writer died mid-line, another appended after it) yields the
// whole event and skipped = 1.
func parseEventLine(line []byte) (e Event, ok bool, skipped int) {
	return parseLine(line, nil)
}

// parseLine is parseEventLine, with the timestamps' dates remembered in
// days (which may be nil).
func parseLine(line []byte, days *dayCache) (e Event, ok bool, skipped int) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return e, false, 0
	}
	var v fastLine
	if scanFast(line, days, &v) {
		return v.event(), true, 0
	}
	return slowLine(line)
}

// slowLine is parseEventLine of a trimmed line that is not in the form
// Append writes.
func slowLine(line []byte) (e Event, ok bool, skipped int) {
	if decodeEvent(line, &e) {
		return e, true, 0
	}
	if i := bytes.LastIndex(line, eventStart); i > 0 {
		e = Event{}
		if decodeEvent(line[i:], &e) {
			return e, true, 1
		}
	}
	return Event{}, false, 1
}

func decodeEvent(b []byte, e *Event) bool {
	return jsonv2.Unmarshal(b, e, eventDecoding()) == nil && e.Type != ""
}

// Events are read with the JSON v2 engine (about twice as fast as
// encoding/json on a log of millions of lines), with encoding/json's
// leniency: names matched without regard to case, a name twice taken as
// its last value, invalid UTF-8 read as U+FFFD.
var eventDecoding = sync.OnceValue(func() jsonv2.Options {
	return jsonv2.JoinOptions(
		jsonv2.MatchCaseInsensitiveNames(true),
		jsontext.AllowDuplicateNames(true),
		jsontext.AllowInvalidUTF8(true),
	)
})

// eventIndent writes what json.MarshalIndent(e, prefix, "  ") writes
// (HTML and JavaScript line separators escaped, invalid UTF-8 written as
// U+FFFD, as encoding/json does).
var eventIndent = sync.OnceValue(func() jsonv2.Options {
	return jsonv2.JoinOptions(
		jsontext.WithIndent("  "),
		jsontext.AllowInvalidUTF8(true),
		jsontext.EscapeForHTML(true),
		jsontext.EscapeForJS(true),
	)
})

// MarshalIndent is json.MarshalIndent(e, prefix, "  "), faster: how agentx
// events --json writes each event of a long log.
func (e Event) MarshalIndent(prefix string) ([]byte, error) {
	if b, ok := e.appendIndent(make([]byte, 0, 512), prefix); ok {
		return b, nil
	}
	return jsonv2.Marshal(e, eventIndent(), jsontext.WithIndentPrefix(prefix))
}

// Follow calls fn for each event that matches f: first those already in the
// log, then new ones as they are appended, checking every poll (0 = 250ms)
// until ctx is done, when it returns nil. A last line still missing its
// newline is held until the newline arrives. A missing file is waited for;
// a log that shrinks or is replaced is read again from its start. An error
// from fn stops Follow and is returned.
func (l EventLog) Follow(ctx context.Context, f EventFilter, poll time.Duration, fn func(Event) error) error {
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	t := &tail{path: l.Path, buf: make([]byte, 64<<10)}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		err := t.read(func(line []byte) error {
			e, ok, _ := parseEventLine(line)
			if !ok || !f.Match(e) {
				return nil
			}
			return fn(e)
		})
		if err != nil {
			return err
		}
		timer.Reset(poll)
	}
}

// tail reads the lines appended to a file since the last call.
type tail struct {
	path    string
	info    os.FileInfo // the file last read, to notice replacement
	offset  int64       // bytes consumed: the end of the last whole line
	pending []byte      // a last line still missing its newline
	buf     []byte
}

// read passes each new whole line to fn.
func (t *tail) read(fn func([]byte) error) error {
	file, err := os.Open(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("event log %s: %w", t.path, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return fmt.Errorf("event log %s: %w", t.path, err)
	}
	if t.info != nil && (!os.SameFile(t.info, info) || info.Size() < t.offset) {
		t.offset, t.pending = 0, nil // rotated or truncated: start over
	}
	t.info = info
	if _, err := file.Seek(t.offset+int64(len(t.pending)), io.SeekStart); err != nil {
		return fmt.Errorf("event log %s: %w", t.path, err)
	}
	for {
		n, rerr := file.Read(t.buf)
		data := t.buf[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				t.pending = append(t.pending, data...)
				break
			}
			line := data[:i+1]
			if len(t.pending) > 0 {
				line = append(t.pending, line...)
				t.pending = nil
			}
			t.offset += int64(len(line))
			data = data[i+1:]
			if err := fn(line); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("event log %s: read: %w", t.path, rerr)
		}
	}
}

// ViaRemote marks an event pulled from the shared remote: the change was
// made on another host, which logged (and mirrors) it there.
const ViaRemote = "remote"

// ViaForeign marks an event agentx logged for what another AgentX tool (the
// VS Code extension, the PowerShell CLI) wrote to a ledger: found by a
// reader, after the fact.
const ViaForeign = "foreign"

// Pulled reports whether e is a change another host made.
func (e Event) Pulled() bool { return e.Via == ViaRemote }

// File is the event log's name in the state directory.
const File = "events.jsonl"
