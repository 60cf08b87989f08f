package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/textsim"
)

// The index of open clarifications lets the monitor and `ready` cost
// O(open clarifications) instead of O(every ledger ever written). It is
// derived data, kept per issue so that a write to issue N touches only
// issue N's files: index/issue-N.json holds issue N's open clarifications
// and exists only while it has some. Update writes it under the ledger's
// lock, stamped with the identity (inode, size, mod time) of the ledger
// file it was derived from, before it renames that ledger into place; a
// reader that finds the stamp does not match the ledger now on disk (a
// writer killed between the two renames, a foreign AgentX tool's write)
// derives the entries from the ledger instead. RebuildIndex recreates every
// file from the ledgers, and marks the index as built.
const (
	// IndexDir holds the per-issue index files, relative to the state
	// directory.
	IndexDir = "index"
	// IndexBuiltFile marks an index built from every ledger (by
	// RebuildIndex); without it, readers scan the ledgers.
	IndexBuiltFile = "index/built-v2"
	// IndexVersion is the format version written into each file.
	IndexVersion = 2
)

// Index is every open (pending, answered, stale or escalated)
// clarification, by issue: the per-issue files read together.
type Index struct {
	Issues map[int][]IndexEntry
	// Foreign lists the ledgers a reader that may write (LoadOpen) found
	// changed behind agentx's back, with open questions it had not seen
	// or seen otherwise: what another AgentX tool wrote. The caller
	// records their events; the index files are made afresh, so each is
	// found once.
	Foreign []ForeignChange
}

// ForeignChange is one ledger another tool changed: its open entries as
// agentx last knew them (none when it had no index file for it), and the
// ledger as it is now.
type ForeignChange struct {
	Issue  int
	Before []IndexEntry
	Ledger *Ledger
}

// IndexEntry is what the monitor and the ready gate need to know about one
// open clarification, without reading its ledger.
type IndexEntry struct {
	Issue      int           `json:"-"` // the map key in the file
	ID         string        `json:"id"`
	From       string        `json:"from"`
	To         string        `json:"to"`
	Blocking   bool          `json:"blocking"`
	Status     Status        `json:"status"`
	Round      int           `json:"round"`
	Asked      Time          `json:"asked"` // when the current round's question was asked
	StaleAfter Time          `json:"staleAfter"`
	Monitor    *MonitorState `json:"monitor,omitempty"`
	Q          textsim.Sig   `json:"q,omitempty"`  // word-set sketch of the current question
	PrevQ      textsim.Sig   `json:"pq,omitempty"` // and of the previous round's question
	// Reused: the asker reused an earlier decision while it waits for the
	// answer (Clarification.Reused), which a person may overturn.
	Reused bool `json:"reused,omitempty"`

	raw jsontext.Value // the entry as read from an index file, written back as is
}

// EntryOf is the index entry of clarification c of issue, open or not.
func EntryOf(issue int, c *Clarification) IndexEntry { return entryOf(issue, c, true) }

func entryOf(issue int, c *Clarification, sketch bool) IndexEntry {
	e := IndexEntry{
		Issue: issue, ID: c.ID, From: c.From, To: c.To, Blocking: c.Blocking,
		Status: c.Status, Round: c.Round, Asked: askedAt(c), StaleAfter: c.StaleAfter,
		Reused: c.Reused() != nil,
	}
	if c.X != nil && c.X.Monitor != nil {
		m := *c.X.Monitor
		e.Monitor = &m
	}
	if !sketch {
		return e
	}
	var qs []*ThreadEntry
	for i := len(c.Thread) - 1; i >= 0 && len(qs) < 2; i-- {
		if c.Thread[i].Type == Question {
			qs = append(qs, &c.Thread[i])
		}
	}
	if len(qs) > 0 {
		e.Q = textsim.Of(qs[0].Body)
	}
	if len(qs) > 1 {
		e.PrevQ = textsim.Of(qs[1].Body)
	}
	return e
}

// EntriesOf returns the index entries of l's open clarifications, in
// ledger order (inside Update, the open records are decoded whole first).
func EntriesOf(l *Ledger) []IndexEntry {
	var out []IndexEntry
	for _, c := range l.Clarifications {
		if !c.Status.Open() {
			continue
		}
		if c.at != nil && !l.open(c) { // inside Update, read through the layout memo
			continue // Update fails: l.bad
		}
		out = append(out, EntryOf(l.IssueNumber, c))
	}
	return out
}

// entriesOf is EntriesOf for a ledger an Update is about to write. The
// records of a ledger read through its layout memo that are still sealed
// take their entries from the index file derived from the very file read
// (in the same order), so the open records are not decoded again; one it
// lacks is decoded.
func (s *Store) entriesOf(l *Ledger) []IndexEntry {
	if l.src == nil {
		return EntriesOf(l)
	}
	var old []IndexEntry
	if ii, err := s.readIndexFile(l.IssueNumber, true); err == nil && ii.Ledger == l.src.lo.file.Stamp {
		old = ii.Entries
	}
	// The entries are made in old's place (read for this alone): those
	// taken over come in old's order, so none is written past the next
	// one to read (j), until a new one would be; then they move to a
	// slice of their own. (Were one written over, its record's entry would
	// be made afresh, and the next ones': never wrong, as no two records
	// share an id, but slow.) fastIndex leaves room for the few a change
	// adds.
	out, inPlace := old[:0], true
	j := 0
	for _, c := range l.Clarifications {
		if !c.Status.Open() {
			continue
		}
		if c.at != nil {
			k := j
			for k < len(old) && old[k].ID != c.ID {
				k++
			}
			if k < len(old) && old[k].Status == c.Status && old[k].From == c.From {
				out = append(out, old[k])
				j = k + 1
				continue
			}
			if !l.open(c) {
				continue // Update fails: l.bad
			}
		}
		if inPlace && len(out) >= j && j < len(old) {
			out, inPlace = append(make([]IndexEntry, 0, len(old)+4), out...), false
		}
		out = append(out, EntryOf(l.IssueNumber, c))
	}
	return out
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{Issues: map[int][]IndexEntry{}} }

// Set replaces issue's entries with l's open clarifications. The question
// sketches of entries already in the index are kept when their round and
// question time are unchanged (the hub never edits a question), so a write
// costs O(changed questions), not O(open clarifications of the issue).
func (ix *Index) Set(l *Ledger) {
	prev := map[string]*IndexEntry{}
	for i, e := range ix.Issues[l.IssueNumber] {
		prev[e.ID] = &ix.Issues[l.IssueNumber][i]
	}
	var es []IndexEntry
	for _, c := range l.Clarifications {
		if !c.Status.Open() {
			continue
		}
		if p := prev[c.ID]; p != nil && p.Round == c.Round && p.Asked.Equal(askedAt(c).Time) {
			e := entryOf(l.IssueNumber, c, false)
			e.Q, e.PrevQ = p.Q, p.PrevQ
			es = append(es, e)
			continue
		}
		es = append(es, EntryOf(l.IssueNumber, c))
	}
	if len(es) > 0 {
		ix.Issues[l.IssueNumber] = es
	} else {
		delete(ix.Issues, l.IssueNumber)
	}
}

// askedAt is when c's current question was asked (its creation, when its
// thread holds no question).
func askedAt(c *Clarification) Time {
	if q := c.Current(Question); q != nil {
		return q.Timestamp
	}
	return c.Created
}

// OpenIssues returns the issues with an open clarification, ascending.
func (ix *Index) OpenIssues() []int {
	out := make([]int, 0, len(ix.Issues))
	for n := range ix.Issues {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// Entries returns every entry, by issue then ledger order, with Issue set.
func (ix *Index) Entries() []IndexEntry {
	total := 0
	for _, es := range ix.Issues {
		total += len(es)
	}
	out := make([]IndexEntry, 0, total)
	for _, n := range ix.OpenIssues() {
		for _, e := range ix.Issues[n] {
			e.Issue = n
			out = append(out, e)
		}
	}
	return out
}

// Equal reports whether two indexes hold the same entries.
func (ix *Index) Equal(o *Index) bool {
	if len(ix.Issues) != len(o.Issues) {
		return false
	}
	for n, es := range ix.Issues {
		if other, ok := o.Issues[n]; !ok || !sameEntries(es, other) {
			return false
		}
	}
	return true
}

func entryEqual(a, b IndexEntry) bool {
	return a.ID == b.ID && a.From == b.From && a.To == b.To && a.Blocking == b.Blocking &&
		a.Status == b.Status && a.Round == b.Round &&
		a.Asked.Equal(b.Asked.Time) && a.StaleAfter.Equal(b.StaleAfter.Time) &&
		slices.Equal(a.Q, b.Q) && slices.Equal(a.PrevQ, b.PrevQ) && monitorEqual(a.Monitor, b.Monitor) && a.Reused == b.Reused
}

func monitorEqual(a, b *MonitorState) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Retries == b.Retries && a.Reason == b.Reason && timePtrEqual(a.StaleAt, b.StaleAt) && timePtrEqual(a.RetriedAt, b.RetriedAt)
}

func timePtrEqual(a, b *Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b.Time)
}

// DefaultSLA applies when an entry carries no usable SLA.
const DefaultSLA = 30 * time.Minute

// SLA is how long the entry's current round was given: from its question
// to staleAfter.
func (e IndexEntry) SLA() time.Duration {
	if d := e.StaleAfter.Sub(e.Asked.Time); d > 0 {
		return d
	}
	return DefaultSLA
}

// Retried reports whether the automatic retry of the current round was
// made: a retry recorded at or after the round's question. (Not "after it
// went stale": StaleAt and RetriedAt may come from different processes,
// whose clocks may disagree by a little; a round lasts at least its SLA.)
func (e IndexEntry) Retried() bool {
	return e.Monitor != nil && e.Monitor.RetriedAt != nil && !e.Monitor.RetriedAt.Before(e.Asked.Time)
}

// StaleSince is when the entry went stale: when the monitor marked it, else
// its staleAfter.
func (e IndexEntry) StaleSince() time.Time {
	if e.Monitor != nil && e.Monitor.StaleAt != nil {
		return e.Monitor.StaleAt.Time
	}
	return e.StaleAfter.Time
}

// EscalatesAt is when a stale entry is escalated: one SLA after it went
// stale.
func (e IndexEntry) EscalatesAt() time.Time { return e.StaleSince().Add(e.SLA()) }

// IndexUnusableError says why the index cannot be trusted as a whole: it
// was never built (or by an older version). Readers then scan the
// ledgers; LoadIndex rebuilds it.
type IndexUnusableError struct {
	Path   string
	Reason string
}

func (e *IndexUnusableError) Error() string { return fmt.Sprintf("index %s: %s", e.Path, e.Reason) }

// IndexPath is the index directory.
func (s *Store) IndexPath() string { return filepath.Join(s.dir, IndexDir) }

// IssueIndexPath is the index file of an issue.
func (s *Store) IssueIndexPath(issue int) string {
	return filepath.Join(s.dir, IndexDir, "issue-"+strconv.Itoa(issue)+".json")
}

func (s *Store) builtPath() string { return filepath.Join(s.dir, filepath.FromSlash(IndexBuiltFile)) }

// IndexBuilt reports whether the index was built (RebuildIndex): only then
// do the per-issue index files stand for every open clarification.
func (s *Store) IndexBuilt() bool {
	_, err := os.Stat(s.builtPath())
	return err == nil
}

// IssueStamps returns, for each of issues, the stamp of its ledger as it
// is now (an issue whose ledger cannot be found is left out). The open
// questions are the ledger's: while it keeps a stamp, what OpenEntries
// reads is the same, whatever happens to the index file derived from it.
// The files are looked up from their directory, opened once: a side
// monitor run takes the stamps of every issue with open questions.
func (s *Store) IssueStamps(issues []int) map[int]Stamp {
	out := make(map[int]Stamp, len(issues))
	lg, err := os.Open(filepath.Join(s.dir, ClarificationsDir))
	if err != nil {
		return out
	}
	defer func() { _ = lg.Close() }()
	for _, n := range issues {
		if st, err := stampAt(lg, "issue-"+strconv.Itoa(n)+".json"); err == nil {
			out[n] = st
		}
	}
	return out
}

// stamp identifies one version of a ledger file: agentx replaces ledgers
// by renaming a new file into place, so the inode (where the system has
// one), size and mod time of the file a reader opens tell whether it is
// the version an index file was derived from.
type stamp struct {
	Ino   uint64 `json:"ino,omitempty"`
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"` // nanoseconds since the epoch
}

// Stamp identifies one version of a file: a write by agentx (a rename of a
// new file) or by anyone else changes it.
type Stamp = stamp

// StampOf is the stamp of the file fi describes (fi from the open file,
// so that the stamp is that of the bytes read).
func StampOf(fi fs.FileInfo) Stamp { return stampOf(fi) }

func stampOf(fi fs.FileInfo) stamp {
	return stamp{Ino: fileID(fi), Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
}

// issueIndex is the content of index/issue-N.json.
type issueIndex struct {
	Version int          `json:"version"`
	Issue   int          `json:"issue"`
	Ledger  stamp        `json:"ledger"`
	Entries []IndexEntry `json:"entries"`
}

// writeIssueIndex writes issue's index file for the ledger version st (its
// open entries es; none removes the file). It is derived data: written
// without fsync, and never through a symlink. locked says the caller holds
// the issue's lock: the temp file then has the one name every holder uses
// (atomicfile.Options.Locked), so what a holder killed mid-write left is
// replaced by the next write; readers that heal an index file without the
// lock take names of their own.
func (s *Store) writeIssueIndex(issue int, st stamp, es []IndexEntry, locked bool) error {
	if len(es) == 0 {
		s.noteIndex(0, stamp{}, nil)
		path := s.IssueIndexPath(issue)
		if err := atomicfile.CheckNoLinks(s.dir, path); err != nil {
			return err // nothing removed in a directory a link points at
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("index %s: %w", path, err)
		}
		return nil
	}
	return s.writeIndexFile(issue, st, es, locked)
}

// writeIndexFile writes issue's index file as given. An entry read from
// the previous index file (taken over by entriesOf) is written as read.
func (s *Store) writeIndexFile(issue int, st stamp, es []IndexEntry, locked bool) error {
	path := s.IssueIndexPath(issue)
	head, err := jsonv2.Marshal(issueIndex{Version: IndexVersion, Issue: issue, Ledger: st})
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if !bytes.HasSuffix(head, []byte(`"entries":[]}`)) {
		return fmt.Errorf("encode %s: the entries are not last", path)
	}
	// The entries read from the old file are written as read, straight
	// from its bytes: an issue with 2,000 open questions has a file of half
	// a megabyte, which is not put together in memory again. An error
	// cancels the write. Never into a directory that is a link (a cloned
	// repository can hold one pointing anywhere): reads make index files
	// afresh too.
	err = atomicfile.WriteDerivedFile(s.dir, path, locked, func(t *atomicfile.Target) error {
		t.Write(head[:len(head)-len(`]}`)])
		for i := range es {
			if i > 0 {
				t.Write(comma)
			}
			b := es[i].raw
			if b == nil {
				// by index: a copy of the entry handed to Marshal would
				// be one allocation per entry
				var err error
				if b, err = jsonv2.Marshal(&es[i]); err != nil {
					return fmt.Errorf("encode %s: %w", path, err)
				}
			}
			t.Write(b)
		}
		_, err := t.Write(indexEnd)
		return err // a Target keeps its first error
	})
	if err != nil {
		return err
	}
	s.noteIndex(issue, st, es)
	return nil
}

var comma, indexEnd = []byte(","), []byte("]}\n")

// noteIndex keeps the entries of the index file this process last wrote,
// for ledger version st of issue: the monitor that runs after a write then
// need not read them back.
func (s *Store) noteIndex(issue int, st stamp, es []IndexEntry) {
	s.wrote.Lock()
	defer s.wrote.Unlock()
	s.wrote.issue, s.wrote.st, s.wrote.es = issue, st, es
}

// noted returns the entries noteIndex kept, if they are for ledger
// version st of issue. They are not copied: every reader after a write
// (agent statuses, the side monitor) would copy all the issue's open
// entries, and none changes them in place (see OpenEntries); the capacity
// is cut to the length, so that an append copies.
func (s *Store) noted(issue int, st stamp) ([]IndexEntry, bool) {
	s.wrote.Lock()
	defer s.wrote.Unlock()
	if s.wrote.issue != issue || s.wrote.st != st || s.wrote.es == nil {
		return nil, false
	}
	return slices.Clip(s.wrote.es), true
}

// ReadIndex reads every per-issue index file without locking, checking
// each against its ledger: an issue whose ledger is no longer the version
// its file was derived from is read from the ledger itself. Ledgers that
// cannot be read then are returned in skipped (their issues are left out).
// An index that was never built gives an *IndexUnusableError. The
// entries may be shared, as OpenEntries' are.
func (s *Store) ReadIndex() (*Index, []error, error) { return s.readIndex(false) }

// readIndex is ReadIndex; with heal, an index file that does not match its
// ledger is made afresh from it (see OpenEntriesStamped).
func (s *Store) readIndex(heal bool) (*Index, []error, error) {
	if _, err := os.Stat(s.builtPath()); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, &IndexUnusableError{Path: s.IndexPath(), Reason: "missing"}
		}
		return nil, nil, fmt.Errorf("index %s: %w", s.IndexPath(), err)
	}
	issues, err := s.IssuesWithFile(IndexDir)
	if err != nil {
		return nil, nil, err
	}
	// and the ledgers with no index file that changed since a reader found
	// nothing open in them (closed.go): another tool's, or just closed;
	// unless nothing was created, renamed or removed among the ledgers
	// since the last sweep
	dir, dirTime, dirOK := s.ledgerDir()
	var closed map[int]stamp
	var others []int
	sweep := !dirOK || !s.swept(dir)
	if sweep {
		closed = s.readClosed()
		if others, err = s.unaccounted(issues, closed); err != nil {
			return nil, nil, err
		}
	}
	ix := NewIndex()
	var skipped []error
	noted := false
	for _, issue := range append(issues, others...) {
		es, _, change, closedAt, err := s.openEntries(issue, heal)
		if err != nil {
			skipped = append(skipped, err)
			sweep = false // not accounted for: the next reader looks again
			continue
		}
		if len(es) > 0 {
			ix.Issues[issue] = es
		}
		if change != nil {
			ix.Foreign = append(ix.Foreign, *change)
		}
		if closedAt != (stamp{}) {
			if closed == nil {
				closed = s.readClosed()
			}
			closed[issue], noted = closedAt, true
		}
	}
	if noted && s.writeClosed(closed) != nil {
		sweep = false
	}
	if heal && sweep && dirOK {
		s.noteSwept(dir, dirTime)
	}
	if heal {
		s.flushDecided()
	}
	return ix, skipped, nil
}

// IssueOfFile parses a ledger or index file name, "issue-N.json".
func IssueOfFile(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "issue-")
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutSuffix(rest, ".json")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || ValidateIssue(n) != nil {
		return 0, false
	}
	return n, true
}

// OpenEntries returns the index entries of issue's open clarifications:
// from its index file when that was made from the ledger now on disk, else
// from the ledger. It costs the issue's open questions, not its history.
// After a write in this process the entries are those it wrote, shared by
// every reader (noted): read them, and copy before changing one in place.
func (s *Store) OpenEntries(issue int) ([]IndexEntry, error) {
	if err := ValidateIssue(issue); err != nil {
		return nil, err
	}
	es, _, err := s.OpenEntriesStamped(issue, false) // a read: it writes nothing
	return es, err
}

// OpenEntriesStamped is OpenEntries, with the stamp of the ledger the
// entries were derived from, when they were read from an index file made
// from the ledger now on disk (Stamp{} otherwise): while the ledger keeps
// that stamp, OpenEntries gives the same. With heal (a caller that may
// write: the monitor, not a dry run, not doctor without --fix), an index
// file made from another version of the ledger is made afresh from it.
func (s *Store) OpenEntriesStamped(issue int, heal bool) ([]IndexEntry, Stamp, error) {
	es, st, _, err := s.LoadEntries(issue, heal)
	return es, st, err
}

// LoadEntries is OpenEntriesStamped that also gives, with heal, the change
// it found when the entries were derived again from a ledger that is not
// the version its index file was made from (or that has no index file)
// and they differ: another tool's write, seen for the first time (nil
// otherwise). A ledger found with nothing open is noted in the closed
// record.
func (s *Store) LoadEntries(issue int, heal bool) ([]IndexEntry, Stamp, *ForeignChange, error) {
	es, st, change, closedAt, err := s.openEntries(issue, heal)
	if closedAt != (stamp{}) {
		s.noteClosed(issue, closedAt)
	}
	if heal {
		s.flushDecided()
	}
	return es, st, change, err
}

// openEntries is LoadEntries, leaving the closed record to the caller: a
// ledger found with nothing open is given in closedAt (its stamp).
func (s *Store) openEntries(issue int, heal bool) (es []IndexEntry, at Stamp, change *ForeignChange, closedAt stamp, err error) {
	fi, serr := os.Stat(s.Path(issue))
	if serr == nil {
		if es, ok := s.noted(issue, stampOf(fi)); ok {
			return es, Stamp{}, nil, stamp{}, nil
		}
	}
	ii, ierr := s.readIndexFile(issue, false)
	if ierr == nil && serr == nil && ii.Ledger == stampOf(fi) {
		return ii.Entries, stampOf(fi), nil, stamp{}, nil
	}
	l, st, err := s.readStamped(issue)
	if err != nil {
		return nil, Stamp{}, nil, stamp{}, err
	}
	es = EntriesOf(l)
	if !heal || st == (Stamp{}) {
		return es, Stamp{}, nil, stamp{}, nil
	}
	// a version of the ledger agentx did not account for: decision
	// memory is brought in step with it too (flushDecided)
	s.noteReread(l)
	if foreignLooking(ii, ierr, es) || len(es) == 0 && ii != nil {
		// What looks like another tool's change, or an index file to
		// remove, may be an agentx writer between its index file and its
		// ledger: settled under the issue's lock, where no agentx writer
		// is half way.
		return s.settle(issue)
	}
	// The index file was made from another version of the ledger with the
	// same open questions (the workspace copied or cloned: every file a new
	// inode): made afresh, so that the next reader reads it instead of the
	// ledger. Without the issue's lock: one that loses a race with a writer
	// names the version it was made from, so it is never taken for the
	// writer's.
	if len(es) == 0 {
		return es, Stamp{}, nil, st, nil // no index file, nothing open: noted closed
	}
	if s.writeIndexFile(issue, st, es, false) == nil {
		return es, st, nil, stamp{}, nil
	}
	return es, Stamp{}, nil, stamp{}, nil
}

// foreignLooking reports whether the open entries es, derived from the
// ledger, are not what the index file (ii, or the error reading it) says:
// other questions, statuses or rounds, or open questions with no index
// file at all.
func foreignLooking(ii *issueIndex, ierr error, es []IndexEntry) bool {
	if ii != nil {
		return !sameOpen(ii.Entries, es)
	}
	return errors.Is(ierr, fs.ErrNotExist) && len(es) > 0
}

// settleWait bounds how long a reader waits for an issue's lock to settle
// what looks like another tool's change: a busy issue is read as it is, and
// settled by a later reader.
const settleWait = time.Second

// settle is openEntries for a ledger that looks changed behind agentx's
// back, under the issue's lock: the index file and the ledger read again,
// the change (if still there: it is another tool's, or a writer that died
// between its two renames) given with the entries, and the index file made
// afresh or, with nothing open, removed and the ledger noted closed. The
// lock not had in time, nothing is healed and nothing reported.
func (s *Store) settle(issue int) (es []IndexEntry, at Stamp, change *ForeignChange, closedAt stamp, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), settleWait)
	defer cancel()
	lk, lerr := s.acquire(ctx, s.Path(issue))
	if lerr != nil {
		l, _, err := s.readStamped(issue)
		if err != nil {
			return nil, Stamp{}, nil, stamp{}, err
		}
		return EntriesOf(l), Stamp{}, nil, stamp{}, nil
	}
	defer func() { _ = lk.Release() }()
	ii, ierr := s.readIndexFile(issue, false)
	l, st, err := s.readStamped(issue)
	if err != nil {
		return nil, Stamp{}, nil, stamp{}, err
	}
	es = EntriesOf(l)
	if st == (Stamp{}) {
		return es, Stamp{}, nil, stamp{}, nil // no ledger (any more)
	}
	if ierr == nil && ii.Ledger == st {
		return ii.Entries, st, nil, stamp{}, nil // an agentx writer's, complete now
	}
	if foreignLooking(ii, ierr, es) {
		lk.NoteForeign() // a foreign tool writes this ledger: leave it its turns (lock.Fairness)
		change = &ForeignChange{Issue: issue, Ledger: l}
		if ii != nil {
			change.Before = ii.Entries
		}
	}
	if len(es) == 0 {
		if ii != nil && s.writeIssueIndex(issue, st, nil, true) != nil { // nil entries: removed
			return es, Stamp{}, change, stamp{}, nil
		}
		return es, Stamp{}, change, st, nil
	}
	if s.writeIssueIndex(issue, st, es, true) != nil {
		return es, Stamp{}, change, stamp{}, nil
	}
	return es, st, change, stamp{}, nil
}

// sameOpen reports whether two lists of open entries name the same
// clarifications in the same status and round.
func sameOpen(a, b []IndexEntry) bool {
	return slices.EqualFunc(a, b, func(x, y IndexEntry) bool {
		return x.ID == y.ID && x.Status == y.Status && x.Round == y.Round
	})
}

// readIndexFile reads issue's index file, if it is one of this version
// for that issue, with each entry's bytes as read when raw is set. Index
// files are read by every monitor run, so they are decoded with the faster
// JSON v2 engine.
func (s *Store) readIndexFile(issue int, raw bool) (*issueIndex, error) {
	path := s.IssueIndexPath(issue)
	data, err := atomicfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ii issueIndex
	switch {
	case fastIndex(data, &ii):
	case raw:
		err = decodeRawIndex(data, &ii)
	default:
		err = jsonv2.Unmarshal(data, &ii)
	}
	if err != nil {
		ce := corrupt(path, data, err)
		ce.Derived = true
		return nil, ce
	}
	if ii.Version != IndexVersion || ii.Issue != issue {
		return nil, &IndexUnusableError{Path: path, Reason: fmt.Sprintf("version %d of issue %d, not version %d of issue %d", ii.Version, ii.Issue, IndexVersion, issue)}
	}
	for i := range ii.Entries {
		ii.Entries[i].Issue = issue
	}
	return &ii, nil
}

// decodeRawIndex decodes an index file into ii, keeping each entry's bytes:
// one decode of the whole file, and one pass that only cuts the entries out
// (a decode per entry costs more than both).
func decodeRawIndex(data []byte, ii *issueIndex) error {
	if err := jsonv2.Unmarshal(data, ii); err != nil {
		return err
	}
	var w struct {
		Entries []jsontext.Value `json:"entries"`
	}
	if err := jsonv2.Unmarshal(data, &w); err != nil {
		return err
	}
	if len(w.Entries) != len(ii.Entries) {
		return fmt.Errorf("%d entries, then %d", len(ii.Entries), len(w.Entries))
	}
	for i, r := range w.Entries {
		ii.Entries[i].raw = r
	}
	return nil
}

// readStamped reads issue's ledger and the stamp of the very file read.
func (s *Store) readStamped(issue int) (*Ledger, stamp, error) {
	path := s.Path(issue)
	data, st, err := ReadStamped(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Ledger{IssueNumber: issue, Clarifications: []*Clarification{}}, stamp{}, nil
	}
	if err != nil {
		return nil, stamp{}, fmt.Errorf("read ledger %s: %w", path, err)
	}
	l, err := decodeIssue(path, issue, data, true)
	return l, st, err
}

// BuildIndex scans every ledger (without locks) and returns the index they
// imply. Ledgers that cannot be read are skipped and returned in skipped.
func (s *Store) BuildIndex() (ix *Index, skipped []error, err error) {
	ix = NewIndex()
	err = s.scan(func(issue int, l *Ledger, _ stamp, err error) {
		if err != nil {
			skipped = append(skipped, err)
			return
		}
		ix.Set(l)
	})
	return ix, skipped, err
}

// scan reads every ledger once, in issue order.
func (s *Store) scan(fn func(issue int, l *Ledger, st stamp, err error)) error {
	issues, err := s.Issues()
	if err != nil {
		return err
	}
	for _, n := range issues {
		l, st, err := s.readStamped(n)
		fn(n, l, st, err)
	}
	return nil
}

// RebuildIndex recreates every per-issue index file from the ledgers,
// without their locks (each file is stamped with the ledger version it
// was derived from, so a write racing with the rebuild is noticed by
// readers), removes the files of issues with nothing open, and marks the
// index built. Ledgers that cannot be read are left out and returned in
// skipped.
func (s *Store) RebuildIndex(ctx context.Context) (ix *Index, skipped []error, err error) {
	ix = NewIndex()
	unreadable := map[int]bool{}
	closed := map[int]stamp{}
	err = s.scan(func(issue int, l *Ledger, st stamp, rerr error) {
		if rerr != nil {
			skipped = append(skipped, rerr)
			// An index file that matches no ledger version: every reader
			// reads this ledger, fails, and reports it (ready: BLOCKED).
			unreadable[issue] = true
			if werr := s.writeIndexFile(issue, stamp{}, nil, false); werr != nil && err == nil {
				err = werr
			}
			return
		}
		es := EntriesOf(l)
		if len(es) == 0 {
			if st != (stamp{}) {
				closed[issue] = st
			}
			return
		}
		ix.Issues[issue] = es
		if werr := s.writeIssueIndex(issue, st, es, false); werr != nil && err == nil {
			err = werr
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("rebuild index: %w", err)
	}
	indexed, _ := s.IssuesWithFile(IndexDir)
	for _, n := range indexed {
		if _, open := ix.Issues[n]; !open && !unreadable[n] {
			_ = s.writeIssueIndex(n, stamp{}, nil, false) // removes the file
		}
	}
	if err := atomicfile.CheckNoLinks(s.dir, s.builtPath()); err != nil {
		return nil, nil, fmt.Errorf("rebuild index: %w", err)
	}
	_ = os.Remove(filepath.Join(s.dir, IndexDir, "open.json")) // the single index of earlier versions
	_ = os.Remove(filepath.Join(s.dir, IndexDir, "open.json.dirty"))
	if err := os.MkdirAll(s.IndexPath(), 0o755); err != nil {
		return nil, nil, fmt.Errorf("rebuild index: %w", err)
	}
	if err := s.writeClosed(closed); err != nil {
		return nil, nil, fmt.Errorf("rebuild index: %w", err)
	}
	if err := atomicfile.WriteVolatile(s.builtPath(), []byte(s.Now().Format(time.RFC3339)+"\n"), perm); err != nil {
		return nil, nil, fmt.Errorf("rebuild index: %w", err)
	}
	return ix, skipped, nil
}

// OpenIssues lists the issues that may have an open clarification, without
// reading their index files: the issues with an index file when the index
// was built (an index file can only be behind, listing an issue whose last
// question just closed: a caller reads that ledger and finds nothing open),
// else every issue with a ledger.
func (s *Store) OpenIssues() ([]int, error) {
	issues, _, err := s.OpenIssuesSettling()
	return issues, err
}

// OpenIssuesSettling is OpenIssues for a reader that may write and loads
// the issues it returns (LoadEntries: the side monitor): once it has
// loaded those with no index file, settled(loaded) notes the ledger
// directory as swept, as LoadOpen does, so that the next reads skip the
// listing until something is created, renamed or removed there. loaded
// says which issues were loaded whole; settled does nothing unless every
// one the sweep found is among them.
func (s *Store) OpenIssuesSettling() (issues []int, settled func(loaded func(int) bool), err error) {
	nothing := func(func(int) bool) {}
	if !s.IndexBuilt() {
		issues, err = s.Issues()
		return issues, nothing, err
	}
	indexed, err := s.IssuesWithFile(IndexDir)
	if err != nil {
		return nil, nothing, err
	}
	// and the ledgers with no index file that changed since they were
	// found with nothing open: another tool may have asked there
	dir, dirTime, ok := s.ledgerDir()
	if ok && s.swept(dir) {
		return indexed, nothing, nil
	}
	others, err := s.unaccounted(indexed, s.readClosed())
	if err != nil {
		return nil, nothing, err
	}
	settled = func(loaded func(int) bool) {
		if ok && !slices.ContainsFunc(others, func(n int) bool { return !loaded(n) }) {
			s.noteSwept(dir, dirTime)
		}
	}
	if len(others) == 0 {
		return indexed, settled, nil
	}
	return slices.Sorted(slices.Values(append(indexed, others...))), settled, nil
}

// ReadOpen is the one way to read every open clarification: from the
// index when it was built, else from a scan of the ledgers. It never
// writes. Ledgers that cannot be read are returned in skipped.
func (s *Store) ReadOpen() (ix *Index, skipped []error, err error) {
	ix, skipped, err = s.ReadIndex()
	var unusable *IndexUnusableError
	if errors.As(err, &unusable) {
		return s.BuildIndex()
	}
	return ix, skipped, err
}

// LoadOpen is ReadOpen for a process that may write: an index that was
// never built is built from the scan (rebuilt then says so), and an index
// file made from another version of its ledger is made afresh.
func (s *Store) LoadOpen(ctx context.Context) (ix *Index, rebuilt bool, skipped []error, err error) {
	ix, skipped, err = s.readIndex(true)
	var unusable *IndexUnusableError
	if !errors.As(err, &unusable) {
		return ix, false, skipped, err
	}
	ix, skipped, err = s.RebuildIndex(ctx)
	return ix, err == nil, skipped, err
}

// SyncIndex brings issue's index file in step with its ledger, under the
// ledger's lock, rewriting it only if it differs. It heals an index file
// left behind by a writer killed between its two renames; the monitor
// calls it when a decision taken on the index turns out stale under the
// lock.
func (s *Store) SyncIndex(ctx context.Context, issue int) (changed bool, err error) {
	if err := ValidateIssue(issue); err != nil {
		return false, err
	}
	lk, err := s.acquire(ctx, s.Path(issue))
	if err != nil {
		return false, err
	}
	defer func() { _ = lk.Release() }()
	ii, ierr := s.readIndexFile(issue, false)
	l, st, err := s.readStamped(issue)
	if err != nil {
		return false, err
	}
	want := EntriesOf(l)
	if ierr == nil && ii.Ledger == st && sameEntries(ii.Entries, want) {
		return false, nil
	}
	if len(want) == 0 && errors.Is(ierr, fs.ErrNotExist) {
		return false, nil // no file, and none wanted
	}
	return true, s.writeIssueIndex(issue, st, want, true)
}

func sameEntries(a, b []IndexEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !entryEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}
