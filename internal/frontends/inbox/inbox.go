package inbox

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/eventlog"
	"github.com/agentx-cli/agentx/ledger"
)

// Kind is what an item tells the agent.
type Kind string

// The kinds of item, each from one event type.
const (
	KindAnswer    Kind = "answer"    // an answer to the agent's question (late: after it assumed)
	KindQuestion  Kind = "question"  // a question waiting for the agent to answer
	KindResolved  Kind = "resolved"  // a human resolved a clarification the agent is party to
	KindEscalated Kind = "escalated" // the agent's question went to a human
	KindAbandoned Kind = "abandoned" // someone else closed the agent's question
	// KindRenumbered (remote mode): the agent's question, asked while the
	// remote was out of reach, was delivered under another id (ID; Was the
	// id it was given).
	KindRenumbered Kind = "renumbered"
	// KindOvertaken (remote mode): a change the agent made while the remote
	// was out of reach (Body says which) was not delivered: another host
	// changed the clarification first; Status is as it left it.
	KindOvertaken Kind = "overtaken"
	// KindRevision is not from the event log: the supervisor gate sent the
	// agent's work back (package evaluate; the command adds these items).
	KindRevision Kind = "revision"
)

// Item is one thing new for the agent.
type Item struct {
	Kind        Kind                `json:"kind"`
	ID          string              `json:"id"`
	Issue       int                 `json:"issue"`
	Topic       string              `json:"topic"`
	From        string              `json:"from"`               // the asker
	To          string              `json:"to"`                 // the one asked
	By          string              `json:"by,omitempty"`       // who answered (the latest reply), asked, resolved or closed
	Person      string              `json:"person,omitempty"`   // when By is human: the person's name as the ledger records it (agentx.people)
	Round       int                 `json:"round"`              // the round the item is about
	Blocking    bool                `json:"blocking"`           // the asker cannot finish without it
	Status      ledger.Status       `json:"status"`             // the clarification's status when delivered
	Question    string              `json:"question,omitempty"` // the round's question
	Body        string              `json:"body,omitempty"`     // the answer (its replies, a blank line apart), question, decision or reason
	Decision    string              `json:"decision,omitempty"` // a resolution: what was decided, in short (ledger.Clarification.Decision), shown in place of Body
	Options     []string            `json:"options,omitempty"`  // choices offered with a question
	Late        bool                `json:"late,omitempty"`     // the asker proceeded on an assumption before this arrived
	Assumptions []ledger.Assumption `json:"assumptions,omitempty"`
	Answers     []Reply             `json:"answers,omitempty"` // an answer's replies the agent has not seen, in order
	At          ledger.Time         `json:"at"`                // when it happened (an answer: its latest reply)
	Key         string              `json:"key"`               // id:kind:round, what it is about
	Was         string              `json:"was,omitempty"`     // renumbered: the id the question was given
	// Card is, for a question waiting for the agent, what its decision card
	// adds to it (brief.Card, compact: the files and lines it came with, the
	// decisions made on the issue before it, what was left out), as text;
	// "" when it adds nothing, or Options.Source is not set.
	Card string `json:"card,omitempty"`

	// Clipped says the text of its bodies was cut to keep a look within
	// its limit (never under --json, which has none).
	Clipped bool `json:"-"`
}

// Reply is one answer entry of a round: who wrote it, when, and what. A
// person may reply more than once to a round (each reply is another answer
// entry): an item of kind answer carries, in Item.Answers, every reply of
// the round the agent has not seen, in order; its Body is their bodies a
// blank line apart (as clarify wait prints them), its By and At the
// latest reply's.
type Reply struct {
	By     string      `json:"by"`               // the one asked, or human
	Person string      `json:"person,omitempty"` // when By is human: the person's name as the ledger records it
	At     ledger.Time `json:"at"`
	Body   string      `json:"body"`
}

// Options says whose inbox to read and how.
type Options struct {
	Agent string
	Issue *int // only items of this issue; others stay for a later look
	// Kinds, when set, takes only items of these kinds; the others stay
	// for a later look (a turn's end takes answers, not questions to answer)
	Kinds []Kind
	Peek  bool // show without marking delivered
	// Via is the way the look delivers what it marks (ViaInbox when
	// empty; ViaHookStop for agentx hook stop): its receipts say it.
	Via string
	// Limit caps the size of the look's Text, in bytes of its JSON string
	// encoding (0: no cap). Items are taken most important first; those that
	// do not fit stay for a later look and are counted in Result.More.
	Limit int
	// Source, when set, is the repository a question's card reads its
	// excerpts from: a question waiting for the agent carries its card
	// (Item.Card).
	Source *brief.Source
}

// Result is what a look found.
type Result struct {
	Agent  string `json:"agent"`
	Items  []Item `json:"items"`
	Marked bool   `json:"marked"` // the items are recorded as delivered (false under peek)
	// More counts the items left out to keep within Options.Limit: they
	// stay for a later look.
	More int `json:"more,omitempty"`
	// Older counts, on an agent's first look, the closed clarifications it
	// was party to: history, not delivered.
	Older *Older `json:"older,omitempty"`

	// Scanned counts the event log lines read, to show a look costs only
	// the lines appended since the last.
	Scanned int `json:"-"`
}

// Older counts closed clarifications a first look left out, by status.
type Older struct {
	Resolved  int `json:"resolved"`
	Abandoned int `json:"abandoned"`
}

// Total is the number of clarifications counted.
func (o *Older) Total() int {
	if o == nil {
		return 0
	}
	return o.Resolved + o.Abandoned
}

// State is what is remembered per agent in state/inbox/<agent>.json.
type State struct {
	// Offset is how far the event log is settled: every item from the lines
	// before it was delivered or did not concern the agent.
	Offset int64 `json:"offset"`
	// LastLen and LastSum identify the line ending at Offset, so a log that
	// was replaced or truncated is noticed and read again from the start.
	LastLen int    `json:"lastLen,omitempty"`
	LastSum string `json:"lastSum,omitempty"`
	// Seen is the time of that line's event: after a replaced log, events
	// up to then count as delivered.
	Seen *ledger.Time `json:"seen,omitempty"`
	// Marks says, per clarification, how much of its thread the agent has
	// seen, by any way of reading it: the inbox, clarify wait, show and
	// resolve, the MCP tools. An item about a thread entry the agent has
	// seen is not delivered. Marks are kept while the log past Offset may
	// still hold events they cover.
	Marks map[string]Mark `json:"marks,omitempty"`
	// History is where the log ended at the agent's first look: events
	// before it are history, and a closed clarification there is never
	// delivered, even by a later look re-reading what the first held back.
	History int64 `json:"history,omitempty"`
	// Delivered is from before Marks: keys of items past Offset delivered
	// by a look limited to one issue. Read (as seen), no longer written.
	Delivered []string     `json:"delivered,omitempty"`
	Updated   *ledger.Time `json:"updated,omitempty"`
}

// Mark is how much of a clarification's thread an agent has seen.
type Mark struct {
	Entries int         `json:"entries"` // the first Entries entries of the thread
	At      ledger.Time `json:"at"`      // when it was last set
	// Open says the agent's question was answered when the mark was set:
	// more replies to the round may come, and the mark tells the next
	// answer item which replies the agent has seen, so it is kept past
	// markGrace until the round ends (a follow-up, a resolution, an
	// abandonment) or maxMarks pushes it out.
	Open bool `json:"open,omitempty"`
	// Via says, for each step the mark moved forward, when and by which
	// way the agent first saw the entries up to the step's: the receipts
	// of the answers among them (see Receipts). A mark from before Via
	// has none: its entries read as seen, way unknown.
	Via []Step `json:"via,omitempty"`
}

// Step is one move of a mark: the agent first saw the thread's entries up
// to Entries at At, by the way Via.
type Step struct {
	Entries int         `json:"entries"`
	At      ledger.Time `json:"at"`
	Via     string      `json:"via"`
}

// The ways an agent reads a clarification, as its marks record them.
const (
	ViaWait     = "wait"      // clarify wait, ask --wait, followup --wait
	ViaAsk      = "ask"       // clarify ask that printed the answer its responder gave at once
	ViaShow     = "show"      // clarify show
	ViaResolve  = "resolve"   // clarify resolve by the agent
	ViaInbox    = "inbox"     // agentx inbox and its Claude Code hook
	ViaHookStop = "hook stop" // agentx hook stop
	ViaHook     = "hook"      // agentx hook's report
	ViaMCP      = "mcp"       // the MCP tools
	ViaResume   = "resume"    // a wake: the agent's resume command
	ViaRewake   = "rewake"    // a wake in place: agentx hook rewake, the session's live waiter
)

// markGrace is how long a mark outlives the events it covers being read:
// an event is appended just after its ledger write, so a reader may see an
// entry, and the inbox look past the log's end, before its event lands.
const markGrace = time.Hour

// maxMarks bounds the marks kept per agent, the oldest dropped first, for
// an agent that reads through clarify wait and never looks at its inbox.
const maxMarks = 1000

// StateFile is the agent's state file, relative to the state directory.
func StateFile(agent string) string { return path.Join(Dir, agent+".json") }

// Dir is the state directory's subdirectory of the agents' marks.
const Dir = "inbox"

// Check returns what is new for opts.Agent and, unless opts.Peek, marks it
// delivered so the next look shows only newer items. Two looks at once for
// the same agent are serialised by the state file's lock, so an item is
// delivered once.
//
// Only what concerns the agent now is delivered: the answer to the current
// round of its question (not one it already followed up on or that was
// closed since), a question still waiting for it, an escalation still
// with the human, and, after its first look, decisions and closures. An
// agent's first look delivers no history: the closed clarifications it was
// party to are counted in Result.Older instead.
func Check(ctx context.Context, store *ledger.Store, opts Options) (Result, error) {
	res := Result{Agent: opts.Agent, Items: []Item{}}
	if err := ledger.ValidateAgent("agent", opts.Agent); err != nil {
		return res, err
	}
	log := eventlog.EventLog{Path: filepath.Join(store.Dir(), eventlog.File)}
	name := StateFile(opts.Agent)
	var st State
	if err := store.ReadState(name, &st); err != nil {
		return res, fmt.Errorf("inbox %s: %w", opts.Agent, err)
	}
	size, err := log.Size()
	if err != nil {
		return res, fmt.Errorf("inbox %s: %w", opts.Agent, err)
	}
	if size == st.Offset {
		return res, nil // nothing appended since the last look: no lock, no write
	}
	if opts.Peek {
		sc, err := scan(store, log, st, opts)
		if err != nil {
			return res, fmt.Errorf("inbox %s: %w", opts.Agent, err)
		}
		return sc.res, nil
	}
	st = State{}
	err = store.UpdateState(ctx, name, &st, func() error {
		sc, err := scan(store, log, st, opts)
		if err != nil {
			return err
		}
		res = sc.res
		now := ledger.T(store.Now())
		sc.next.Updated = &now
		st = sc.next
		return nil
	})
	if err != nil {
		return Result{Agent: opts.Agent, Items: []Item{}}, fmt.Errorf("inbox %s: %w", opts.Agent, err)
	}
	res.Marked = len(res.Items) > 0
	return res, nil
}

// MarkSeen records that agent has read c as it stands (through clarify
// wait, show or resolve, an MCP tool or a wake: the way via), so that its
// inbox does not deliver again what it already saw. It marks nothing for a
// reader who is neither c's asker nor the one asked, or when the mark is
// already there.
func MarkSeen(ctx context.Context, store *ledger.Store, agent string, c *ledger.Clarification, via string) error {
	if c == nil || agent == "" || (agent != c.From && agent != c.To) {
		return nil
	}
	if err := ledger.ValidateAgent("agent", agent); err != nil {
		return err
	}
	name := StateFile(agent)
	var st State
	if err := store.ReadState(name, &st); err != nil {
		return fmt.Errorf("inbox %s: %w", agent, err)
	}
	if st.Marks[c.ID].Entries >= len(c.Thread) {
		return nil // seen already: no lock, no write
	}
	open := agent == c.From && c.Status == ledger.Answered // more replies may come
	st = State{}
	err := store.UpdateState(ctx, name, &st, func() error {
		now := store.Now()
		st.Marks = mark(st.Marks, c.ID, len(c.Thread), now, open, via)
		return nil
	})
	if err != nil {
		return fmt.Errorf("inbox %s: %w", agent, err)
	}
	return nil
}

// MarkResolved is MarkSeen for the one who resolved c (the author of its
// resolution): resolving is reading.
func MarkResolved(ctx context.Context, store *ledger.Store, c *ledger.Clarification) error {
	if c == nil {
		return nil
	}
	if e := c.Current(ledger.Resolution); e != nil {
		return MarkSeen(ctx, store, e.From, c, ViaResolve)
	}
	return nil
}

// mark returns marks with id seen through its first entries thread
// entries (never fewer than before), open or not (see Mark.Open), at most
// maxMarks of them. A mark that moves forward records the step: when and
// by which way (via) the agent first saw the entries it adds.
func mark(marks map[string]Mark, id string, entries int, now time.Time, open bool, via string) map[string]Mark {
	m := marks[id]
	if entries > m.Entries {
		m.Via = append(m.Via, Step{Entries: entries, At: ledger.T(now), Via: via})
		m.Entries = entries
	}
	m.At, m.Open = ledger.T(now), open
	return keep(marks, id, m)
}

// keep returns marks with id's mark m, at most maxMarks of them, the
// oldest dropped first.
func keep(marks map[string]Mark, id string, m Mark) map[string]Mark {
	if marks == nil {
		marks = map[string]Mark{}
	}
	marks[id] = m
	for len(marks) > maxMarks {
		oldest := ""
		for k, m := range marks {
			if oldest == "" || m.At.Before(marks[oldest].At.Time) || (m.At.Equal(marks[oldest].At.Time) && k < oldest) {
				oldest = k
			}
		}
		delete(marks, oldest)
	}
	return marks
}

// errReplaced means the line before the remembered offset is not the one
// remembered: the log was replaced or truncated.
var errReplaced = errors.New("event log replaced")

type scanned struct {
	res  Result
	next State
}

// scan reads the log from st's offset and returns the new items for the
// agent and the state to remember. It reads again from the start, skipping
// events up to st.Seen, when the log is not the one st describes.
func scan(store *ledger.Store, log eventlog.EventLog, st State, opts Options) (scanned, error) {
	sc, err := scanFrom(store, log, st, opts, false)
	if errors.Is(err, errReplaced) {
		fresh := State{Seen: st.Seen, Marks: st.Marks}
		return scanFrom(store, log, fresh, opts, true)
	}
	return sc, err
}

// lineMark identifies a line: its length, a hash of its bytes (FNV-1a,
// 64 bits), and its event's time. The hash tells a log that was replaced
// from the one read before; it guards against accidents, not against
// someone who can write the log (who could change anything). A state
// written with another hash (SHA-256, by earlier versions) does not match:
// the log is then read again from the start, once, and events up to the
// state's time count as delivered, as for a replaced log.
type lineMark struct {
	len  int
	sum  string
	seen *ledger.Time
}

func markOf(raw []byte) lineMark {
	h := fnv.New64a()
	_, _ = h.Write(raw)
	m := lineMark{len: len(raw), sum: hex.EncodeToString(h.Sum(nil))}
	if e, ok := (eventlog.Line{Raw: raw}).Decode(); ok {
		t := e.Timestamp
		m.seen = &t
	}
	return m
}

// candidate is an item a look may deliver, with where its event lies.
type candidate struct {
	item  Item
	entry int    // the index of the thread entry it delivers
	start int64  // where its event's line starts
	prev  []byte // the line before it; nil: the line the old state names
}

// scanner is one read of the log for an agent: the lines it read and the
// candidates it found.
type scanner struct {
	st         State
	opts       Options
	afterReset bool
	first      bool // the agent's first look
	delivered  map[string]bool
	// An event for the agent names it: lines that do not are skipped
	// without decoding, which keeps a first look at a long log cheap.
	needle   []byte
	lines    [2][]byte // the last two lines read, alternately: no allocation per line
	cur      int       // which of lines holds the last line read
	verified bool
	scannedN int
	cands    []candidate
	took     map[string]bool  // clarifications with a candidate
	lastAt   map[string]int64 // marked clarification → start of its last line for the agent
	ended    map[string]bool  // open marks whose round ended: no more replies to it
	older    map[string]ledger.Status
	carried  map[string]int // seen by the keys of an older state: becomes marks
	b        builder
}

func scanFrom(store *ledger.Store, log eventlog.EventLog, st State, opts Options, afterReset bool) (scanned, error) {
	var sc scanned
	start := st.Offset
	verify := st.Offset > 0 && st.LastLen > 0 && int64(st.LastLen) <= st.Offset
	if verify {
		start = st.Offset - int64(st.LastLen)
	} else if st.Offset > 0 {
		return sc, errReplaced // nothing to check the offset against: start over
	}
	s := &scanner{
		st: st, opts: opts, afterReset: afterReset,
		first:     st.Updated == nil && st.Offset == 0 && !afterReset,
		delivered: make(map[string]bool, len(st.Delivered)),
		needle:    []byte(`"` + opts.Agent + `"`),
		verified:  !verify,
		took:      map[string]bool{}, lastAt: map[string]int64{}, ended: map[string]bool{},
		older: map[string]ledger.Status{}, carried: map[string]int{},
		b: builder{store: store, agent: opts.Agent, ledgers: map[int]*ledger.Ledger{}, source: opts.Source},
	}
	for _, k := range st.Delivered {
		s.delivered[k] = true
	}
	end, err := log.ReadFrom(start, s.line)
	if err != nil {
		return sc, err
	}
	if !s.verified {
		return sc, errReplaced // the remembered line is gone
	}
	sc.res = Result{Agent: opts.Agent, Items: []Item{}, Scanned: s.scannedN, Older: countOlder(s.older)}
	show, held := s.pick(&sc.res)
	sc.next = s.nextState(store.Now(), end, show, held)
	return sc, nil
}

// line reads one line of the log: the remembered line first, checked,
// then each line that may make a candidate.
func (s *scanner) line(l eventlog.Line) error {
	if !s.verified {
		if l.End != s.st.Offset || markOf(l.Raw).sum != s.st.LastSum {
			return errReplaced
		}
		s.verified = true
		return nil
	}
	prev := s.lines[s.cur] // valid until the next line
	if s.scannedN == 0 {
		prev = nil // the state's line, if any
	}
	s.scannedN++
	s.cur ^= 1
	s.lines[s.cur] = append(s.lines[s.cur][:0], l.Raw...)
	if !bytes.Contains(l.Raw, s.needle) {
		return nil
	}
	e, ok := l.Decode()
	if !ok {
		return nil
	}
	if s.afterReset && s.st.Seen != nil && !e.Timestamp.After(s.st.Seen.Time) {
		return nil
	}
	if s.st.Marks[e.ClarificationID].Open && endsRound(e.Type) {
		s.ended[e.ClarificationID] = true
	}
	kind, ok := kindOf(e, s.opts.Agent)
	if !ok {
		return nil
	}
	if told(kind) {
		return s.toldOnce(l, prev, e, kind)
	}
	return s.event(l, prev, e, kind)
}

// toldOnce makes the candidate of an event told once, apart from the
// thread: its own mark, never in the way of the clarification's other
// items.
func (s *scanner) toldOnce(l eventlog.Line, prev []byte, e eventlog.Event, kind Kind) error {
	key := toldKey(e)
	if s.st.Marks[key].Entries > 0 || s.took[key] {
		return nil
	}
	c, err := s.b.find(e)
	if err != nil || c == nil {
		return err
	}
	s.took[key] = true
	s.cands = append(s.cands, candidate{item: s.b.tell(c, e, kind), entry: -1, start: l.Start, prev: bytes.Clone(prev)})
	return nil
}

// event makes the candidate of an event in a clarification's thread: one
// per clarification, the current one not yet seen.
func (s *scanner) event(l eventlog.Line, prev []byte, e eventlog.Event, kind Kind) error {
	if _, marked := s.st.Marks[e.ClarificationID]; marked {
		s.lastAt[e.ClarificationID] = l.Start
	}
	if s.took[e.ClarificationID] {
		return nil // one item per clarification: its status makes one kind current
	}
	c, err := s.b.find(e)
	if err != nil || c == nil {
		return err
	}
	if (s.first || l.Start < s.st.History) && !c.Status.Open() {
		if s.first {
			s.older[c.ID] = c.Status // history: counted once, not delivered
		}
		return nil
	}
	seen := s.st.Marks[c.ID].Entries
	item, entry, ok := s.b.build(c, e, kind, seen)
	if ok && s.delivered[item.Key] {
		s.carried[c.ID] = entry + 1
	}
	if !ok || entry < seen || s.delivered[item.Key] {
		return nil // no longer current, or seen
	}
	s.took[c.ID] = true
	s.cands = append(s.cands, candidate{item: item, entry: entry, start: l.Start, prev: bytes.Clone(prev)})
	return nil
}

// pick orders the candidates and puts in res those it shows (within the
// filters and the limit); the others are held for a later look.
func (s *scanner) pick(res *Result) (show, held []candidate) {
	order(s.cands, s.opts.Agent)
	opts := s.opts
	for _, c := range s.cands {
		if opts.Issue != nil && c.item.Issue != *opts.Issue || len(opts.Kinds) > 0 && !slices.Contains(opts.Kinds, c.item.Kind) {
			held = append(held, c)
		} else {
			show = append(show, c)
		}
	}
	items := make([]Item, len(show))
	for i, c := range show {
		items[i] = c.item
	}
	items, res.More = fit(items, *res, opts.Limit)
	held = append(held, show[len(items):]...)
	show = show[:len(items)]
	res.Items = append(res.Items, items...)
	return show, held
}

// nextState is the state to remember: it names the line ending at the
// new offset (or, with items held, the line before the first of them)
// and marks what was shown.
func (s *scanner) nextState(now time.Time, end int64, show, held []candidate) State {
	st := s.st
	next := State{Offset: end, LastLen: st.LastLen, LastSum: st.LastSum, Seen: st.Seen, History: st.History}
	if s.first {
		next.History = end
	}
	var last []byte // nil: the line the old state named, or none
	if s.scannedN > 0 {
		last = s.lines[s.cur]
	}
	if len(held) > 0 {
		h := slices.MinFunc(held, func(a, b candidate) int { return cmp.Compare(a.start, b.start) })
		next.Offset, last = h.start, h.prev
	}
	if last != nil {
		m := markOf(last)
		next.LastLen, next.LastSum, next.Seen = m.len, m.sum, m.seen
	}
	if next.History <= next.Offset {
		next.History = 0 // all of it settled
	}
	s.markShown(&next, now, show)
	return next
}

// markShown carries into next the old state's marks still needed, and
// marks what was shown (or seen by the keys of an older state).
func (s *scanner) markShown(next *State, now time.Time, show []candidate) {
	for id, m := range s.st.Marks {
		open := m.Open && !s.ended[id]
		if at, ok := s.lastAt[id]; (ok && at >= next.Offset) || now.Sub(m.At.Time) < markGrace || open {
			m.Open = open
			next.Marks = keep(next.Marks, id, m)
		}
	}
	via := cmp.Or(s.opts.Via, ViaInbox)
	for id, n := range s.carried {
		next.Marks = mark(next.Marks, id, n, now, false, ViaInbox)
	}
	for _, c := range show {
		if told(c.item.Kind) {
			next.Marks = mark(next.Marks, c.item.Key, 1, now, false, via)
			continue
		}
		// an answer delivered: more replies to its round may come
		next.Marks = mark(next.Marks, c.item.ID, c.entry+1, now, c.item.Kind == KindAnswer, via)
	}
}

// countOlder sums up the closed clarifications a first look left out.
func countOlder(older map[string]ledger.Status) *Older {
	if len(older) == 0 {
		return nil
	}
	o := &Older{}
	for _, st := range older {
		if st == ledger.Abandoned {
			o.Abandoned++
		} else {
			o.Resolved++
		}
	}
	return o
}

// kindOf says whether event e makes an item for agent, and which.
func kindOf(e eventlog.Event, agent string) (Kind, bool) {
	switch e.Type {
	case eventlog.EventAnswered:
		return KindAnswer, e.FromAgent == agent
	case eventlog.EventRequested, eventlog.EventFollowedUp:
		return KindQuestion, e.ToAgent == agent
	case eventlog.EventResolved:
		return KindResolved, ledger.IsHuman(e.By) && (e.FromAgent == agent || e.ToAgent == agent)
	case eventlog.EventEscalated:
		return KindEscalated, e.FromAgent == agent
	case eventlog.EventAbandoned:
		return KindAbandoned, e.FromAgent == agent && e.By != agent
	case eventlog.EventRenumbered:
		return KindRenumbered, e.FromAgent == agent
	case eventlog.EventChangeSuperseded:
		return KindOvertaken, e.By == agent
	}
	return "", false
}

// Due reports whether c, as it stands, holds an item of one of kinds for
// agent about a thread entry its marks do not cover: the item the entry's
// event will deliver, if it is not in the log yet (a writer appends it
// right after the ledger). A reader that found c settled before its event
// (hook stop's hold) waits for it only then. Entries past a mark pruned
// since count as not seen.
func Due(store *ledger.Store, agent string, c *ledger.Clarification, kinds []Kind) (bool, error) {
	var st State
	if err := store.ReadState(StateFile(agent), &st); err != nil {
		return false, fmt.Errorf("inbox %s: %w", agent, err)
	}
	for i := st.Marks[c.ID].Entries; i < len(c.Thread); i++ {
		if k, ok := entryKind(c, i, agent); ok && slices.Contains(kinds, k) {
			return true, nil
		}
	}
	return false, nil
}

// entryKind is kindOf for the event that thread entry i of c logs: an
// answer to agent's question, a question to it, an escalation of its
// question, a person's resolution of one it is party to, its question
// abandoned by another.
func entryKind(c *ledger.Clarification, i int, agent string) (Kind, bool) {
	e := &c.Thread[i]
	switch e.Type {
	case ledger.Answer:
		return KindAnswer, c.From == agent
	case ledger.Question:
		return KindQuestion, c.To == agent
	case ledger.Escalation:
		return KindEscalated, c.From == agent
	case ledger.Resolution:
		if c.Status == ledger.Abandoned && i == len(c.Thread)-1 {
			return KindAbandoned, c.From == agent && e.From != agent
		}
		return KindResolved, ledger.IsHuman(e.From) && (c.From == agent || c.To == agent)
	}
	return "", false
}

// told reports whether kind only tells the agent something once (what
// became of a change it made offline), whatever the clarification's state.
func told(kind Kind) bool { return kind == KindRenumbered || kind == KindOvertaken }

// toldKey is the key of the item event e tells, and of its mark.
func toldKey(e eventlog.Event) string {
	if e.Type == eventlog.EventRenumbered {
		return e.ClarificationID + ":" + string(KindRenumbered) + ":" + e.Was
	}
	return e.ClarificationID + ":" + string(KindOvertaken) + ":" + strconv.FormatInt(e.Timestamp.UnixMilli(), 10)
}

// tell builds the item of an event that only tells (told): about c as it
// now stands.
func (b *builder) tell(c *ledger.Clarification, e eventlog.Event, kind Kind) Item {
	it := Item{
		Kind: kind, ID: c.ID, Issue: e.IssueNumber, Topic: c.Topic, From: c.From, To: c.To,
		By: e.By, Round: c.Round, Blocking: c.Blocking, Status: c.Status, At: e.Timestamp,
		Key: toldKey(e), Was: e.Was, Body: e.Reason,
	}
	if q := c.Current(ledger.Question); q != nil {
		it.Question = q.Body
	}
	return it
}

// endsRound says whether an event of type t ends the round of an answered
// question: no further reply to that round will be delivered.
func endsRound(t eventlog.EventType) bool {
	return t == eventlog.EventFollowedUp || t == eventlog.EventResolved || t == eventlog.EventAbandoned
}

// builder fills items from the ledgers, reading each at most once a look.
type builder struct {
	store   *ledger.Store
	agent   string
	ledgers map[int]*ledger.Ledger
	source  *brief.Source // for a question's card; nil: none
}

// find returns the clarification event e is about, or nil when it is gone.
func (b *builder) find(e eventlog.Event) (*ledger.Clarification, error) {
	l, ok := b.ledgers[e.IssueNumber]
	if !ok {
		var err error
		if l, err = b.store.Read(e.IssueNumber); err != nil {
			return nil, err
		}
		b.ledgers[e.IssueNumber] = l
	}
	return l.Find(e.ClarificationID), nil
}

// card is what c's decision card adds to its question, as text (see
// Item.Card).
func (b *builder) card(issue int, c *ledger.Clarification) string {
	if b.source == nil {
		return ""
	}
	var all []*ledger.Clarification
	if l := b.ledgers[issue]; l != nil {
		all = l.Clarifications
	}
	k := brief.Build(*b.source, issue, c, all)
	if !k.HasContext() {
		return ""
	}
	return k.Render(brief.Text, brief.Options{Compact: true})
}

// build returns the item for event e about c and the index of the thread
// entry it delivers (an answer: its latest reply), or ok = false when it no
// longer concerns the agent (a question answered or closed meanwhile, an
// answer followed up on or closed since, an escalation already decided).
// seen is how many of c's thread entries the agent has seen (its mark): an
// answer carries the round's replies after them.
func (b *builder) build(c *ledger.Clarification, e eventlog.Event, kind Kind, seen int) (it Item, entry int, ok bool) {
	it = Item{
		Kind: kind, ID: c.ID, Issue: e.IssueNumber, Topic: c.Topic, From: c.From, To: c.To,
		By: e.By, Round: e.Round, Blocking: c.Blocking, Status: c.Status, At: e.Timestamp,
		Key: fmt.Sprintf("%s:%s:%d", c.ID, kind, e.Round),
	}
	if q := lastEntry(c, ledger.Question, e.Round); q >= 0 {
		it.Question = c.Thread[q].Body
	}
	switch kind {
	case KindAnswer:
		if c.Status != ledger.Answered || c.Round != e.Round {
			return Item{}, 0, false
		}
		if it.Answers, entry = replies(c, e.Round, seen); entry < 0 {
			return Item{}, 0, false // every reply seen
		}
		a := c.Thread[entry]
		it.By, it.Person, it.Body, it.At = a.From, c.PersonAt(entry), joinReplies(it.Answers), a.Timestamp
		it.Assumptions = assumedBefore(c, e.Round, a.Timestamp)
	case KindQuestion:
		entry = lastEntry(c, ledger.Question, e.Round)
		if entry < 0 || (c.Status != ledger.Pending && c.Status != ledger.Stale) || c.Round != e.Round {
			return Item{}, 0, false // answered, closed or moved on meanwhile
		}
		it.By, it.Body = c.From, it.Question
		it.Question = ""
		if c.X != nil {
			it.Options = c.X.Options
		}
		it.Card = b.card(e.IssueNumber, c)
	case KindResolved:
		entry = lastEntry(c, ledger.Resolution, 0)
		if entry < 0 {
			return Item{}, 0, false
		}
		r := c.Thread[entry]
		it.By, it.Person, it.Body, it.At = r.From, c.PersonAt(entry), r.Body, r.Timestamp
		it.Decision = c.Decision()
		if q := c.Current(ledger.Question); q != nil {
			it.Question = q.Body
		}
		if b.agent == c.From {
			it.Assumptions = assumedBefore(c, 0, r.Timestamp)
		}
	case KindEscalated:
		entry = lastEntry(c, ledger.Escalation, 0)
		if entry < 0 || c.Status != ledger.Escalated {
			return Item{}, 0, false // already decided: the resolution says it all
		}
		it.Body = c.EscalationReason()
	case KindAbandoned:
		entry = lastEntry(c, ledger.Resolution, 0)
		if entry < 0 || c.Status != ledger.Abandoned {
			return Item{}, 0, false
		}
		it.Body = e.Reason
	}
	it.Late = len(it.Assumptions) > 0
	return it, entry, true
}

// replies returns the answer entries of round in c's thread from index
// from on, in order, and the index of the last of them (-1: none).
func replies(c *ledger.Clarification, round, from int) ([]Reply, int) {
	var out []Reply
	last := -1
	for i := max(from, 0); i < len(c.Thread); i++ {
		if e := &c.Thread[i]; e.Type == ledger.Answer && e.Round == round {
			out = append(out, Reply{By: e.From, Person: c.PersonAt(i), At: e.Timestamp, Body: e.Body})
			last = i
		}
	}
	return out, last
}

// joinReplies is the bodies of rs, a blank line apart, as
// ledger.Clarification.RoundAnswer joins a round's answers.
func joinReplies(rs []Reply) string {
	bodies := make([]string, len(rs))
	for i, r := range rs {
		bodies[i] = r.Body
	}
	return strings.Join(bodies, "\n\n")
}

// lastEntry is the index of the latest thread entry of type t in round (0:
// any round), or -1.
func lastEntry(c *ledger.Clarification, t ledger.EntryType, round int) int {
	for i := len(c.Thread) - 1; i >= 0; i-- {
		if e := &c.Thread[i]; e.Type == t && (round == 0 || e.Round == round) {
			return i
		}
	}
	return -1
}

// assumedBefore returns the asker's assumptions recorded no later than at,
// for round (0: any round).
func assumedBefore(c *ledger.Clarification, round int, at ledger.Time) []ledger.Assumption {
	if c.X == nil {
		return nil
	}
	var out []ledger.Assumption
	for _, a := range c.X.Assumptions {
		if (round == 0 || a.Round == round) && a.By == c.From && !a.Timestamp.After(at.Time) {
			out = append(out, a)
		}
	}
	return out
}
