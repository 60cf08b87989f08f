package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/textsim"
	"github.com/agentx-cli/agentx/lock"
)

// The index of open clarifications lets the monitor and `ready` cost
// O(open clarifications) instead of O(every ledger ever written). It is
// derived data: Update keeps it in step, in the same transaction as the
// ledger write (under the ledger's lock, after the ledger's atomic write,
// the index is rewritten under its own lock; the lock order is always
// ledger → index), and RebuildIndex recreates it from the ledgers.
const (
	// IndexFile is the index, relative to the state directory.
	IndexFile = "index/open.json"
	// IndexDirtyFile marks the index as behind the ledgers: an Update wrote
	// its ledger but could not update the index. Readers then scan the
	// ledgers, and the next LoadIndex rebuilds.
	IndexDirtyFile = "index/open.json.dirty"
	// IndexVersion is the format version written into the index.
	IndexVersion = 1
)

// Index is the content of the index file: every open (pending, answered,
// stale or escalated) clarification, by issue.
type Index struct {
	Version int                  `json:"version"`
	Issues  map[int][]IndexEntry `json:"issues"`
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
}

// EntryOf is the index entry of clarification c of issue, open or not.
func EntryOf(issue int, c *Clarification) IndexEntry { return entryOf(issue, c, true) }

func entryOf(issue int, c *Clarification, sketch bool) IndexEntry {
	e := IndexEntry{
		Issue: issue, ID: c.ID, From: c.From, To: c.To, Blocking: c.Blocking,
		Status: c.Status, Round: c.Round, Asked: askedAt(c), StaleAfter: c.StaleAfter,
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
// ledger order.
func EntriesOf(l *Ledger) []IndexEntry {
	var out []IndexEntry
	for _, c := range l.Clarifications {
		if c.Status.Open() {
			out = append(out, EntryOf(l.IssueNumber, c))
		}
	}
	return out
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{Version: IndexVersion, Issues: map[int][]IndexEntry{}} }

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
	var out []IndexEntry
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
		slices.Equal(a.Q, b.Q) && slices.Equal(a.PrevQ, b.PrevQ) && monitorEqual(a.Monitor, b.Monitor)
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

// IndexUnusableError says why the index cannot be trusted as it is: it is
// missing, marked dirty, or of another version. Readers then scan the
// ledgers; LoadIndex rebuilds it.
type IndexUnusableError struct {
	Path   string
	Reason string
}

func (e *IndexUnusableError) Error() string { return fmt.Sprintf("index %s: %s", e.Path, e.Reason) }

// IndexPath is the index file's path.
func (s *Store) IndexPath() string { return filepath.Join(s.dir, filepath.FromSlash(IndexFile)) }

func (s *Store) dirtyPath() string { return filepath.Join(s.dir, filepath.FromSlash(IndexDirtyFile)) }

// ReadIndex reads the index without locking (it is replaced by atomic
// renames, so the read sees a whole file). An index that is missing, marked
// dirty or of another version gives an *IndexUnusableError; one that does
// not parse, a *CorruptError.
func (s *Store) ReadIndex() (*Index, error) {
	path := s.IndexPath()
	if _, err := os.Stat(s.dirtyPath()); err == nil {
		return nil, &IndexUnusableError{Path: path, Reason: "marked dirty: a ledger write could not update it"}
	}
	var ix Index
	if err := s.ReadState(IndexFile, &ix); err != nil {
		return nil, err
	}
	switch {
	case ix.Version == 0:
		return nil, &IndexUnusableError{Path: path, Reason: "missing"}
	case ix.Version != IndexVersion:
		return nil, &IndexUnusableError{Path: path, Reason: fmt.Sprintf("version %d, want %d", ix.Version, IndexVersion)}
	}
	if ix.Issues == nil {
		ix.Issues = map[int][]IndexEntry{}
	}
	return &ix, nil
}

// BuildIndex scans every ledger (without locks) and returns the index they
// imply. Ledgers that cannot be read are skipped and returned in skipped.
func (s *Store) BuildIndex() (ix *Index, skipped []error, err error) {
	issues, err := s.Issues()
	if err != nil {
		return nil, nil, err
	}
	ix = NewIndex()
	for _, n := range issues {
		l, err := s.Read(n)
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		ix.Set(l)
	}
	return ix, skipped, nil
}

// RebuildIndex recreates the index from the ledgers, under the index lock,
// replacing whatever the file held (even content that does not parse: the
// index is derived data), and clears the dirty mark. Ledgers that cannot be
// read are left out and returned in skipped.
func (s *Store) RebuildIndex(ctx context.Context) (ix *Index, skipped []error, err error) {
	err = s.locked(ctx, s.IndexPath(), atomicfile.WriteVolatile, func() ([]byte, error) {
		// Clear the mark first: a writer that fails after this point marks
		// it again, and its ledger write is older than the scan below.
		if err := os.Remove(s.dirtyPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("index %s: clear dirty mark: %w", s.IndexPath(), err)
		}
		var err error
		if ix, skipped, err = s.BuildIndex(); err != nil {
			return nil, err
		}
		return encodeState(s.IndexPath(), ix)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("rebuild index: %w", err)
	}
	return ix, skipped, nil
}

// LoadIndex returns the index, rebuilding it first when it is missing,
// dirty, of another version or corrupt (rebuilt then says so, and skipped
// lists the ledgers the rebuild could not read).
func (s *Store) LoadIndex(ctx context.Context) (ix *Index, rebuilt bool, skipped []error, err error) {
	ix, err = s.ReadIndex()
	var unusable *IndexUnusableError
	var corrupt *CorruptError
	if err == nil || !(errors.As(err, &unusable) || errors.As(err, &corrupt)) {
		return ix, false, nil, err
	}
	ix, skipped, err = s.RebuildIndex(ctx)
	return ix, err == nil, skipped, err
}

// thenIndex is Update's write step: the ledger is written with write
// (durably), then, still under the ledger's lock, the index is brought in
// step with *out, the ledger as written.
func (s *Store) thenIndex(ctx context.Context, write func(string, []byte, os.FileMode) error, out **Ledger) func(string, []byte, os.FileMode) error {
	return func(path string, data []byte, mode os.FileMode) error {
		if err := write(path, data, mode); err != nil {
			return err
		}
		return s.indexAfterWrite(ctx, *out)
	}
}

// indexAfterWrite brings l's entries in the index up to date. It runs
// inside Update, under l's ledger lock, after the ledger file was written.
// A missing index is built from every ledger first. If the index cannot be
// updated (it does not parse, its lock timed out) the dirty mark is set so
// that readers stop trusting it; only if that fails too is it an error.
func (s *Store) indexAfterWrite(ctx context.Context, l *Ledger) error {
	err := s.locked(ctx, s.IndexPath(), atomicfile.WriteVolatile, func() ([]byte, error) {
		ix := &Index{}
		if err := s.ReadState(IndexFile, ix); err != nil {
			return nil, err
		}
		if ix.Version != IndexVersion {
			built, _, err := s.BuildIndex()
			if err != nil {
				return nil, err
			}
			ix = built
		}
		if ix.Issues == nil {
			ix.Issues = map[int][]IndexEntry{}
		}
		ix.Set(l)
		return encodeState(s.IndexPath(), ix)
	})
	if err == nil {
		return nil
	}
	if merr := s.markIndexDirty(); merr != nil {
		return fmt.Errorf("ledger issue %d was written but the index could not be updated (%v) nor marked dirty: %w", l.IssueNumber, err, merr)
	}
	return nil
}

// encodeState renders a derived state file compactly (the index is read on
// every hook, so bytes matter more than looks).
func encodeState(path string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", path, err)
	}
	return append(b, '\n'), nil
}

func (s *Store) markIndexDirty() error {
	p := s.dirtyPath()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := atomicfile.OpenFile(p, os.O_CREATE|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	return f.Close()
}

// SyncIndex brings issue's entries in the index in step with its ledger:
// under the ledger's lock (then the index's, the usual order) it compares
// them and rewrites the index only if they differ. It heals an index left
// one write behind by a writer killed between its two writes; the monitor
// calls it when a decision taken on the index turns out stale under the lock.
func (s *Store) SyncIndex(ctx context.Context, issue int) (changed bool, err error) {
	if err := ValidateIssue(issue); err != nil {
		return false, err
	}
	path := s.Path(issue)
	lk, err := lock.Acquire(ctx, path, s.lock)
	if err != nil {
		return false, err
	}
	defer func() { _ = lk.Release() }()
	l, err := readLedger(path, issue)
	if err != nil {
		return false, err
	}
	if ix, err := s.ReadIndex(); err == nil && sameEntries(ix.Issues[issue], EntriesOf(l)) {
		return false, nil
	}
	return true, s.indexAfterWrite(ctx, l)
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
