package inbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
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
)

// Item is one thing new for the agent.
type Item struct {
	Kind        Kind                `json:"kind"`
	ID          string              `json:"id"`
	Issue       int                 `json:"issue"`
	Topic       string              `json:"topic"`
	From        string              `json:"from"`               // the asker
	To          string              `json:"to"`                 // the one asked
	By          string              `json:"by,omitempty"`       // who answered, asked, resolved or closed
	Round       int                 `json:"round"`              // the round the item is about
	Status      ledger.Status       `json:"status"`             // the clarification's status when delivered
	Question    string              `json:"question,omitempty"` // the round's question
	Body        string              `json:"body,omitempty"`     // the answer, question, decision or reason
	Options     []string            `json:"options,omitempty"`  // choices offered with a question
	Late        bool                `json:"late,omitempty"`     // the asker proceeded on an assumption before this arrived
	Assumptions []ledger.Assumption `json:"assumptions,omitempty"`
	At          ledger.Time         `json:"at"`  // when it happened
	Key         string              `json:"key"` // what marks it delivered: id:kind:round
}

// Options says whose inbox to read and how.
type Options struct {
	Agent string
	Issue *int // only items of this issue; others stay for a later look
	Peek  bool // show without marking delivered
}

// Result is what a look found.
type Result struct {
	Agent  string `json:"agent"`
	Items  []Item `json:"items"`
	Marked bool   `json:"marked"` // the items are recorded as delivered (false under peek)

	// Scanned counts the event log lines read, to show a look costs only
	// the lines appended since the last.
	Scanned int `json:"-"`
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
	// Delivered holds the keys of items past Offset already delivered by a
	// look limited to one issue (--issue), while items of other issues wait.
	Delivered []string     `json:"delivered,omitempty"`
	Updated   *ledger.Time `json:"updated,omitempty"`
}

// StateFile is the agent's state file, relative to the state directory.
func StateFile(agent string) string { return path.Join("inbox", agent+".json") }

// Check returns what is new for opts.Agent and, unless opts.Peek, marks it
// delivered so the next look shows only newer items. Two looks at once for
// the same agent are serialised by the state file's lock, so an item is
// delivered once.
func Check(ctx context.Context, store *ledger.Store, opts Options) (Result, error) {
	res := Result{Agent: opts.Agent, Items: []Item{}}
	if err := ledger.ValidateAgent("--agent", opts.Agent); err != nil {
		return res, err
	}
	log := router.EventLog{Path: filepath.Join(store.Dir(), router.EventsFile)}
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
		res.Items, res.Scanned = sc.items, sc.scanned
		return res, nil
	}
	st = State{}
	err = store.UpdateState(ctx, name, &st, func() error {
		sc, err := scan(store, log, st, opts)
		if err != nil {
			return err
		}
		res.Items, res.Scanned = sc.items, sc.scanned
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

// errReplaced means the line before the remembered offset is not the one
// remembered: the log was replaced or truncated.
var errReplaced = errors.New("event log replaced")

type scanned struct {
	items   []Item
	next    State
	scanned int
}

// scan reads the log from st's offset and returns the new items for the
// agent and the state to remember. It reads again from the start, skipping
// events up to st.Seen, when the log is not the one st describes.
func scan(store *ledger.Store, log router.EventLog, st State, opts Options) (scanned, error) {
	sc, err := scanFrom(store, log, st, opts, false)
	if errors.Is(err, errReplaced) {
		fresh := State{Seen: st.Seen}
		return scanFrom(store, log, fresh, opts, true)
	}
	return sc, err
}

// lineMark identifies a line: its length, a hash of its bytes, and its
// event's time.
type lineMark struct {
	len  int
	sum  string
	seen *ledger.Time
}

func markOf(raw []byte) lineMark {
	h := sha256.Sum256(raw)
	m := lineMark{len: len(raw), sum: hex.EncodeToString(h[:8])}
	if e, ok := (router.Line{Raw: raw}).Decode(); ok {
		t := e.Timestamp
		m.seen = &t
	}
	return m
}

func scanFrom(store *ledger.Store, log router.EventLog, st State, opts Options, afterReset bool) (scanned, error) {
	var sc scanned
	start := st.Offset
	verify := st.Offset > 0 && st.LastLen > 0 && int64(st.LastLen) <= st.Offset
	if verify {
		start = st.Offset - int64(st.LastLen)
	} else if st.Offset > 0 {
		return sc, errReplaced // nothing to check the offset against: start over
	}
	delivered := make(map[string]bool, len(st.Delivered))
	for _, k := range st.Delivered {
		delivered[k] = true
	}
	var (
		// An event for the agent names it: lines that do not are skipped
		// without decoding, which keeps a first look at a long log cheap.
		needle   = []byte(`"` + opts.Agent + `"`)
		lines    [2][]byte   // the last two lines read, alternately: no allocation per line
		cur      int         // which of lines holds the last line read
		holdRaw  []byte      // the line ending where the first held item starts
		holdAt   = int64(-1) // start of the first line with an undelivered item held back by the filter
		keyStart = map[string]int64{}
		verified = !verify
		b        = builder{store: store, agent: opts.Agent, ledgers: map[int]*ledger.Ledger{}}
	)
	end, err := log.ReadFrom(start, func(l router.Line) error {
		if !verified {
			if l.End != st.Offset || markOf(l.Raw).sum != st.LastSum {
				return errReplaced
			}
			verified = true
			return nil
		}
		prev := lines[cur] // valid until the next line
		if sc.scanned == 0 {
			prev = nil // the state's line, if any
		}
		sc.scanned++
		cur ^= 1
		lines[cur] = append(lines[cur][:0], l.Raw...)
		if !bytes.Contains(l.Raw, needle) {
			return nil
		}
		e, ok := l.Decode()
		if !ok {
			return nil
		}
		if afterReset && st.Seen != nil && !e.Timestamp.After(st.Seen.Time) {
			return nil
		}
		kind, ok := kindOf(e, opts.Agent)
		if !ok {
			return nil
		}
		key := fmt.Sprintf("%s:%s:%d", e.ClarificationID, kind, e.Round)
		if _, dup := keyStart[key]; dup {
			return nil
		}
		if delivered[key] {
			keyStart[key] = l.Start
			return nil
		}
		item, ok, err := b.build(e, kind, key)
		if err != nil || !ok {
			return err
		}
		if opts.Issue != nil && e.IssueNumber != *opts.Issue {
			if holdAt < 0 {
				holdAt, holdRaw = l.Start, bytes.Clone(prev)
			}
			return nil
		}
		keyStart[key] = l.Start
		sc.items = append(sc.items, item)
		return nil
	})
	if err != nil {
		return sc, err
	}
	if !verified {
		return sc, errReplaced // the remembered line is gone
	}
	if sc.items == nil {
		sc.items = []Item{}
	}
	// the state names the line ending at the new offset; nil: the line
	// the old state named, or none
	next := State{Offset: end, LastLen: st.LastLen, LastSum: st.LastSum, Seen: st.Seen}
	var last []byte
	if sc.scanned > 0 {
		last = lines[cur]
	}
	if holdAt >= 0 {
		next.Offset, last = holdAt, holdRaw
	}
	if last != nil {
		m := markOf(last)
		next.LastLen, next.LastSum, next.Seen = m.len, m.sum, m.seen
	}
	for key, at := range keyStart {
		if at >= next.Offset {
			next.Delivered = append(next.Delivered, key)
		}
	}
	slices.Sort(next.Delivered)
	sc.next = next
	return sc, nil
}

// kindOf says whether event e makes an item for agent, and which.
func kindOf(e router.Event, agent string) (Kind, bool) {
	switch e.Type {
	case router.EventAnswered:
		return KindAnswer, e.FromAgent == agent
	case router.EventRequested, router.EventFollowedUp:
		return KindQuestion, e.ToAgent == agent
	case router.EventResolved:
		return KindResolved, ledger.IsHuman(e.By) && (e.FromAgent == agent || e.ToAgent == agent)
	case router.EventEscalated:
		return KindEscalated, e.FromAgent == agent
	case router.EventAbandoned:
		return KindAbandoned, e.FromAgent == agent && e.By != agent
	}
	return "", false
}

// builder fills items from the ledgers, reading each at most once a look.
type builder struct {
	store   *ledger.Store
	agent   string
	ledgers map[int]*ledger.Ledger
}

// build returns the item for event e, or ok = false when it no longer
// concerns the agent (a question already answered, a record gone).
func (b *builder) build(e router.Event, kind Kind, key string) (Item, bool, error) {
	l, ok := b.ledgers[e.IssueNumber]
	if !ok {
		var err error
		if l, err = b.store.Read(e.IssueNumber); err != nil {
			return Item{}, false, err
		}
		b.ledgers[e.IssueNumber] = l
	}
	c := l.Find(e.ClarificationID)
	if c == nil {
		return Item{}, false, nil
	}
	it := Item{
		Kind: kind, ID: c.ID, Issue: e.IssueNumber, Topic: c.Topic, From: c.From, To: c.To,
		By: e.By, Round: e.Round, Status: c.Status, At: e.Timestamp, Key: key,
	}
	if q := entryOf(c, ledger.Question, e.Round); q != nil {
		it.Question = q.Body
	}
	switch kind {
	case KindAnswer:
		a := entryOf(c, ledger.Answer, e.Round)
		if a == nil {
			return Item{}, false, nil
		}
		it.By, it.Body, it.At = a.From, a.Body, a.Timestamp
		it.Assumptions = assumedBefore(c, e.Round, a.Timestamp)
	case KindQuestion:
		if (c.Status != ledger.Pending && c.Status != ledger.Stale) || c.Round != e.Round {
			return Item{}, false, nil // answered, closed or moved on meanwhile
		}
		it.By, it.Body = c.From, it.Question
		it.Question = ""
		if c.X != nil {
			it.Options = c.X.Options
		}
	case KindResolved:
		r := c.Current(ledger.Resolution)
		if r == nil {
			return Item{}, false, nil
		}
		it.By, it.Body, it.At = r.From, r.Body, r.Timestamp
		if q := c.Current(ledger.Question); q != nil {
			it.Question = q.Body
		}
		if b.agent == c.From {
			it.Assumptions = assumedBefore(c, 0, r.Timestamp)
		}
	case KindEscalated:
		if c.Status != ledger.Escalated {
			return Item{}, false, nil // already decided: the resolution says it all
		}
		it.Body = router.EscalationReason(c)
	case KindAbandoned:
		it.Body = e.Reason
	}
	it.Late = len(it.Assumptions) > 0
	return it, true, nil
}

// entryOf is the latest thread entry of type t in round.
func entryOf(c *ledger.Clarification, t ledger.EntryType, round int) *ledger.ThreadEntry {
	for i := len(c.Thread) - 1; i >= 0; i-- {
		if e := &c.Thread[i]; e.Type == t && e.Round == round {
			return e
		}
	}
	return nil
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
