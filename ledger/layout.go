package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/buildid"
)

// The layout memo keeps the cost of a write independent of an issue's
// history. The AgentX format is one JSON document per issue, replaced whole
// by each write; on an issue with thousands of clarifications, reading,
// tokenising and writing that document is most of an ask's cost.
//
// When agentx writes a large ledger it knows where every record of the new
// file lies, so it notes that, with the id, sender and status of each
// record, in state/ledgers/issue-N.layout, stamped with the identity of
// the file (inode, size, modification and change times: any write to the
// file, by anyone, changes the change time). The next Update that finds
// the stamp matching the ledger it opened reads only the document's head
// and tail; every record is a stub (Clarification.Sealed) that Find decodes
// from the file on demand, and the write copies the unchanged bytes from
// the old file to the new one in the kernel (copy_file_range where the
// system has it) instead of through the process, or, on Linux, patches
// the ledger's shadow, the version before last, where it differs (see
// atomicfile.Options.Shadow). A memo that does not
// match or cannot be read is ignored and the ledger is read whole, as
// without it: it is never needed. One stamped right that misplaces a record
// (only a hand-made one could) fails the write that opens that record with
// a *CorruptError naming the memo, and CheckLayout (doctor) reports it.
const (
	// LayoutDir holds the layout memos, relative to the state directory.
	LayoutDir = "ledgers"
	// layoutMin is the ledger size from which a layout memo is kept:
	// below it, reading the whole file costs less than the memo would.
	layoutMin = 128 << 10
	// layoutEdgeMax bounds the head and tail of a ledger read from its
	// memo (the document around the records): larger ones, which only
	// another tool's members could make, are read whole.
	layoutEdgeMax = 64 << 10
)

// layoutMagic begins a memo: its format, and the build that wrote it (a
// memo of another build is not trusted: how it writes ledgers may differ).
var layoutMagic = sync.OnceValue(func() []byte { return []byte("agentx-ledger-layout 2 " + buildid.ID() + "\n") })

// fileStamp is a Stamp with the change time, which no one can set back.
type fileStamp struct {
	Stamp
	CTime int64
}

// layout is where the records of one version of a ledger file lie.
type layout struct {
	issue int
	file  fileStamp
	head  int64 // offset of the first record
	tail  int64 // offset of the document after the last record
	// stubs are the records, sealed: id, sender and status, and in exts
	// where each lies (an extent without its source)
	stubs []Clarification
	exts  []extent
	// ordered: every id is as agentx spells it, in increasing order, so
	// no two are the same
	ordered bool
	shadow  shadowHeld
	// names are the senders as the memo numbers them, and recs the
	// memo's bytes of the records' entries (see encodeLayout's prev)
	names []string
	recs  []byte
	// src is the source every extent names, which openLaidOut completes,
	// and clars the records in order, until they are a ledger's
	src   *source
	clars []*Clarification
}

// shadowHeld is what a memo knows of its ledger's shadow (see
// atomicfile.Options.Shadow): the file stamped file, which the write of
// the ledger exchanged out, holds the ledger's first n bytes (what that
// write copied from it in place). A write that finds the shadow so
// stamped neither reads nor compares those bytes: with them, an ask on a
// long ledger costs what it appends, not the ledger's size. Nothing is
// known when n is 0.
type shadowHeld struct {
	file fileStamp
	n    int64
}

// WrittenUnder is the file under whose lock the file of a state
// directory at path is written: an issue's index file (index/issue-N.json)
// and layout memo (ledgers/issue-N.layout) under the issue's ledger
// (clarifications/issue-N.json); any other file under its own.
func WrittenUnder(path string) string {
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	switch filepath.Base(dir) {
	case IndexDir:
		return filepath.Join(filepath.Dir(dir), ClarificationsDir, name)
	case LayoutDir:
		if issue, ok := strings.CutSuffix(name, ".layout"); ok {
			return filepath.Join(filepath.Dir(dir), ClarificationsDir, issue+".json")
		}
	}
	return path
}

// LayoutPath is the layout memo of an issue.
func (s *Store) LayoutPath(issue int) string {
	return filepath.Join(s.dir, LayoutDir, "issue-"+strconv.Itoa(issue)+".layout")
}

// encodeLayout renders the memo of a ledger file of issue, stamped file,
// whose records cs start at head and have the lengths lens, and whose
// shadow is sh. prev, if not nil, is the memo of the file cs was read
// from, and kept how many of cs's first records are its records, untouched
// and as long as they were (all of them, or 0: writeLedger says): their
// entries are copied from it as they are (after an ask, which appends),
// and only the rest encoded.
func encodeLayout(issue int, file fileStamp, head int64, cs []*Clarification, lens []int64, sh shadowHeld, prev *layout, kept int) []byte {
	b := make([]byte, 0, len(layoutMagic())+64+len(cs)*8)
	b = append(b, layoutMagic()...)
	b = binary.AppendUvarint(b, uint64(issue))
	b = binary.AppendUvarint(b, file.Ino)
	b = binary.AppendVarint(b, file.Size)
	b = binary.AppendVarint(b, file.MTime)
	b = binary.AppendVarint(b, file.CTime)
	b = binary.AppendVarint(b, head)
	b = sh.append(b)
	if prev == nil || kept != len(prev.stubs) {
		kept = 0
	}
	var names []string
	if kept > 0 {
		names = prev.names
	}
	names, from := numberSenders(names, cs[kept:])
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		b = appendString(b, n)
	}
	b = binary.AppendUvarint(b, uint64(len(cs)))
	if kept > 0 {
		b = append(b, prev.recs...)
	}
	var idb [32]byte
	for i, c := range cs[kept:] {
		b = binary.AppendVarint(b, lens[kept+i])
		b = append(b, statusCode(c.Status))
		b = binary.AppendUvarint(b, from[i])
		// an id as agentx writes it is its sequence number (even); any
		// other is spelled out (odd: its length)
		if is, seq, ok := c.knownID(); ok && is == issue {
			b = binary.AppendUvarint(b, uint64(seq)<<1)
		} else if is, seq, err := ParseID(c.ID); err == nil && is == issue && string(appendID(idb[:0], is, seq)) == c.ID {
			b = binary.AppendUvarint(b, uint64(seq)<<1)
		} else {
			b = binary.AppendUvarint(b, uint64(len(c.ID))<<1|1)
			b = append(b, c.ID...)
		}
	}
	return b
}

// numberSenders numbers the senders of cs in order of first appearance,
// after names (kept as they are numbered): the names, and each record's
// number. A record's is most often the previous record's, which is found
// without the map.
func numberSenders(names []string, cs []*Clarification) ([]string, []uint64) {
	names = names[:len(names):len(names)] // appended to, never written into
	senders := make(map[string]uint64, len(names))
	for i, n := range names {
		senders[n] = uint64(i)
	}
	from := make([]uint64, len(cs))
	for i, c := range cs {
		if i > 0 && c.From == cs[i-1].From {
			from[i] = from[i-1]
			continue
		}
		n, ok := senders[c.From]
		if !ok {
			n = uint64(len(names))
			senders[c.From] = n
			names = append(names, c.From)
		}
		from[i] = n
	}
	return names, from
}

// append appends the memo's encoding of sh.
func (sh shadowHeld) append(b []byte) []byte {
	b = binary.AppendVarint(b, sh.n)
	if sh.n > 0 {
		b = binary.AppendUvarint(b, sh.file.Ino)
		b = binary.AppendVarint(b, sh.file.Size)
		b = binary.AppendVarint(b, sh.file.MTime)
		b = binary.AppendVarint(b, sh.file.CTime)
	}
	return b
}

// shadow reads what's shadowHeld.append wrote.
func (d *decoder) shadow() shadowHeld {
	var sh shadowHeld
	if sh.n = d.varint(); sh.n > 0 {
		sh.file.Ino = d.uvarint(1<<64 - 1)
		sh.file.Size = d.varint()
		sh.file.MTime = d.varint()
		sh.file.CTime = d.varint()
	}
	return sh
}

// valid reports whether sh can describe the shadow of a ledger file of
// the given size.
func (sh shadowHeld) valid(size int64) bool {
	return sh.n == 0 || sh.n > 0 && sh.n <= min(size, sh.file.Size) && sh.file.CTime != 0
}

// keeper finds, as a ledger read through its memo lo is written, whether
// its first records are all of lo's, untouched and as long as they were:
// the new memo then copies their entries (encodeLayout).
type keeper struct {
	lo   *layout
	keep bool
}

// keeping is the keeper of a write of l.
func keeping(l *Ledger) keeper {
	lo := l.src.layout()
	return keeper{lo, lo != nil && lo.recs != nil && lo.issue == l.IssueNumber && len(l.Clarifications) >= len(lo.stubs)}
}

// see takes in c, the i-th record, written n bytes long.
func (k *keeper) see(i int, c *Clarification, n int64) {
	if !k.keep || i >= len(k.lo.stubs) {
		return
	}
	x := &k.lo.exts[i]
	k.keep = c == &k.lo.stubs[i] && c.at == x && c.ID == x.id && c.Status == x.status && n == x.n
}

// kept is how many records the new memo copies: all of lo's, or none.
func (k *keeper) kept() int {
	if !k.keep {
		return 0
	}
	return len(k.lo.stubs)
}

// memoSeq is, for NextID, the highest sequence number of l's first
// records while they are the stubs of the memo l was read through, their
// ids all as agentx spells them and increasing (the last one's), and how
// many they are: NextID need not read them. (A stub whose id was changed
// since is no longer where Checkpoint.Check finds the record it read
// there: the change fails, whatever id NextID gave.) 0, 0 otherwise.
func (l *Ledger) memoSeq() (max, n int) {
	lo := l.src.layout()
	if lo == nil || !lo.ordered {
		return 0, 0
	}
	cs := l.Clarifications
	for n < len(lo.stubs) && n < len(cs) && cs[n] == &lo.stubs[n] {
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return lo.exts[n-1].seq, n
}

// asRead is the Checkpoint of a ledger openLaidOut has just returned,
// nothing having run on it since: its records are the memo's stubs as
// decoded, whose ids and statuses the extents hold. No pass over them.
func (l *Ledger) asRead() Checkpoint { return Checkpoint{read: l.src.lo.exts} }

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func statusCode(s Status) byte {
	for i, v := range Statuses {
		if v == s {
			return byte(i)
		}
	}
	return 0xff
}

// errLayout is a memo that cannot be read: it is ignored.
var errLayout = errors.New("not a layout memo")

// decodeLayout reads a memo written by encode. Whatever the bytes, it
// returns a layout whose records are well formed or errLayout; it never
// panics and allocates no more than the data's size allows.
func decodeLayout(data []byte) (*layout, error) {
	if !bytes.HasPrefix(data, layoutMagic()) {
		return nil, errLayout
	}
	d := decoder{b: data[len(layoutMagic()):]}
	lo := &layout{}
	lo.issue = int(d.uvarint(1 << 31))
	lo.file.Ino = d.uvarint(1<<64 - 1)
	lo.file.Size = d.varint()
	lo.file.MTime = d.varint()
	lo.file.CTime = d.varint()
	lo.head = d.varint()
	lo.shadow = d.shadow()
	nNames := d.uvarint(uint64(len(d.b)))
	names := make([]string, 0, nNames)
	for i := uint64(0); i < nNames && d.err == nil; i++ {
		names = append(names, d.string(MaxAgentLen*4))
	}
	nRecs := d.uvarint(uint64(len(d.b)) / 3) // a record takes 3 bytes at least
	if d.err != nil {
		return nil, d.err
	}
	lo.names, lo.recs = names, d.b // the entries are all that follows
	lo.stubs = make([]Clarification, nRecs)
	lo.exts = make([]extent, nRecs)
	lo.src = &source{lo: lo}
	// with room for the records a change adds: an ask's append would
	// otherwise copy them all
	lo.clars = make([]*Clarification, nRecs, nRecs+4)
	ids := idSpeller{stubs: lo.stubs, exts: lo.exts}
	lo.ordered = true
	last := uint64(0)
	off := lo.head
	for i := range lo.stubs {
		n := d.varint()
		st := d.byte()
		from := d.uvarint(uint64(len(names)))
		id := d.uvarint(1<<40 - 1)
		ids.room(i)
		if id&1 == 1 {
			if id>>1 > maxMemoID {
				d.err = errLayout
			}
			ids.b = append(ids.b, d.bytes(int(id>>1))...)
			lo.ordered = false
		} else {
			ids.b = ids.spell(lo.issue, int(id>>1))
			lo.ordered = lo.ordered && id>>1 > last
			last = id >> 1
			lo.exts[i].seq = int(id >> 1)
		}
		if d.err != nil || int(st) >= len(Statuses) || from >= uint64(len(names)) || n < 2 || n > lo.file.Size {
			return nil, errLayout
		}
		ids.ends = append(ids.ends, len(ids.b))
		if i > 0 {
			off += int64(len(nextRecord))
		}
		x := &lo.exts[i]
		x.src, x.off, x.n, x.status = lo.src, off, n, Statuses[st]
		// field by field: the stub is zero already, and a composite
		// literal would write all of its bytes again
		c := &lo.stubs[i]
		c.From, c.Status, c.at = names[from], x.status, x
		lo.clars[i] = c
		off += n
		if off > lo.file.Size {
			return nil, errLayout
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errLayout
	}
	ids.flush(len(lo.stubs))
	lo.tail = off
	if lo.issue <= 0 || lo.head <= 0 || len(lo.stubs) == 0 || lo.tail <= lo.head || lo.tail >= lo.file.Size ||
		lo.head > layoutEdgeMax || lo.file.Size-lo.tail > layoutEdgeMax || !lo.shadow.valid(lo.file.Size) {
		return nil, errLayout
	}
	return lo, nil
}

// maxMemoID is the longest id a memo spells out (one not as agentx
// spells it); agentx's own are at most 28 bytes.
const maxMemoID = 64

// idSpeller gives a memo's stubs and extents their ids: spelled into a
// small buffer, made one string every few hundred records, each id a slice
// of it. The stubs it goes to were just written and are still in the
// cache; a pass over all of them once the memo was read (7 MB for 20,000
// records) was a third of the decode.
type idSpeller struct {
	stubs []Clarification
	exts  []extent
	b     []byte
	ends  []int // where the id of each record from first on ends in b
	first int
	// prefix is the start of the ids of issue prefixOf
	prefix   []byte
	prefixOf int
}

// spell appends FormatID(issue, seq) to b (issue and seq not negative:
// a memo's are unsigned), the prefix of issue spelled once rather than
// for every record.
func (sp *idSpeller) spell(issue, seq int) []byte {
	if sp.prefixOf != issue || sp.prefix == nil {
		sp.prefix, sp.prefixOf = appendID(nil, issue, 0), issue
		sp.prefix = sp.prefix[:len(sp.prefix)-len("000")] // CLR-7-
	}
	return appendSeq(append(sp.b, sp.prefix...), seq)
}

// idChunk is the size of the buffer the ids are spelled into.
const idChunk = 4096

// room makes room in b for the id of record i: when b could not hold
// another, the ids in it are given to their records.
func (sp *idSpeller) room(i int) {
	if sp.b == nil {
		sp.b, sp.ends = make([]byte, 0, idChunk), make([]int, 0, idChunk/8)
	}
	if cap(sp.b)-len(sp.b) < maxMemoID+32 {
		sp.flush(i)
	}
}

// flush gives the records from first up to i their ids, spelled in b.
func (sp *idSpeller) flush(i int) {
	all, at := string(sp.b), 0
	for j, end := range sp.ends {
		id := all[at:end]
		sp.stubs[sp.first+j].ID, sp.exts[sp.first+j].id = id, id
		at = end
	}
	sp.b, sp.ends, sp.first = sp.b[:0], sp.ends[:0], i
}

// decoder reads varints and strings, keeping the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint(max uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > max {
		d.err = errLayout
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errLayout
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errLayout
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n > len(d.b) {
		d.err = errLayout
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string(max int) string {
	n := d.uvarint(uint64(max))
	return string(d.bytes(int(n)))
}

// source is the ledger file an Update read through its layout memo: the
// records left sealed are copied from it when the ledger is written.
type source struct {
	f          *os.File
	memo       string // the layout memo's path
	lo         *layout
	head, tail []byte // the document before the first record and after the last
}

// extent is where a record read through a layout memo lies in its source,
// and the status it had there.
type extent struct {
	src    *source
	off, n int64
	status Status
	// id is the record's id as read and seq its sequence number when the
	// id is as agentx spells it (0 otherwise): see knownID
	id  string
	seq int
}

// knownID is the issue and sequence number of c's id when they are known
// without parsing it: a record read through a layout memo, whose id is as
// agentx spells it and unchanged.
func (c *Clarification) knownID() (issue, seq int, ok bool) {
	if e := c.at; e != nil && e.seq > 0 && e.src != nil && c.ID == e.id {
		return e.src.lo.issue, e.seq, true
	}
	return 0, 0, false
}

// mismatch is the error of a record that is not what the layout memo
// said (err): the memo is at fault, not the ledger. Nil e: err as is.
func (e *extent) mismatch(err error) error {
	if e == nil {
		return err
	}
	return &CorruptError{Path: e.src.memo, Derived: true, Err: fmt.Errorf("it does not describe %s: at byte %d: %w", e.src.f.Name(), e.off, err)}
}

// bytes reads the record.
func (e *extent) bytes() ([]byte, error) {
	b := make([]byte, e.n)
	if _, err := e.src.f.ReadAt(b, e.off); err != nil {
		return nil, fmt.Errorf("read %s at %d: %w", e.src.f.Name(), e.off, err)
	}
	return b, nil
}

// openLaidOut opens issue's ledger at path through its layout memo, if it
// has one that matches the file: the ledger it returns has every record
// sealed and must be closed (Ledger.close) when done. ok is false when the
// ledger is to be read whole: small, no memo, or one that does not match.
func (s *Store) openLaidOut(path string, issue int) (l *Ledger, ok bool) {
	f, err := openLedger(path)
	if err != nil {
		return nil, false
	}
	keep := false
	defer func() {
		if !keep {
			_ = f.Close()
		}
	}()
	fi, err := f.Stat()
	if err != nil || fi.Size() < layoutMin || !fi.Mode().IsRegular() {
		return nil, false
	}
	memo := s.LayoutPath(issue)
	data, err := atomicfile.ReadFile(memo)
	if err != nil {
		return nil, false
	}
	lo, err := decodeLayout(data)
	if err != nil || lo.issue != issue || lo.file != fileStampOf(fi) || lo.file.CTime == 0 {
		return nil, false
	}
	src := lo.src // its extents name it already
	src.f, src.memo, src.head, src.tail = f, memo, make([]byte, lo.head), make([]byte, lo.file.Size-lo.tail)
	if _, err := f.ReadAt(src.head, 0); err != nil {
		return nil, false
	}
	if _, err := f.ReadAt(src.tail, lo.tail); err != nil {
		return nil, false
	}
	// The document without its records: the head ends inside the opened
	// array and the tail starts with its end, so together they are the
	// ledger with no clarifications, which gives its other members.
	var doc Ledger
	if !bytes.HasSuffix(src.head, firstRecord) || !bytes.HasPrefix(src.tail, closeRecords) ||
		unmarshalLedger(append(append([]byte(nil), src.head...), src.tail...), &doc, false) != nil ||
		doc.IssueNumber != issue || len(doc.Clarifications) != 0 {
		return nil, false
	}
	doc.Clarifications, lo.clars = lo.clars, nil // the ledger's from now on
	if !lo.ordered && doc.checkIntegrity() != nil {
		return nil, false
	}
	doc.src = src
	keep = true
	return &doc, true
}

// layout is the memo src was read through (nil: none).
func (src *source) layout() *layout {
	if src == nil {
		return nil
	}
	return src.lo
}

// close releases the file a ledger read through its layout memo holds.
func (l *Ledger) close() {
	if l.src != nil {
		_ = l.src.f.Close()
	}
}

// saveLayout writes the layout memo of the ledger just written at path,
// whose records start at head and have the lengths lens, after checking
// that path is the file written (ino: the temp file's inode). same is how
// many of the new file's first bytes were copied in place from the file it
// replaced (l.src's): when that file is now the shadow, the memo says so
// (shadowHeld). A ledger under layoutMin has none. Derived data: a failure
// only means the next write reads the ledger whole. Written only here,
// under the issue's lock (a temp file a killed writer left is replaced:
// atomicfile.Options.Locked).
func (s *Store) saveLayout(path string, l *Ledger, ino uint64, head int64, lens []int64, kept int, same int64) {
	memo := s.LayoutPath(l.IssueNumber)
	fi, err := os.Lstat(path)
	switch {
	case err != nil || len(lens) != len(l.Clarifications):
		return
	case fi.Size() < layoutMin || len(lens) == 0:
		_ = os.Remove(memo)
		return
	}
	if fs := fileStampOf(fi); fs.Ino == ino && fs.CTime != 0 {
		_ = atomicfile.WriteDerivedLocked(s.dir, memo, encodeLayout(l.IssueNumber, fs, head, l.Clarifications, lens, shadowOf(path, l.src, same), l.src.layout(), kept))
	}
}

// shadowOf is what the memo of the ledger just written at path knows of
// its shadow: that it is src's file, the ledger before, exchanged out by
// the write, and so holds the first same bytes of the new one. Nothing
// when the write was no exchange. src's file is still open, so no other
// file can have its inode.
func shadowOf(path string, src *source, same int64) shadowHeld {
	if src == nil || same <= 0 {
		return shadowHeld{}
	}
	fi, err := os.Lstat(atomicfile.ShadowOf(path))
	if err != nil || !fi.Mode().IsRegular() {
		return shadowHeld{}
	}
	sh := fileStampOf(fi)
	if was := src.lo.file; sh.Ino != was.Ino || sh.Size != was.Size || sh.MTime != was.MTime || sh.CTime == 0 {
		return shadowHeld{}
	}
	return shadowHeld{file: sh, n: same}
}

// shadowHolds is atomicfile.Options.ShadowHolds for a write of the ledger
// read through its layout memo from src: the shadow's first bytes when
// it is the file the memo stamped. Should the patch change any of them,
// the memo is first removed for good (its directory synced), so that no
// write after a power loss trusts a shadow half patched.
func (s *Store) shadowHolds(src *source) func(os.FileInfo) (int64, func() error) {
	return func(fi os.FileInfo) (int64, func() error) {
		sh := src.lo.shadow
		if sh.n <= 0 || fileStampOf(fi) != sh.file {
			return 0, nil
		}
		return sh.n, func() error {
			if err := os.Remove(src.memo); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("layout memo: %w", err)
			}
			return atomicfile.SyncDir(filepath.Dir(src.memo))
		}
	}
}

// LayoutError is a layout memo that matches its ledger's stamp but does
// not describe it: the next write would copy the wrong bytes. Only a tool
// that wrote the memo by hand could make one; agentx doctor --fix removes
// it (a ledger is read whole without its memo).
type LayoutError struct {
	Path string // the memo
	Why  string
}

func (e *LayoutError) Error() string {
	return fmt.Sprintf("layout memo %s does not describe its ledger: %s", e.Path, e.Why)
}

// CheckLayout checks issue's layout memo, if it has one in force (stamped
// with the ledger file now on disk), against the ledger, read whole: where
// every record lies, its id, sender and status. A memo not in force is
// never used, so it is not checked. It returns a *LayoutError when the
// memo is wrong.
func (s *Store) CheckLayout(issue int) error {
	data, st, err := ReadStamped(s.Path(issue))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	whole, err := decodeIssue(s.Path(issue), issue, data, false)
	if err != nil {
		return err
	}
	return s.CheckLayoutOf(whole, data, st)
}

// CheckLayoutOf is CheckLayout for a ledger already read whole: whole,
// decoded from data, the file's bytes, whose stamp is st.
func (s *Store) CheckLayoutOf(whole *Ledger, data []byte, st Stamp) error {
	if len(data) < layoutMin {
		return nil // never has one in force
	}
	issue := whole.IssueNumber
	l, ok := s.openLaidOut(s.Path(issue), issue)
	if !ok {
		return nil
	}
	defer l.close()
	if l.src.lo.file.Stamp != st {
		return nil // the file changed since data was read
	}
	memo := s.LayoutPath(issue)
	first, spans, err := recordSpans(data)
	if err != nil {
		return err
	}
	lo := l.src.lo
	if int64(len(data)) != lo.file.Size || len(spans) != len(lo.stubs) || len(whole.Clarifications) != len(lo.stubs) {
		return &LayoutError{Path: memo, Why: fmt.Sprintf("it lists %d records, the ledger has %d", len(lo.stubs), len(whole.Clarifications))}
	}
	if first != lo.head {
		return &LayoutError{Path: memo, Why: fmt.Sprintf("the first record starts at byte %d, not %d", first, lo.head)}
	}
	for i, c := range whole.Clarifications {
		st, x := lo.stubs[i], lo.exts[i]
		if spans[i] != [2]int64{x.off, x.n} || c.ID != st.ID || c.From != st.From || c.Status != st.Status {
			return &LayoutError{Path: memo, Why: fmt.Sprintf("record %d is %s from %s, %s, at byte %d (%d bytes); the memo says %s from %s, %s, at byte %d (%d bytes)",
				i+1, c.ID, c.From, c.Status, spans[i][0], spans[i][1], st.ID, st.From, st.Status, x.off, x.n)}
		}
		if i > 0 && string(data[spans[i-1][0]+spans[i-1][1]:x.off]) != string(nextRecord) {
			return &LayoutError{Path: memo, Why: fmt.Sprintf("record %d is not where agentx would write it", i+1)}
		}
	}
	return checkShadowHeld(memo, s.Path(issue), lo.shadow, data)
}

// checkShadowHeld checks what a memo says of the shadow of the ledger at
// path, whose bytes are data, when it is in force (the shadow stamped as
// it says): that it holds the ledger's first sh.n bytes.
func checkShadowHeld(memo, path string, sh shadowHeld, data []byte) error {
	if sh.n <= 0 {
		return nil
	}
	f, err := os.Open(atomicfile.ShadowOf(path))
	if err != nil {
		return nil // gone: nothing will be trusted
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fileStampOf(fi) != sh.file {
		return nil // changed since: not trusted
	}
	have := make([]byte, sh.n)
	if _, err := f.ReadAt(have, 0); err != nil || !bytes.Equal(have, data[:sh.n]) {
		return &LayoutError{Path: memo, Why: fmt.Sprintf("the shadow does not hold the ledger's first %d bytes", sh.n)}
	}
	return nil
}

// recordSpans returns where the first record of ledger JSON starts and,
// for each record, its offset and length.
func recordSpans(data []byte) (first int64, spans [][2]int64, err error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return 0, nil, errors.New("a ledger is an object")
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return 0, nil, err
		}
		if name.String() != "clarifications" {
			if err := dec.SkipValue(); err != nil {
				return 0, nil, err
			}
			continue
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
			return 0, nil, errors.New("clarifications is an array")
		}
		for dec.PeekKind() != ']' {
			v, err := dec.ReadValue()
			if err != nil {
				return 0, nil, err
			}
			end := dec.InputOffset()
			spans = append(spans, [2]int64{end - int64(len(v)), int64(len(v))})
		}
		if len(spans) > 0 {
			first = spans[0][0]
		}
		return first, spans, nil
	}
	return 0, nil, errors.New("no clarifications member")
}
