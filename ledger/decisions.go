package ledger

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/textsim"
)

// Decision memory: what an ask is told of the questions decided before.
// Every resolved clarification of the workspace is one line of the
// decision file, index/decisions-v1: its id, when it was resolved, its
// topic key (textsim.TopicKey, as clarify stats groups topics) and a
// sketch of its question (textsim.Of), what a new question is matched
// by; what is shown of it (topic, summary, the asker's commit, the files
// its question came with) is one line of index/decisions-v1.text, where
// the decision's line says. An ask reads the first file whole and the
// second only where it matched, and no ledger: it costs about the same on
// a workspace of ten thousand decisions as on an empty one.
//
// Both files are derived data. A write that resolves a clarification
// appends its lines (one O_APPEND write to each, which concurrent writers
// do not interleave: the text first, then the line that points at it)
// under the issue's lock, once the ledger is renamed into place: a writer
// killed in between leaves a decision out, never one that was not taken.
// Each line ends with a checksum, so a line cut short is skipped. A
// ledger another AgentX tool changed (its index file made from another
// version of it, or none) is read again by the next reader that may write
// (the monitor after every command): the decisions it holds that the file
// lacks are appended then, and those the file has that it no longer holds
// as resolved are struck out (a line "-\tID"). Files that are missing, of
// another version, or not made together (their first lines differ) are
// made afresh from every ledger by the next ask (RebuildDecisions). Lines
// are never rewritten in place; a rebuild drops what was struck out.
const (
	// DecisionsFile is the decision file's name in the index directory;
	// DecisionsFile+".text" holds what is shown of each decision.
	DecisionsFile = "decisions-v1"
	// decisionsHead begins the first line of both files: the format, and
	// the versions of the topic key and sketch the lines were made with.
	// A token, the same in both, follows it.
	decisionsHead = "agentx-decisions 1 topic 1 sketch 1 "
)

// Decided is one resolved clarification as decision memory keeps it.
type Decided struct {
	ID       string
	Issue    int
	Resolved Time   // when it was resolved
	Key      string // textsim.TopicKey of its topic
	Q        textsim.Sig
	Topic    string
	Summary  string // Clarification.Decision
	Commit   string // the asker's commit when it asked, if recorded
	Refs     []ContextRef
}

// DecidedOf is what decision memory keeps of the resolved clarification c
// of issue (c decoded whole).
func DecidedOf(issue int, c *Clarification) Decided {
	d := Decided{ID: c.ID, Issue: issue, Key: textsim.TopicKey(c.Topic), Topic: c.Topic, Summary: c.Decision(), Resolved: c.Created}
	switch {
	case c.ResolvedAt != nil:
		d.Resolved = *c.ResolvedAt
	case len(c.Thread) > 0:
		d.Resolved = c.Thread[len(c.Thread)-1].Timestamp
	}
	for _, e := range c.Thread {
		if e.Type == Question {
			d.Q = textsim.Of(e.Body) // the question first asked
			break
		}
	}
	if c.X != nil && c.X.Context != nil {
		d.Commit, d.Refs = c.X.Context.Commit, c.X.Context.Refs
	}
	return d
}

// DecisionsPath is the decision file.
func (s *Store) DecisionsPath() string { return filepath.Join(s.dir, IndexDir, DecisionsFile) }

// decisionsTextPath is the file of what is shown of each decision.
func (s *Store) decisionsTextPath() string { return s.DecisionsPath() + ".text" }

// appendText appends the line of what is shown of d: id, then quoted
// topic, summary and commit, the refs as JSON, and a checksum.
func appendText(b []byte, d Decided) []byte {
	start := len(b)
	b = append(b, d.ID...)
	b = append(b, '\t')
	b = strconv.AppendQuote(b, d.Topic)
	b = append(b, '\t')
	b = strconv.AppendQuote(b, d.Summary)
	b = append(b, '\t')
	b = strconv.AppendQuote(b, d.Commit)
	b = append(b, '\t')
	if len(d.Refs) > 0 {
		if refs, err := jsonv2.Marshal(d.Refs); err == nil { // strings escaped: no tab, no line break
			b = append(b, refs...)
		}
	}
	return sealLine(b, start)
}

// appendMatch appends d's line of the decision file: id, resolved (Unix
// nanoseconds), topic key, sketch (in text form, textsim.Sig.AppendHex),
// where its text line lies in the text file (offset, length), and a
// checksum.
func appendMatch(b []byte, d Decided, off, n int64) []byte {
	start := len(b)
	b = append(b, d.ID...)
	b = append(b, '\t')
	b = strconv.AppendInt(b, d.Resolved.UnixNano(), 10)
	b = append(b, '\t')
	b = append(b, d.Key...)
	b = append(b, '\t')
	b = d.Q.AppendHex(b)
	b = append(b, '\t')
	b = strconv.AppendInt(b, off, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, n, 10)
	return sealLine(b, start)
}

// appendStrike appends the line that strikes id out.
func appendStrike(b []byte, id string) []byte {
	start := len(b)
	b = append(b, "-\t"...)
	b = append(b, id...)
	return sealLine(b, start)
}

// sealLine ends the line begun at start with its checksum.
func sealLine(b []byte, start int) []byte {
	sum := crc32.ChecksumIEEE(b[start:])
	b = append(b, '\t')
	b = fmt.Appendf(b, "%08x", sum)
	return append(b, '\n')
}

// checked returns the line (without its line break) without its
// checksum, if the checksum holds.
func checked(line []byte) ([]byte, bool) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	i := bytes.LastIndexByte(line, '\t')
	if i < 0 || len(line)-i-1 != 8 {
		return nil, false
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[i+1:]); err != nil {
		return nil, false
	}
	body := line[:i]
	return body, crc32.ChecksumIEEE(body) == uint32(sum[0])<<24|uint32(sum[1])<<16|uint32(sum[2])<<8|uint32(sum[3])
}

// parseMatch decodes a line of the decision file (checksum checked): the
// decision without its text, and where its text lies.
func parseMatch(line []byte) (d Decided, off, n int64, ok bool) {
	body, ok := checked(line)
	if !ok {
		return d, 0, 0, false
	}
	f := strings.Split(string(body), "\t")
	if len(f) != 6 {
		return d, 0, 0, false
	}
	issue, _, err := ParseID(f[0])
	if err != nil {
		return d, 0, 0, false
	}
	ns, err1 := strconv.ParseInt(f[1], 10, 64)
	off, err2 := strconv.ParseInt(f[4], 10, 64)
	n, err3 := strconv.ParseInt(f[5], 10, 64)
	q, qok := textsim.ParseHex([]byte(f[3]))
	if err1 != nil || err2 != nil || err3 != nil || !qok || off < 0 || n <= 0 || n > maxTextLine {
		return d, 0, 0, false
	}
	return Decided{ID: f[0], Issue: issue, Resolved: T(time.Unix(0, ns)), Key: f[2], Q: q}, off, n, true
}

// maxTextLine bounds a text line: a summary of MaxSummary bytes and a
// question's files, quoted.
const maxTextLine = 1 << 20

// parseText decodes d's text line (checksum checked) into d.
func parseText(line []byte, d *Decided) bool {
	body, ok := checked(line)
	if !ok {
		return false
	}
	f := strings.Split(string(body), "\t")
	if len(f) != 5 || f[0] != d.ID {
		return false
	}
	var err error
	if d.Topic, err = strconv.Unquote(f[1]); err != nil {
		return false
	}
	if d.Summary, err = strconv.Unquote(f[2]); err != nil {
		return false
	}
	if d.Commit, err = strconv.Unquote(f[3]); err != nil {
		return false
	}
	return f[4] == "" || jsonv2.Unmarshal([]byte(f[4]), &d.Refs) == nil
}

// DecisionQuery is a new question, to be matched against the decisions.
type DecisionQuery struct {
	Topic    string
	Question string
	// Similarity is the word-set similarity at or above which a decision's
	// question asks the same thing (a decision with the same topic key
	// always does).
	Similarity float64
	Max        int // at most this many (0: 3)
}

// DecisionMatch is a decision that asked what a query asks.
type DecisionMatch struct {
	Decided
	SameTopic  bool    // its topic key is the query's
	Similarity float64 // of its question to the query's
}

// candidate is a line that matched, before it is read whole.
type candidate struct {
	line       []byte
	at         int64 // resolved, Unix nanoseconds
	n          int   // its place in the file
	sameTopic  bool
	similarity float64
}

// FindDecided returns the resolved clarifications that ask what q asks
// (the same topic key, or a question at least q.Similarity similar),
// newest first, at most q.Max: one read of the decision file, the text
// of those it returns, and no ledger. Decision files that are missing (or
// of another version) are made first from every ledger
// (RebuildDecisions). A decision whose ledger file is gone is left out.
func (s *Store) FindDecided(ctx context.Context, q DecisionQuery) ([]DecisionMatch, error) {
	out, err := s.findDecided(q)
	if errors.Is(err, errStaleDecisions) {
		if err := s.RebuildDecisions(ctx); err != nil {
			return nil, err
		}
		out, err = s.findDecided(q)
	}
	return out, err
}

func (s *Store) findDecided(q DecisionQuery) (out []DecisionMatch, err error) {
	if q.Max <= 0 {
		q.Max = 3
	}
	data, head, release, err := s.readDecisions()
	if err != nil {
		return nil, err
	}
	defer release()
	defer readingDecisions(&err)()
	// The newest candidates are kept as they come, a few more than asked
	// for (a line may fail its checksum, be struck out or repeat an id);
	// only when those do not give enough is every candidate looked at.
	out, short, err := s.matchDecided(data, head, q, 4*q.Max)
	if err == nil && short {
		out, _, err = s.matchDecided(data, head, q, -1)
	}
	return out, err
}

// newer reports whether candidate a comes before b: the newer, and of two
// lines of one time the later.
func newer(a, b candidate) bool { return a.at > b.at || a.at == b.at && a.n > b.n }

// matchDecided is findDecided over the decision file's lines (data, its
// first line head), keeping the keep newest candidates (all when keep <
// 0); short says that fewer than q.Max held while candidates were left
// out.
func (s *Store) matchDecided(data []byte, head string, q DecisionQuery, keep int) (out []DecisionMatch, short bool, err error) {
	sc := decidedScan{key: textsim.TopicKey(q.Topic), sig: textsim.Of(q.Question).AppendHex(nil), similarity: q.Similarity, keep: keep}
	sc.scan(data)
	if len(sc.cands) == 0 {
		return nil, false, nil
	}
	if keep < 0 {
		sortNewestFirst(sc.cands)
	}
	text, err := s.openDecisionText(head)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = text.Close() }()
	out = s.readMatches(text, sc.cands, sc.struck, q.Max)
	return out, len(out) < q.Max && sc.dropped, nil
}

// decidedScan is one pass of matchDecided over the decision file's lines:
// the candidates asking what the query asks (key, sig, similarity), the
// keep newest of them (all when keep < 0), and the strikes.
type decidedScan struct {
	key        string
	sig        []byte
	similarity float64
	keep       int

	cands   []candidate
	struck  map[string]int // id → the place of its last strike
	dropped bool           // a candidate was left out
}

// scan reads every line of data, n counting each one, a line without a
// tab too.
func (sc *decidedScan) scan(data []byte) {
	n := 0
	for rest := data; len(rest) > 0; n++ {
		var line []byte
		line, rest = nextLine(rest)
		sc.line(line, n)
	}
}

// nextLine splits off the first line of rest; a last line without its
// newline is taken whole (cut short: its checksum fails later).
func nextLine(rest []byte) (line, after []byte) {
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		return rest[:i], rest[i+1:]
	}
	return rest, nil
}

// line takes in the n-th line: a strike ("-" id …) is noted, a decision
// asking what the query asks becomes a candidate.
func (sc *decidedScan) line(line []byte, n int) {
	id, tail, ok := cutTab(line)
	if !ok {
		return
	}
	if len(id) == 1 && id[0] == '-' {
		sc.strike(tail, n)
		return
	}
	if c, ok := sc.candidate(line, tail, n); ok {
		sc.add(c)
	}
}

// strike notes the struck id at the head of tail as struck at n.
func (sc *decidedScan) strike(tail []byte, n int) {
	if sc.struck == nil {
		sc.struck = map[string]int{}
	}
	if sid, _, ok := cutTab(tail); ok {
		sc.struck[string(sid)] = n
	}
}

// candidate reads the time, topic key and question signature of a
// decision line (tail: after its id); ok when it is of the same topic or
// similar enough, and its time reads.
func (sc *decidedScan) candidate(line, tail []byte, n int) (candidate, bool) {
	at, tail, _ := cutTab(tail)
	k, tail, _ := cutTab(tail)
	qhex, _, _ := cutTab(tail)
	same := len(sc.key) > 0 && string(k) == sc.key
	sim, alike := textsim.SimilarHex(sc.sig, qhex, sc.similarity) // in place: no decoding
	if same && !alike {
		sim = textsim.JaccardHex(sc.sig, qhex)
	}
	if !same && !alike {
		return candidate{}, false
	}
	ns, err := strconv.ParseInt(string(at), 10, 64)
	if err != nil {
		return candidate{}, false
	}
	return candidate{line: line, at: ns, n: n, sameTopic: same, similarity: sim}, true
}

// add keeps c: every one when keep < 0, else the keep newest, newest
// first, inserted in place with the oldest falling off.
func (sc *decidedScan) add(c candidate) {
	keep := sc.keep
	if keep < 0 {
		sc.cands = append(sc.cands, c)
		return
	}
	if len(sc.cands) == keep && !newer(c, sc.cands[keep-1]) {
		sc.dropped = true
		return
	}
	if len(sc.cands) == keep {
		sc.cands, sc.dropped = sc.cands[:keep-1], true
	}
	i := len(sc.cands)
	for i > 0 && newer(c, sc.cands[i-1]) {
		i--
	}
	sc.cands = slices.Insert(sc.cands, i, c)
}

// sortNewestFirst orders every candidate newest first, stably.
func sortNewestFirst(cands []candidate) {
	slices.SortStableFunc(cands, func(a, b candidate) int {
		if newer(a, b) {
			return -1
		}
		if newer(b, a) {
			return 1
		}
		return 0
	})
}

// openDecisionText opens the decision text file, made with the decision
// file whose first line is head; else errStaleDecisions.
func (s *Store) openDecisionText(head string) (*os.File, error) {
	text, err := atomicfile.OpenFile(s.decisionsTextPath(), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errStaleDecisions
	}
	if err != nil {
		return nil, fmt.Errorf("decision memory: %w", err)
	}
	if th, err := readHead(text); err != nil || th != head {
		_ = text.Close()
		return nil, errStaleDecisions // not made with the decision file
	}
	return text, nil
}

// readMatches reads the decisions of cands (newest first) from text, at
// most limit: each id once, none struck after its line, none whose text
// fails or whose ledger is gone.
func (s *Store) readMatches(text *os.File, cands []candidate, struck map[string]int, limit int) (out []DecisionMatch) {
	seen := map[string]bool{}
	for _, c := range cands {
		if len(out) == limit {
			break
		}
		d, off, size, ok := parseMatch(c.line)
		if !ok || seen[d.ID] {
			continue
		}
		seen[d.ID] = true
		if at, ok := struck[d.ID]; ok && at > c.n {
			continue
		}
		line := make([]byte, size)
		if _, err := text.ReadAt(line, off); err != nil || !parseText(line, &d) {
			continue
		}
		if _, err := os.Lstat(s.Path(d.Issue)); err != nil {
			continue // its ledger is gone
		}
		out = append(out, DecisionMatch{Decided: d, SameTopic: c.sameTopic, Similarity: c.similarity})
	}
	return out
}

var tab = []byte{'\t'}

// cutTab is bytes.Cut(b, tab), which the scan of the decision file calls
// up to five times a line: one byte looked for as one (bytes.Cut goes
// through bytes.Index), and inlined.
func cutTab(b []byte) (before, after []byte, found bool) {
	if i := bytes.IndexByte(b, '\t'); i >= 0 {
		return b[:i], b[i+1:], true
	}
	return b, nil, false
}

// errStaleDecisions: the decision files are missing, of another version,
// or not made together.
var errStaleDecisions = errors.New("decision memory: no decision files of this version")

// readDecisions maps the decision file into memory (see mapFile): its
// lines, and its first line; release unmaps it. The caller reads lines
// with debug.SetPanicOnFault set (readingDecisions).
func (s *Store) readDecisions() (lines []byte, head string, release func(), err error) {
	data, release, err := mapFile(s.DecisionsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil, errStaleDecisions
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("decision memory: %w", err)
	}
	first, rest, ok := bytes.Cut(data, []byte{'\n'})
	if !ok || !bytes.HasPrefix(first, []byte(decisionsHead)) {
		release()
		return nil, "", nil, errStaleDecisions
	}
	return rest, string(first), release, nil
}

// readingDecisions is deferred by a reader of the mapped decision file:
// a fault (the file truncated in place under it) becomes err, as a file
// to make afresh.
func readingDecisions(err *error) func() {
	was := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(was)
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			*err = errStaleDecisions
		}
	}
}

// readHead reads the first line of an open decision file.
func readHead(f *os.File) (string, error) {
	b := make([]byte, len(decisionsHead)+64)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	first, _, ok := bytes.Cut(b[:n], []byte{'\n'})
	if !ok || !bytes.HasPrefix(first, []byte(decisionsHead)) {
		return "", errStaleDecisions
	}
	return string(first), nil
}

// DecisionsBuilt reports whether the decision files are there, of this
// version, made together.
func (s *Store) DecisionsBuilt() bool {
	heads := [2]string{}
	for i, path := range []string{s.DecisionsPath(), s.decisionsTextPath()} {
		f, err := atomicfile.OpenFile(path, os.O_RDONLY, 0)
		if err != nil {
			return false
		}
		heads[i], err = readHead(f)
		_ = f.Close()
		if err != nil {
			return false
		}
	}
	return heads[0] == heads[1]
}

// RebuildDecisions makes the decision files afresh from every ledger,
// without their locks: oldest decision first. A ledger that changed while
// it was read is read again once the files are in place, and what it
// decided meanwhile appended. Ledgers that cannot be read are left out.
func (s *Store) RebuildDecisions(ctx context.Context) error {
	issues, err := s.Issues()
	if err != nil {
		return err
	}
	var ds []Decided
	seen := make(map[int]stamp, len(issues))
	for _, n := range issues {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, st, err := s.readStamped(n)
		if err != nil {
			continue
		}
		seen[n] = st
		ds = append(ds, decidedIn(l, nil)...)
	}
	slices.SortStableFunc(ds, func(a, b Decided) int { return a.Resolved.Compare(b.Resolved.Time) })
	head := decisionsHead + rand.Text() + "\n"
	text, match := []byte(head), []byte(head)
	for _, d := range ds {
		off := int64(len(text))
		text = appendText(text, d)
		match = appendMatch(match, d, off, int64(len(text))-off)
	}
	// the text first: a reader of the old decision file finds a text file
	// of another make, and makes both again
	if err := atomicfile.WriteDerived(s.dir, s.decisionsTextPath(), text); err != nil {
		return fmt.Errorf("decision memory: %w", err)
	}
	if err := atomicfile.WriteDerived(s.dir, s.DecisionsPath(), match); err != nil {
		return fmt.Errorf("decision memory: %w", err)
	}
	// a write that resolved a question after its ledger was read, and
	// appended to the files these replaced
	changed := map[int][]string{}
	for n, st := range seen {
		if fi, err := os.Stat(s.Path(n)); err == nil && stampOf(fi) != st {
			changed[n] = nil
		}
	}
	if len(changed) > 0 {
		s.reconcileDecided(changed)
	}
	return nil
}

// decidedIn is what decision memory keeps of l's resolved clarifications
// (all, or those named in only), decoding the sealed ones.
func decidedIn(l *Ledger, only map[string]bool) []Decided {
	var out []Decided
	for _, c := range l.Clarifications {
		if c.Status != Resolved || only != nil && !only[c.ID] {
			continue
		}
		w, err := c.whole()
		if err != nil {
			continue
		}
		out = append(out, DecidedOf(l.IssueNumber, w))
	}
	return out
}

// whole is c decoded whole: c itself, or, for a sealed record, a decoded
// copy (c stays sealed, to be written back as read).
func (c *Clarification) whole() (*Clarification, error) {
	if !c.Sealed() {
		return c, nil
	}
	raw := c.sealed
	if c.at != nil {
		b, err := c.at.bytes()
		if err != nil {
			return nil, err
		}
		raw = b
	}
	var w Clarification
	if err := jsonv2.Unmarshal(raw, &w, decodeOpts()); err != nil {
		return nil, err
	}
	if w.ID != c.ID || w.Status != c.Status {
		return nil, fmt.Errorf("the record there is %s, %s", w.ID, w.Status)
	}
	return &w, nil
}

// appendDecided adds ds to the decision files, and strikes out struck,
// if the files are there (else the next ask makes them from the ledgers):
// the text lines in one write, then the lines that point at them in
// another. Never through a link.
func (s *Store) appendDecided(ds []Decided, struck []string) error {
	if len(ds) == 0 && len(struck) == 0 {
		return nil
	}
	var match []byte
	if len(ds) > 0 {
		var text []byte
		starts := make([]int, len(ds)+1)
		for i, d := range ds {
			starts[i] = len(text)
			text = appendText(text, d)
		}
		starts[len(ds)] = len(text)
		end, err := s.appendTo(s.decisionsTextPath(), text)
		if err != nil || end < 0 {
			return err
		}
		base := end - int64(len(text)) // where this write landed
		for i, d := range ds {
			match = appendMatch(match, d, base+int64(starts[i]), int64(starts[i+1]-starts[i]))
		}
	}
	for _, id := range struck {
		match = appendStrike(match, id)
	}
	_, err := s.appendTo(s.DecisionsPath(), match)
	return err
}

// appendTo appends b to the decision file at path in one write, if it is
// there, and returns where the file ends after it (-1 when it is not
// there).
func (s *Store) appendTo(path string, b []byte) (int64, error) {
	if err := atomicfile.CheckNoLinks(s.dir, path); err != nil {
		return -1, err
	}
	f, err := atomicfile.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("decision memory: %w", err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Write(b); err != nil {
		return -1, fmt.Errorf("decision memory: %w", err)
	}
	// the offset of this open file: the end of this write, whatever
	// others appended since
	end, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1, fmt.Errorf("decision memory: %w", err)
	}
	return end, nil
}

// noteDecided adds the decisions a write of l took (the records it
// resolved, as Checkpoint.Check found them) to decision memory, once the
// ledger is in place. A failure leaves them out; the write stands.
func (f *Locked) noteDecided(l *Ledger) {
	if len(l.decided) == 0 {
		return
	}
	var ds []Decided
	for _, i := range l.decided {
		if i >= len(l.Clarifications) {
			continue
		}
		c := l.Clarifications[i]
		if c.Status != Resolved {
			continue
		}
		if w, err := c.whole(); err == nil {
			ds = append(ds, DecidedOf(l.IssueNumber, w))
		}
	}
	l.decided = nil
	_ = f.s.appendDecided(ds, nil)
}

// AppendDecided adds resolved clarifications of f's issue to decision
// memory at once, under f's lock: those a write resolves that its
// Checkpoint does not show as changed (resolved on another host, and
// pulled with the shared ledger).
func (f *Locked) AppendDecided(cs ...*Clarification) error {
	var ds []Decided
	for _, c := range cs {
		if c == nil || c.Status != Resolved {
			continue
		}
		if w, err := c.whole(); err == nil {
			ds = append(ds, DecidedOf(f.Issue, w))
		}
	}
	return f.s.appendDecided(ds, nil)
}

// decidedPending is the ledgers readers that may write read again since
// the decision file was last brought in step with them: issue → its
// resolved ids (see reconcileDecided).
type decidedPending struct {
	sync.Mutex
	issues map[int][]string
}

// noteReread records that issue's ledger, l, was read again by a reader
// that may write: the decision file is brought in step with it when the
// reader is done (flushDecided).
func (s *Store) noteReread(l *Ledger) {
	ids := []string{}
	for _, c := range l.Clarifications {
		if c.Status == Resolved {
			ids = append(ids, c.ID)
		}
	}
	s.pending.Lock()
	defer s.pending.Unlock()
	if s.pending.issues == nil {
		s.pending.issues = map[int][]string{}
	}
	s.pending.issues[l.IssueNumber] = ids
}

// flushDecided brings the decision file in step with the ledgers read
// again since the last flush.
func (s *Store) flushDecided() {
	s.pending.Lock()
	issues := s.pending.issues
	s.pending.issues = nil
	s.pending.Unlock()
	if len(issues) > 0 {
		s.reconcileDecided(issues)
	}
}

// reconcileDecided brings the decision file in step with the ledgers of
// issues (issue → its resolved ids as last read; nil: read it now): the
// decisions a ledger holds that the file lacks are appended, and those
// the file holds that the ledger does not (as resolved) are struck out.
// One read of the file; a ledger is read only when it has decisions the
// file lacks. Files that are not built are left for a rebuild.
func (s *Store) reconcileDecided(issues map[int][]string) {
	data, _, release, err := s.readDecisions()
	if err != nil {
		return
	}
	held, err := heldDecisions(data, issues, release)
	if err != nil {
		return
	}
	for n, ids := range issues {
		if ids != nil {
			continue
		}
		l, err := s.Read(n)
		if err != nil {
			delete(issues, n)
			continue
		}
		ids = []string{}
		for _, c := range l.Clarifications {
			if c.Status == Resolved {
				ids = append(ids, c.ID)
			}
		}
		issues[n] = ids
	}
	var (
		ds     []Decided
		struck []string
	)
	for _, n := range slices.Sorted(maps.Keys(issues)) {
		ids := issues[n]
		missing := map[string]bool{}
		for _, id := range ids {
			if !held[n][id] {
				missing[id] = true
			}
		}
		for _, id := range slices.Sorted(maps.Keys(held[n])) {
			if held[n][id] && !slices.Contains(ids, id) {
				struck = append(struck, id)
			}
		}
		if len(missing) == 0 {
			continue
		}
		l, _, err := s.readStamped(n)
		if err != nil {
			continue
		}
		ds = append(ds, decidedIn(l, missing)...)
	}
	_ = s.appendDecided(ds, struck)
}

// heldDecisions is what the decision file's lines (data, mapped: release
// unmaps it) hold of each of issues (nil: of every issue): id → held
// (false once struck).
func heldDecisions(data []byte, issues map[int][]string, release func()) (held map[int]map[string]bool, err error) {
	defer release()
	defer readingDecisions(&err)()
	held = map[int]map[string]bool{}
	for rest := data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		id, tail, ok := bytes.Cut(line, tab)
		strike := ok && len(id) == 1 && id[0] == '-'
		if strike {
			id, _, ok = bytes.Cut(tail, tab)
		}
		if !ok {
			continue
		}
		n, _, err := ParseID(string(id))
		if _, want := issues[n]; err != nil || issues != nil && !want {
			continue
		}
		if _, ok := checked(line); !ok {
			continue
		}
		if held[n] == nil {
			held[n] = map[string]bool{}
		}
		held[n][string(id)] = !strike
	}
	return held, nil
}

// HeldDecisions is what decision memory holds, to check it against the
// ledgers (doctor): issue → the ids of its decisions an ask may be told
// of, ascending. built is false when the decision files are missing, of
// another version, or not made together (the next ask makes them).
func (s *Store) HeldDecisions() (held map[int][]string, built bool, err error) {
	if !s.DecisionsBuilt() {
		return nil, false, nil
	}
	data, _, release, err := s.readDecisions()
	if errors.Is(err, errStaleDecisions) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	m, err := heldDecisions(data, nil, release)
	if err != nil {
		return nil, false, err
	}
	held = make(map[int][]string, len(m))
	for n, ids := range m {
		for id, ok := range ids {
			if ok {
				held[n] = append(held[n], id)
			}
		}
		slices.Sort(held[n])
	}
	return held, true, nil
}
