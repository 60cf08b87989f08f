package doctor

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/internal/eventlog"
	"github.com/agentx-cli/agentx/internal/remote"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// CheckVanished: a question the event log says was asked (its asker was
// given the id) is not in its ledger: a writer that takes no lock, or
// writes in place, wrote a version of the file made before it. (A change
// the ledger holds without its event, its writer killed between the
// ledger's rename and the event's append, is a CheckEvents finding.)
const CheckVanished = "vanished"

// recordSum is what the event checks need of one clarification, kept from
// checkLedger so that the ledgers are not read twice.
type recordSum struct {
	id, from, to, topic string
	blocking            bool
	created             time.Time
	entries             []entrySum
}

type entrySum struct {
	typ   eventlog.EventType
	round int
	from  string
	at    time.Time
}

// summarize keeps what the event checks need of l's records.
func summarize(l *ledger.Ledger) []recordSum {
	out := make([]recordSum, 0, len(l.Clarifications))
	for _, c := range l.Clarifications {
		r := recordSum{id: c.ID, from: c.From, to: c.To, topic: c.Topic, blocking: c.Blocking, created: c.Created.Time,
			entries: make([]entrySum, 0, len(c.Thread))}
		for _, e := range c.Thread {
			if t, ok := eventOfEntry(e); ok {
				r.entries = append(r.entries, entrySum{typ: t, round: e.Round, from: e.From, at: e.Timestamp.Time})
			}
		}
		out = append(out, r)
	}
	return out
}

// eventOfEntry is the event the hub logs with the change that added thread
// entry e: a question asks (round 1) or follows up, an answer answers, an
// escalation escalates, a resolution resolves or, when its body starts
// "Abandoned", abandons.
func eventOfEntry(e ledger.ThreadEntry) (eventlog.EventType, bool) {
	switch e.Type {
	case ledger.Question:
		if e.Round <= 1 {
			return eventlog.EventRequested, true
		}
		return eventlog.EventFollowedUp, true
	case ledger.Answer:
		return eventlog.EventAnswered, true
	case ledger.Escalation:
		return eventlog.EventEscalated, true
	case ledger.Resolution:
		if strings.HasPrefix(e.Body, "Abandoned") {
			return eventlog.EventAbandoned, true
		}
		return eventlog.EventResolved, true
	}
	return "", false
}

// change is one kind of change of a clarification the ledgers hold (its
// event's type and round), and its slot in a count of each kind.
type change struct {
	typ   eventlog.EventType
	round int
	slot  int
}

// changes are what the event checks know of each clarification id the
// ledgers hold: a line of the log is looked up once, by its id, and the
// few kinds of change of that id compared, as most lines of a long log
// name a clarification the ledgers hold no more.
type changes struct {
	byID  map[string]*clar
	kinds int // slots
	// a bit for the hash of each id of byID: a line whose id's bit is
	// clear names none of them, and is not looked up (a long log names
	// many clarifications the ledgers hold no more, and a lookup in a map
	// of every clarification is a trip to memory; this is in the cache)
	ids  [1 << 12]uint64
	seed maphash.Seed
}

// mark sets the bit of id.
func (c *changes) mark(id string) {
	h := maphash.String(c.seed, id)
	c.ids[h>>6%uint64(len(c.ids))] |= 1 << (h % 64)
}

// of is what the ledgers hold under id; nil: nothing.
func (c *changes) of(id []byte) *clar {
	if h := maphash.Bytes(c.seed, id); c.ids[h>>6%uint64(len(c.ids))]&(1<<(h%64)) == 0 {
		return nil
	}
	return c.byID[string(id)]
}

// clar is what the event checks know of one clarification id: the kinds
// of change the ledgers hold of it, and its record (one of them, should
// two ledgers hold the id).
type clar struct {
	kinds []change
	rec   *recordSum
}

// slot is the slot of the change of type typ in round among of, or -1.
func slot(of []change, typ eventlog.EventType, round int) int {
	for _, c := range of {
		if c.typ == typ && c.round == round {
			return c.slot
		}
	}
	return -1
}

// logged is what the event log says, as the event checks need it, read
// in one pass in memory bounded by the ledgers, not the log: counts only
// for the changes the ledgers hold, and each question the log says was
// asked matched against its ledger as it is read (vanishing).
type logged struct {
	start    time.Time        // the first event's time: changes before it are not expected in the log
	held     *changes         // what is counted
	counts   []int            // by slot of held
	timeouts []eventlog.Event // every lock-timeout event, in log order (rare: a holder that keeps others waiting)
}

// readLogged reads the event log at path. held are the changes the
// ledgers hold (only those are counted); v, when set, is told each
// clarification-requested event. A long log is read in parts, on every
// core, each part into a logged and a vanishing of its own, put together
// in the parts' order: what one read of the whole would have found.
func readLogged(path string, held *changes, v *vanishing) (*logged, error) {
	ps, err := eventlog.EventLog{Path: path}.Parts(runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, err
	}
	defer ps.Close()
	parts := ps.List
	lgs, vs, errs := make([]*logged, len(parts)), make([]*vanishing, len(parts)), make([]error, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		lgs[i] = &logged{held: held, counts: make([]int, held.kinds)}
		vs[i] = v
		if v != nil && len(parts) > 1 {
			vs[i] = v.fork()
		}
		wg.Go(func() { errs[i] = lgs[i].read(p, vs[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	lg := lgs[0]
	for _, p := range lgs[1:] {
		lg.add(p)
	}
	if v != nil && len(parts) > 1 {
		v.join(vs)
	}
	return lg, nil
}

// read counts one part of the log into lg, telling v (when set) each
// clarification-requested event.
func (lg *logged) read(p eventlog.Part, v *vanishing) error {
	// A glance at each line: the log is most of what doctor reads, and
	// what it keeps of a line is the few clarifications the ledgers hold.
	_, err := p.EachGlance(func(e *eventlog.Glance) error {
		if e.Type == eventlog.EventLockTimeout {
			lg.timeouts = append(lg.timeouts, e.Event())
		}
		if len(e.ClarificationID) == 0 || e.Refusal() {
			return nil // a proposal's event, or no change
		}
		if lg.start.IsZero() || e.Timestamp.Before(lg.start) {
			lg.start = e.Timestamp
		}
		c := lg.held.of(e.ClarificationID) // nil: one no ledger holds, nothing to count
		if c != nil {
			if i := slot(c.kinds, e.Type, e.Round); i >= 0 {
				lg.counts[i]++
			}
		}
		if v != nil && e.Type == eventlog.EventRequested {
			v.asked(e, c)
		}
		return nil
	})
	return err
}

// add adds what the next part of the log says to lg.
func (lg *logged) add(next *logged) {
	if !next.start.IsZero() && (lg.start.IsZero() || next.start.Before(lg.start)) {
		lg.start = next.start
	}
	for i, n := range next.counts {
		lg.counts[i] += n
	}
	lg.timeouts = append(lg.timeouts, next.timeouts...)
}

// needed lists the clarifications the ledgers hold, and their kinds of
// change.
func needed(records map[int][]recordSum) *changes {
	n := 0
	for _, rs := range records {
		n += len(rs)
	}
	out := &changes{byID: make(map[string]*clar, n), seed: maphash.MakeSeed()}
	clars := make([]clar, 0, n) // one allocation for all
	for _, rs := range records {
		for i := range rs {
			rec := &rs[i]
			c := out.byID[rec.id]
			if c == nil {
				clars = append(clars, clar{})
				c = &clars[len(clars)-1]
				out.byID[rec.id] = c
				out.mark(rec.id)
			}
			c.rec = rec
			for _, en := range rec.entries {
				if slot(c.kinds, en.typ, en.round) < 0 {
					c.kinds = append(c.kinds, change{en.typ, en.round, out.kinds})
					out.kinds++
				}
			}
		}
	}
	return out
}

// crossCheckEvents cross-checks the event log against the sound ledgers
// (records, by issue): every question the log says was asked must be in
// its ledger (CheckVanished: what the log knows of one that is not is
// reported, since it cannot be restored), and every change a ledger holds
// must have its event (CheckEvents; --fix appends the missing ones, under
// the event log's own lock, so that two doctors append each once). A change
// younger than the stale age is left alone: its writer may still be about
// to append it. The log is read once, streamed (in parts, on every core).
func crossCheckEvents(ctx context.Context, store *ledger.Store, opts Options, r *Report, records map[int][]recordSum, unsound map[int]bool) error {
	path := filepath.Join(store.Dir(), eventlog.File)
	held := needed(records)
	v := newVanishing(store, records, unsound, held)
	lg, err := readLogged(path, held, v)
	if err != nil {
		return err
	}
	lockTimeouts(store, lg, opts, r)
	if lg.start.IsZero() {
		return nil // no event log (or no clarification in it): nothing to compare
	}
	v.report(r)
	missing := missingEvents(lg, records, opts.Now().Add(-opts.StaleAge))
	if len(missing) == 0 {
		return nil
	}
	if opts.Fix {
		appended, err := appendMissing(ctx, path, opts, records, held)
		if err != nil {
			r.add(Finding{Check: CheckEvents, Severity: Error, Path: path,
				Problem: fmt.Sprintf("%d %s the ledgers hold %s no event", len(missing), words.Plural(len(missing), "change", "changes"), words.Plural(len(missing), "has", "have")),
				Action:  "could not append them: " + err.Error()})
			return nil
		}
		missing = appended
	}
	for _, e := range missing {
		f := Finding{Check: CheckEvents, Severity: Error, Path: path,
			Problem: fmt.Sprintf("%s of %s (round %d, %s, by %s) is in the ledger of #%d but not in the event log: its writer was killed before it logged it",
				e.Type, e.ClarificationID, e.Round, stampOf(e), e.By, e.IssueNumber),
			Action: "agentx doctor --fix appends it (the ledger is the record; events are derived from it)"}
		if opts.Fix {
			f.Fixed, f.Action = true, "appended"
		}
		r.add(f)
	}
	return nil
}

// asked is what the vanishing check keeps of a question the log says was
// asked and its ledger did not hold under its id.
type asked struct {
	id, from, to, topic string
	issue               int
	at                  time.Time
}

// vanishing checks each question the log says was asked against its
// ledger, as the log is read: matched under its id (with the same asker,
// one asked and topic), or, renumbered (remote mode), under another id made
// within a minute before the event. Only the questions not matched under
// their id are kept for the second look.
type vanishing struct {
	store      *ledger.Store
	records    map[int][]recordSum
	unsound    map[int]bool
	held       *changes
	claimed    map[string]bool
	renumbered map[string]string
	synced     map[int]bool // issues whose sync state was read into renumbered
	left       []asked
	overflow   int               // questions past maxLeft not matched under their id: counted, not kept
	names      map[string]string // one copy of each agent name and topic kept in left
}

// maxLeft bounds the questions kept for the second look: a log that
// matches nothing (another workspace's, a generated one) would otherwise
// hold every question in memory. Past it they are only counted.
const maxLeft = 10_000

func newVanishing(store *ledger.Store, records map[int][]recordSum, unsound map[int]bool, held *changes) *vanishing {
	return &vanishing{store: store, records: records, unsound: unsound, held: held,
		claimed: map[string]bool{}, renumbered: map[string]string{}, synced: map[int]bool{}, names: map[string]string{}}
}

// fork is a vanishing for one part of the log: the ledgers' of v, and
// nothing found yet.
func (v *vanishing) fork() *vanishing {
	return newVanishing(v.store, v.records, v.unsound, v.held)
}

// join puts into v what its forks found in the parts of the log, in the
// parts' order: the questions left, the first maxLeft of them kept, as
// one read of the whole would have kept them, and the records claimed.
func (v *vanishing) join(parts []*vanishing) {
	for _, p := range parts {
		for id := range p.claimed {
			v.claimed[id] = true
		}
		v.overflow += p.overflow
		keep := min(len(p.left), maxLeft-len(v.left))
		v.left = append(v.left, p.left[:keep]...)
		v.overflow += len(p.left) - keep
	}
}

func (a asked) same(rec *recordSum) bool {
	return rec.from == a.from && rec.to == a.to && rec.topic == a.topic
}

// asks reports whether e asks rec's question: the same asker, one asked
// and topic.
func (rec *recordSum) asks(e *eventlog.Glance) bool {
	return rec.from == string(e.FromAgent) && rec.to == string(e.ToAgent) && rec.topic == string(e.Topic)
}

// asked takes one clarification-requested event, and what the ledgers
// hold under its id (nil: nothing). Its strings are the log's line, copied
// only when kept. An event that asks its record's question claims the
// record; another that asks it again (a pull paused, then killed, logs
// again) changes nothing.
func (v *vanishing) asked(e *eventlog.Glance, c *clar) {
	if v.unsound[e.IssueNumber] {
		return // its ledger is reported as it is
	}
	if to, ok := v.renumberedTo(e.IssueNumber, e.ClarificationID); ok {
		c = v.held.byID[to] // delivered under another id (remote mode): the sync state says which
	}
	if c != nil && c.rec.asks(e) {
		v.claimed[c.rec.id] = true
		return
	}
	if len(v.left) >= maxLeft {
		v.overflow++
		return
	}
	v.left = append(v.left, asked{id: string(e.ClarificationID), from: v.intern(e.FromAgent), to: v.intern(e.ToAgent), topic: v.intern(e.Topic),
		issue: e.IssueNumber, at: e.Timestamp})
}

// intern is b as a string, one copy per distinct value (agents and topics
// repeat).
func (v *vanishing) intern(b []byte) string {
	if k, ok := v.names[string(b)]; ok {
		return k
	}
	s := string(b)
	v.names[s] = s
	return s
}

// renumberedTo is the id the question id of issue was delivered under,
// when a sync state (remote mode) says it was given another; each issue's
// state is read once, and an unreadable one maps nothing (its own check
// reports it).
func (v *vanishing) renumberedTo(issue int, id []byte) (string, bool) {
	if remote.Of(v.store) == nil {
		return "", false
	}
	if !v.synced[issue] {
		v.synced[issue] = true
		if st, err := remote.ReadSync(v.store, issue); err == nil {
			maps.Copy(v.renumbered, st.Renumbered)
		}
	}
	to, ok := v.renumbered[string(id)]
	return to, ok
}

// maxVanished bounds the vanished questions reported one by one: a log
// that matches nothing (another workspace's, a generated one) says so in
// a last line with the count, not a million lines.
const maxVanished = 100

// report reports each question kept that no unclaimed record of its issue
// matches within a minute.
func (v *vanishing) report(r *Report) {
	more := 0
	for _, a := range v.left {
		found := false
		for i := range v.records[a.issue] {
			rec := &v.records[a.issue][i]
			if v.claimed[rec.id] || !a.same(rec) {
				continue
			}
			if d := a.at.Sub(rec.created); d >= 0 && d <= time.Minute {
				v.claimed[rec.id], found = true, true
				break
			}
		}
		if found {
			continue
		}
		if n := len(r.Findings); n > 0 && countCheck(r, CheckVanished) >= maxVanished {
			more++
			continue
		}
		problem := fmt.Sprintf("%s (asked by %s of %s, topic %q, at %s) was acknowledged but is not in the ledger of #%d",
			a.id, a.from, a.to, a.topic, ledger.T(a.at), a.issue)
		if c := v.held.byID[a.id]; c != nil {
			rec := c.rec
			problem += fmt.Sprintf("; %s there now is another question (asked by %s of %s, topic %q)", rec.id, rec.from, rec.to, rec.topic)
		}
		r.add(Finding{Check: CheckVanished, Severity: Error, Path: v.store.Path(a.issue),
			Problem: problem + ": a writer that takes no lock (or writes the file in place) wrote over it",
			Action:  "it cannot be restored from the event log, which holds no question text: tell " + a.from + " to ask again; see docs/file-formats.md on which AgentX writers honour the lock"})
	}
	if more+v.overflow > 0 {
		// past maxLeft questions were not looked for under another id: at most
		problem := fmt.Sprintf("and %d more %s the event log says %s asked and no ledger holds", more+v.overflow,
			words.Plural(more+v.overflow, "question", "questions"), words.Plural(more+v.overflow, "was", "were"))
		if v.overflow > 0 {
			problem = fmt.Sprintf("and up to %d more questions the event log says were asked and no ledger holds under their ids", more+v.overflow)
		}
		r.add(Finding{Check: CheckVanished, Severity: Error, Path: filepath.Join(v.store.Dir(), eventlog.File),
			Problem: problem,
			Action:  "the first ones are listed above; an event log copied from another workspace says the same of every question"})
	}
}

// countCheck counts r's findings of one check.
func countCheck(r *Report, check string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Check == check {
			n++
		}
	}
	return n
}

// missingEvents lists the events of the changes the ledgers hold and the
// log does not, made from the first event's time on and before settled.
func missingEvents(lg *logged, records map[int][]recordSum, settled time.Time) []eventlog.Event {
	var out []eventlog.Event
	seen := make([]int, lg.held.kinds)
	for n, rs := range records {
		for _, rec := range rs {
			for _, en := range rec.entries {
				k := slot(lg.held.byID[rec.id].kinds, en.typ, en.round)
				seen[k]++
				if seen[k] <= lg.counts[k] || en.at.Before(lg.start) || en.at.After(settled) {
					continue
				}
				c := &ledger.Clarification{ID: rec.id, From: rec.from, To: rec.to, Topic: rec.topic, Blocking: rec.blocking, Round: en.round}
				e := eventlog.EventFor(en.typ, n, c, en.at)
				e.By = en.from
				out = append(out, e)
			}
		}
	}
	slices.SortFunc(out, func(a, b eventlog.Event) int {
		if c := a.Timestamp.Compare(b.Timestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.ClarificationID, b.ClarificationID)
	})
	return out
}

// eventsLockWait bounds how long a doctor waits for another doctor's
// append of missing events.
const eventsLockWait = 30 * time.Second

// appendMissing appends the missing events under the event log's own lock:
// the log is read again under it, so a doctor that waited for another
// appends only what is still missing.
func appendMissing(ctx context.Context, path string, opts Options, records map[int][]recordSum, held *changes) ([]eventlog.Event, error) {
	lk, err := lock.Acquire(ctx, path, lock.Options{Wait: eventsLockWait, StaleAge: opts.StaleAge, Agent: "agentx-doctor", Now: opts.Now})
	if err != nil {
		return nil, err
	}
	defer func() { _ = lk.Release() }()
	lg, err := readLogged(path, held, nil)
	if err != nil {
		return nil, err
	}
	missing := missingEvents(lg, records, opts.Now().Add(-opts.StaleAge))
	log := eventlog.EventLog{Path: path}
	for i, e := range missing {
		if err := log.Append(e); err != nil {
			return missing[:i], err
		}
	}
	return missing, nil
}

// stampOf is an event's time as agentx writes times.
func stampOf(e eventlog.Event) string {
	return e.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z")
}

// CheckLockTimeouts: writes to an issue's ledger gave up waiting for its
// lock lately (lock-timeout events): a process held it past [lock] wait,
// and the command that timed out wrote nothing.
const CheckLockTimeouts = "lock-timeouts"

// lockTimeoutWindow is how far back doctor reports lock timeouts.
const lockTimeoutWindow = 24 * time.Hour

// lockTimeouts reports, per issue, the writes that timed out on its
// ledger's lock in the last lockTimeoutWindow: how many, when, and who
// held the lock the last time. A warning: nothing is wrong with the
// files, but a person should see a holder that keeps others waiting.
func lockTimeouts(store *ledger.Store, lg *logged, opts Options, r *Report) {
	since := opts.Now().Add(-lockTimeoutWindow)
	type seen struct {
		n           int
		first, last eventlog.Event
	}
	by := map[int]*seen{}
	var issues []int
	for _, e := range lg.timeouts {
		if e.Timestamp.Before(since) {
			continue
		}
		s := by[e.IssueNumber]
		if s == nil {
			s = &seen{first: e}
			by[e.IssueNumber] = s
			issues = append(issues, e.IssueNumber)
		}
		s.n++
		s.last = e
	}
	slices.Sort(issues)
	for _, n := range issues {
		s := by[n]
		when := stampOf(s.last)
		if s.n > 1 {
			when = fmt.Sprintf("from %s to %s", stampOf(s.first), stampOf(s.last))
		}
		r.add(Finding{Check: CheckLockTimeouts, Severity: Warning, Path: store.Path(n) + lock.Suffix,
			Problem: fmt.Sprintf("%d %s to the ledger of issue #%d timed out waiting for its lock in the last %d hours (%s), nothing written; the last: %s",
				s.n, words.Plural(s.n, "write", "writes"), n, int(lockTimeoutWindow.Hours()), when, s.last.Reason),
			Action: fmt.Sprintf("a process holds the lock past [lock] wait: a dead one's lock is stale (agentx doctor --fix removes it); a live one is stuck or paused: resume or end it (the last holder is named above); what timed out: agentx events --issue %d", n)})
	}
}
