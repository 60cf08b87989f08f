package ledger

import (
	"bytes"
	"context"
	jsonv1 "encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"time"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/lock"
)

// ErrNotFound is returned when a clarification or ledger does not exist.
var ErrNotFound = errors.New("not found")

// CorruptError is a data file that does not parse. agentx never overwrites
// such a file.
type CorruptError struct {
	Path   string
	Offset int64 // byte offset of the problem, when known
	Line   int   // 1-based line, when known
	Col    int
	Err    error
	// Derived is set for a state file other than a ledger (statuses, hook
	// records, inbox marks, index files): agentx doctor --fix can move it
	// aside, since nothing in it is the record.
	Derived bool
}

func (e *CorruptError) Error() string {
	where := e.Path
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d:%d (byte %d)", e.Path, e.Line, e.Col, e.Offset)
	}
	return fmt.Sprintf("%s: %s", where, e.Problem())
}

// Problem is what is wrong, with where in the file but not which file.
func (e *CorruptError) Problem() string {
	return fmt.Sprintf("cannot be parsed: %v", e.Err)
}

// Hint says what to do about it, in no front end's words: Path and
// Derived are what each front end words its own advice from (the command
// line names its doctor command, and a shell's mv).
func (e *CorruptError) Hint() string {
	if e.Derived {
		return fmt.Sprintf("%s was left untouched: a workspace check with repairs moves the file aside (its content kept) and the next write starts it afresh.", e.Path)
	}
	return fmt.Sprintf("%s was left untouched: fix the JSON by hand, or move the file aside to start that issue afresh.", e.Path)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// StateDir layout.
const (
	ClarificationsDir = "clarifications"
	perm              = 0o644
)

// Store reads and writes the ledgers under a state directory
// (.agentx/state). Update is the only write path.
type Store struct {
	dir  string
	lock lock.Options
	now  func() time.Time

	rep Replicator // what the ledgers are shared through, if anything (SetReplicator)

	changers map[string]Changer // the kinds of Change it makes (Handle)

	pending decidedPending // ledgers read again, for decision memory (noteReread)

	// wrote is the index file this process last wrote (see noteIndex)
	wrote struct {
		sync.Mutex
		issue int
		st    stamp
		es    []IndexEntry
	}
}

// NewStore returns a store for stateDir. opts tunes locking; now is the
// clock (nil: time.Now).
func NewStore(stateDir string, opts lock.Options, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	if opts.Now == nil {
		opts.Now = now
	}
	return &Store{dir: stateDir, lock: opts, now: now}
}

// Dir is the state directory.
func (s *Store) Dir() string { return s.dir }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now().UTC() }

// Path is the ledger file of an issue.
func (s *Store) Path(issue int) string {
	return filepath.Join(s.dir, ClarificationsDir, "issue-"+strconv.Itoa(issue)+".json")
}

// Read returns an issue's ledger without locking: writes are atomic renames,
// so it sees a whole file, old or new. A missing file is an empty ledger.
func (s *Store) Read(issue int) (*Ledger, error) {
	if err := ValidateIssue(issue); err != nil {
		return nil, err
	}
	return readLedger(s.Path(issue), issue, false)
}

// readLedger reads the ledger file of issue at path, whole or with its
// final records sealed (see Clarification.Sealed).
func readLedger(path string, issue int, sealed bool) (*Ledger, error) {
	data, _, err := ReadStamped(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Ledger{IssueNumber: issue, Clarifications: []*Clarification{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ledger %s: %w", path, err)
	}
	return decodeIssue(path, issue, data, sealed)
}

// decodeIssue decodes the ledger file of issue.
func decodeIssue(path string, issue int, data []byte, sealed bool) (*Ledger, error) {
	l, err := decode(path, data, sealed)
	if err != nil {
		return nil, err
	}
	if l.IssueNumber != issue {
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("issueNumber is %d but the file is for issue %d", l.IssueNumber, issue)}
	}
	if err := l.checkIntegrity(); err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	return l, nil
}

// checkIntegrity is what every read of a ledger requires, so that no
// command acts on a ledger it misreads (a gate that says READY because it
// does not know a status): every id is a clarification id of this issue,
// no id twice, every status one agentx knows. Looser limits (text lengths,
// agent name spelling) are Validate's, for what agentx writes: a ledger
// another AgentX tool wrote is still read.
func (l *Ledger) checkIntegrity() error {
	seen := make(map[string]bool, len(l.Clarifications))
	for i, c := range l.Clarifications {
		issue, _, err := ParseID(c.ID)
		switch {
		case err != nil:
			return fmt.Errorf("clarification %d: id %q is not a clarification id", i+1, c.ID)
		case issue != l.IssueNumber:
			return fmt.Errorf("%s belongs to issue %d, not %d", c.ID, issue, l.IssueNumber)
		case seen[c.ID]:
			return fmt.Errorf("%s appears twice", c.ID)
		case !c.Status.Valid():
			return fmt.Errorf("%s: status %q is not one of %s", c.ID, c.Status, statusList())
		}
		seen[c.ID] = true
	}
	return nil
}

// Decode parses ledger JSON. A syntax or type error becomes a *CorruptError
// with the byte offset, line and column.
func Decode(path string, data []byte) (*Ledger, error) { return decode(path, data, false) }

func decode(path string, data []byte, sealed bool) (*Ledger, error) {
	var l Ledger
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &CorruptError{Path: path, Err: errors.New("file is empty")}
	}
	if err := unmarshalLedger(data, &l, sealed); err != nil {
		return nil, corrupt(path, data, err)
	}
	l.size = len(data)
	if l.Clarifications == nil {
		l.Clarifications = []*Clarification{}
	}
	for _, c := range l.Clarifications {
		if c == nil {
			return nil, &CorruptError{Path: path, Err: errors.New("a clarification record is null")}
		}
		if c.Thread == nil {
			c.Thread = []ThreadEntry{}
		}
	}
	return &l, nil
}

// corrupt turns a JSON decoding error into a *CorruptError that points at
// the byte, line and column where it went wrong.
func corrupt(path string, data []byte, err error) *CorruptError {
	ce := &CorruptError{Path: path, Err: err}
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	var syn1 *jsonv1.SyntaxError // the other state files use encoding/json
	var typ1 *jsonv1.UnmarshalTypeError
	switch {
	case errors.As(err, &syn1):
		ce.Offset = syn1.Offset
	case errors.As(err, &typ1):
		ce.Offset = typ1.Offset
	case errors.As(err, &syn):
		ce.Offset, ce.Err = syn.ByteOffset, describe(syn.JSONPointer, syn.Err)
	case errors.As(err, &sem):
		why := sem.Err
		if why == nil {
			why = fmt.Errorf("a JSON %s where %s belongs", kindName(sem.JSONKind), goName(sem.GoType))
		}
		ce.Offset, ce.Err = sem.ByteOffset, describe(sem.JSONPointer, why)
	default:
		return ce
	}
	if ce.Offset > 0 {
		ce.Line, ce.Col = lineCol(data, ce.Offset)
	}
	return ce
}

// describe words a decoding error: what is wrong, and where in the
// document, as a JSON pointer (/clarifications/0/created).
func describe(at jsontext.Pointer, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New("unexpected end of JSON input")
	}
	if at == "" {
		return err
	}
	return fmt.Errorf("%w (at %s)", err, at)
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

func goName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Pointer, reflect.Map:
		return "an object"
	}
	return "a " + t.String()
}

func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// Encode renders a ledger as the file content agentx writes.
func Encode(l *Ledger) ([]byte, error) {
	var b bytes.Buffer
	// one buffer the size of the ledger as read and a margin for the
	// change, not doubled and copied up to it (25 MB for 20,000 records)
	b.Grow(l.size + l.size/32 + 4<<10)
	if _, _, _, err := writeLedger(&emitter{w: &b}, l); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Update is the only way a ledger is written: it takes the issue's lock,
// reads the ledger (a missing one starts empty; a corrupt one is an error and
// is never overwritten), calls fn, checks every status change against the
// transition table and that no record vanished, validates, and writes the
// file atomically (Locked.Write): temp file (or, for a large ledger, its
// shadow: see atomicfile.Options.Shadow), fsync, the issue's index file, a
// check that the lock is still ours, rename, fsync of the directory.
// Nothing else happens under the lock, and no file of another issue is
// touched. If fn returns an error nothing is written. The ledger as written
// is returned. With a Replicator set, the change goes through it (see
// Replicator): its Prefetch before the lock, its Apply under it.
func (s *Store) Update(ctx context.Context, issue int, fn func(*Ledger) error) (*Ledger, error) {
	if err := ValidateIssue(issue); err != nil {
		return nil, err
	}
	var prefetched any
	if s.rep != nil {
		var err error
		if prefetched, err = s.rep.Prefetch(ctx, issue); err != nil {
			return nil, err
		}
	}
	f, err := s.Lock(ctx, issue)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Release() }()
	if s.rep != nil {
		return s.rep.Apply(ctx, f, fn, prefetched)
	}
	return s.change(f, fn, nil)
}

// change makes fn's change to the ledger f holds, checks it and writes it
// (Update's work under the lock, on this machine alone); once the write is
// in place, it calls after (when not nil), still under the lock.
func (s *Store) change(f *Locked, fn func(*Ledger) error, after func()) (*Ledger, error) {
	l, laid := s.openLaidOut(f.Path, f.Issue)
	var cp Checkpoint
	if laid {
		defer l.close()
		cp = l.asRead()
	} else {
		var err error
		if l, err = f.Read(); err != nil {
			return nil, err
		}
		cp = l.Checkpoint()
	}
	if err := l.change(f.Path, cp, fn); err != nil {
		return nil, err
	}
	if err := f.Write(l, nil); err != nil {
		return nil, err
	}
	if after != nil {
		after()
	}
	return l, nil
}

// badRecord is the error of a sealed record of l, read from path, that
// could not be decoded (nil if none): a *CorruptError of the ledger, or of
// the layout memo when it is the memo that misled.
func (l *Ledger) badRecord(path string) error {
	if l.bad == nil {
		return nil
	}
	var ce *CorruptError
	if errors.As(l.bad, &ce) {
		return ce
	}
	return &CorruptError{Path: path, Err: l.bad}
}

// Write writes l as the ledger file, the one sequence every write of a
// ledger goes through: encode into a temp file (or, for a large ledger
// read through its layout memo, its shadow: see atomicfile.Options.Shadow),
// fsync, the issue's index file, a check that the lock is still ours,
// rename, fsync of the directory, then the layout memo (none with a
// Replicator: its ledgers are read whole). encoded, if not nil, is l
// already encoded (Encode(l): what a Replicator has just published), and
// is written as it is.
func (f *Locked) Write(l *Ledger, encoded []byte) error { return f.WriteAfter(l, encoded, nil) }

// WriteAfter is Write, whose new file, once written and fsynced, waits
// for wait (when not nil) before it takes the ledger's place (index,
// lock check, rename): when wait returns an error the write is dropped
// and the ledger left as it was. A Replicator writes the local copy so
// while the push that decides it runs. The caller must not change l
// until WriteAfter returns.
func (f *Locked) WriteAfter(l *Ledger, encoded []byte, wait func() error) error {
	s, issue, path := f.s, f.Issue, f.Path
	open := s.entriesOf(l)
	if err := l.badRecord(path); err != nil {
		return err
	}
	var (
		ino         uint64
		first, same int64
		lens        []int64
		kept        int
	)
	// Locked: only the holder of the issue's lock writes its ledger, so
	// a temp file a killed writer left is replaced by the next write.
	o := atomicfile.Options{Durable: true, Locked: true, Wait: wait, BeforeRename: func(tmp os.FileInfo) error {
		ino = fileID(tmp)
		if len(open) > 0 {
			// Before the rename: a reader never sees a ledger with open
			// clarifications that no index file points to.
			if err := s.writeIssueIndex(issue, stampOf(tmp), open, true); err != nil {
				return err
			}
		}
		return f.lk.Check()
	}}
	if l.src != nil && s.rep == nil {
		// a large ledger, read through its layout memo: most of its
		// bytes stay where they are, and a shadow saves writing them
		o.Shadow = atomicfile.ShadowOf(path)
		o.ShadowHolds = s.shadowHolds(l.src)
	}
	err := atomicfile.WriteFile(path, perm, o, func(t *atomicfile.Target) error {
		if encoded != nil {
			_, err := t.Write(encoded)
			return err
		}
		e := toFile(t)
		var err error
		if first, lens, kept, err = writeLedger(e, l); err != nil {
			return fmt.Errorf("ledger issue %d: encode: %w", issue, err)
		}
		same = e.same
		return nil
	})
	if err != nil {
		return err
	}
	if len(open) == 0 {
		// After the rename: until then the old ledger may have had some.
		_ = s.writeIssueIndex(issue, stamp{}, nil, true)
	}
	f.noteDecided(l) // after the rename: a decision in memory is one taken
	if s.rep == nil {
		s.saveLayout(path, l, ino, first, lens, kept, same)
	}
	return nil
}

// acquire takes the lock of the data file at path.
func (s *Store) acquire(ctx context.Context, path string) (*lock.Lock, error) {
	return s.acquireWith(ctx, path, nil)
}

// acquireWith is acquire with hand, when not nil, as the lock's Handoff.
func (s *Store) acquireWith(ctx context.Context, path string, hand *lock.Handoff) (*lock.Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	opts := s.lock
	if s.rep != nil || filepath.Dir(path) != filepath.Join(s.dir, ClarificationsDir) {
		// Only ledgers are written by AgentX tools that poll for the
		// lock; agentx's own files (agent-status.json, hook records,
		// inbox marks) need no window for them, and a fleet's commands
		// all queue on agent-status.json. Shared ledgers need none
		// either: their local copies are the remote's, replaced by each
		// write, and an AgentX tool's change to one would not be kept.
		opts.Fair = lock.Fairness{}
	}
	opts.Hand = hand
	return lock.Acquire(ctx, path, opts)
}

// checkChanges enforces the lifecycle at the write path, whatever fn did:
// records are never removed and every status change is an allowed move.
// before is the records as read, in order. It returns the places of the
// records resolved since (Checkpoint.resolvedBy) and, in invalid, the
// first error Validate's checks of the records find (a lifecycle error
// comes first). A write keeps the records in place and may add some after
// them, so the checks go by position, with no map, in one pass over the
// records, unless a record moved. (A ledger as read has no two records of
// one id, so a record found in its place was what it was there.)
func checkChanges(before Checkpoint, l *Ledger) (decided []int, invalid, err error) {
	cs := l.Clarifications
	n := before.len()
	if len(cs) < n {
		return before.moved(l)
	}
	v := recordCheck{l: l, last: -1}
	for i, c := range cs {
		var was Status // none: a new record
		if i < n {
			b := before.rec(i)
			if c.ID != b.id {
				return before.moved(l)
			}
			if was = b.status; was != c.Status && !CanMove(was, c.Status) {
				return nil, nil, &TransitionError{ID: c.ID, From: was, To: c.Status}
			}
		}
		if c.Status == Resolved && was != Resolved {
			decided = append(decided, i)
		}
		if invalid == nil {
			invalid = v.check(i, c)
		}
	}
	return decided, invalid, nil
}

// moved is checkChanges for records that are no longer in their places.
func (cp Checkpoint) moved(l *Ledger) (decided []int, invalid, err error) {
	if err := checkMoved(cp, l); err != nil {
		return nil, nil, err
	}
	return cp.resolvedBy(l), l.validateRecords(), nil
}

// checkMoved is checkChanges for records that are no longer in their
// places.
func checkMoved(cp Checkpoint, l *Ledger) error {
	before := make([]idStatus, cp.len())
	for i := range before {
		before[i] = cp.rec(i)
	}
	was := make(map[string]Status, len(before))
	for _, b := range before {
		was[b.id] = b.status
	}
	after := make(map[string]bool, len(l.Clarifications))
	for _, c := range l.Clarifications {
		after[c.ID] = true
		st, existed := was[c.ID]
		if existed && st != c.Status && !CanMove(st, c.Status) {
			return &TransitionError{ID: c.ID, From: st, To: c.Status}
		}
	}
	for _, b := range before {
		if !after[b.id] {
			return fmt.Errorf("%s: a clarification may not be deleted from the ledger", b.id)
		}
	}
	return nil
}

// Issues lists the issue numbers that have a ledger file, ascending.
func (s *Store) Issues() ([]int, error) { return s.IssuesWithFile(ClarificationsDir) }

// IssuesWithFile lists, ascending, the issues N that have a file
// issue-N.json in the state directory's subdirectory sub (ledgers, index
// files, hook records). A missing directory holds none.
func (s *Store) IssuesWithFile(sub string) ([]int, error) {
	dir := filepath.Join(s.dir, sub)
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	defer func() { _ = f.Close() }()
	names, err := f.Readdirnames(-1) // names only: no sort of them, no stat
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []int
	for _, name := range names {
		if n, ok := IssueOfFile(name); ok {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// Get returns the clarification with id, read without locking.
func (s *Store) Get(id string) (*Clarification, error) {
	issue, _, err := ParseID(id)
	if err != nil {
		return nil, err
	}
	if l, ok := s.openLaidOut(s.Path(issue), issue); ok {
		// A long history: the one record, read from where its memo says
		// (a waiter polls this). A memo that misleads: the whole file.
		c := l.Find(id)
		bad := l.bad
		l.close()
		switch {
		case c != nil:
			return c, nil
		case bad == nil:
			return nil, fmt.Errorf("clarification %s: %w", id, ErrNotFound)
		}
	}
	l, err := s.Read(issue)
	if err != nil {
		return nil, err
	}
	c := l.Find(id)
	if c == nil {
		return nil, fmt.Errorf("clarification %s: %w", id, ErrNotFound)
	}
	return c, nil
}
