package wake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agentx-cli/agentx/internal/eventlog"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
)

// UndeliveredFile records, relative to the state directory and under its
// own lock, what was done about each overdue answer (its receipt says
// nobody picked it up: inbox.UndeliveredAfter), so that it is done once
// across processes. Its name starts with "_", which no agent's does: it is
// never an agent's wake state.
var UndeliveredFile = path.Join(Dir, "_undelivered.json")

// ScannedFile is the throttle of the overdue scan, relative to the state
// directory: its modification time is when the scan last ran.
var ScannedFile = path.Join(Dir, "_scanned")

// ScanEvery is how often, at most, a workspace is scanned for overdue
// answers.
const ScanEvery = time.Minute

// LostAfter is how old an answer its asker has not seen must be before the
// scan looks for its event: an event is appended microseconds after its
// ledger write, so one still missing this long after was lost.
const LostAfter = 30 * time.Second

// keepActed is how long a record of what was done about an answer is kept.
const keepActed = 7 * 24 * time.Hour

// What was done about an overdue answer (Overdue.Action).
const (
	ActionWoke      = "woke"      // its asker's resume command was started once more
	ActionNotified  = "notified"  // the notify command was told (kind "undelivered")
	ActionReemitted = "reemitted" // its event, lost, was appended to the event log again
)

// Acted is what was done about one overdue answer entry, in
// UndeliveredFile.
type Acted struct {
	Agent    string       `json:"agent"`
	Issue    int          `json:"issue"`
	ID       string       `json:"id"`
	Entry    int          `json:"entry"`
	Answered ledger.Time  `json:"answered"`
	Retried  *ledger.Time `json:"retried,omitempty"`  // the asker was woken once more
	Notified *ledger.Time `json:"notified,omitempty"` // the notify command was run
	// Reemitted: the answer's event was not in the event log (its process
	// was killed between the ledger write and the append): appended again
	Reemitted *ledger.Time `json:"reemitted,omitempty"`
}

// Undelivered is the state in UndeliveredFile: by "ID#entry".
type Undelivered struct {
	Answers map[string]*Acted `json:"answers,omitempty"`
}

// Overdue is one thing done about an overdue answer.
type Overdue struct {
	Agent   string         `json:"agent"`
	Issue   int            `json:"issue"`
	ID      string         `json:"id"`
	Entry   int            `json:"entry"`
	Action  string         `json:"action"` // woke, notified
	Woke    *Woke          `json:"woke,omitempty"`
	Receipt *inbox.Receipt `json:"receipt,omitempty"`
}

// NotifyFunc tells the team that answer entry r of c, on issue, was not
// picked up by its asker ([notify], kind "undelivered").
type NotifyFunc func(ctx context.Context, issue int, c *ledger.Clarification, r inbox.Receipt) error

// Undelivered acts, once each, on the answers nobody picked up: an answer
// whose receipt says it is overdue wakes its asker once more when the
// asker has a resume command and a session recorded here; when it has not,
// or the answer is still not delivered UndeliveredAfter after that wake,
// notify (nil: no [notify] configured) is run once for it. The scan runs at
// most once per ScanEvery per workspace, and only when notify is set or
// some agent has a resume command; when it is not due it costs one stat.
//
// Before that, the scan finds the answers whose event was lost (see
// reemit): it runs in every workspace, whatever is configured, as the
// inbox and hook stop need the event as much as a wake does.
func (w *Waker) Undelivered(ctx context.Context, notify NotifyFunc) []Overdue {
	if !w.scanDue() {
		return nil
	}
	var out []Overdue
	issues, err := w.Store.OpenIssues()
	if err != nil {
		w.warn(fmt.Errorf("undelivered answers: %w", err))
		return nil
	}
	now := w.Store.Now()
	for _, n := range issues {
		es, err := w.Store.OpenEntries(n)
		if err != nil {
			w.warn(fmt.Errorf("undelivered answers: %s: %w", words.Issue(n), err))
			continue
		}
		var l *ledger.Ledger
		for _, e := range es {
			// an answer comes after its round's question: one asked less
			// than LostAfter ago has no answer old enough to look at
			if e.Status != ledger.Answered || now.Sub(e.Asked.Time) < LostAfter ||
				ledger.IsHuman(e.From) || ledger.ValidateAgent("agent", e.From) != nil {
				continue
			}
			if l == nil {
				if l, err = w.Store.Read(n); err != nil {
					w.warn(fmt.Errorf("undelivered answers: %s: %w", words.Issue(n), err))
					break
				}
			}
			c := l.Find(e.ID)
			if c == nil || c.Status != ledger.Answered {
				continue
			}
			rs, err := inbox.Receipts(w.Store, c)
			if err != nil {
				w.warn(fmt.Errorf("undelivered answers: %s: %w", c.ID, err))
				continue
			}
			for _, r := range rs {
				if r.State != inbox.ReceiptAnswered || now.Sub(c.Thread[r.Entry].Timestamp.Time) < LostAfter {
					continue // seen or acted on, or too young to tell
				}
				if o, done := w.reemit(ctx, n, c, r, c.ID+"#"+strconv.Itoa(r.Entry)); done {
					out = append(out, o...)
					continue
				}
				if r.Overdue && (notify != nil || w.anyResume()) {
					out = append(out, w.overdue(ctx, n, c, r, notify)...)
				}
			}
		}
	}
	return out
}

// overdue acts on one overdue answer entry r of c: what is due, once.
func (w *Waker) overdue(ctx context.Context, n int, c *ledger.Clarification, r inbox.Receipt, notify NotifyFunc) []Overdue {
	agent := c.From
	key := c.ID + "#" + strconv.Itoa(r.Entry)
	items, wakeable := w.retryable(ctx, agent, n, c.ID)
	action := ""
	var st Undelivered
	err := w.Store.UpdateState(ctx, UndeliveredFile, &st, func() error {
		now := w.Store.Now()
		a := st.Answers[key]
		switch {
		case a == nil && wakeable:
			a = &Acted{Retried: tp(now)}
			action = ActionWoke
		case a == nil && notify != nil, a != nil && a.Notified == nil && notify != nil && a.Retried != nil && now.Sub(a.Retried.Time) >= inbox.UndeliveredAfter:
			if a == nil {
				a = &Acted{}
			}
			a.Notified = tp(now)
			action = ActionNotified
		default:
			return errUnchanged
		}
		a.Agent, a.Issue, a.ID, a.Entry, a.Answered = agent, n, c.ID, r.Entry, c.Thread[r.Entry].Timestamp
		if st.Answers == nil {
			st.Answers = map[string]*Acted{}
		}
		st.Answers[key] = a
		for k, old := range st.Answers {
			if now.Sub(old.Answered.Time) > keepActed {
				delete(st.Answers, k)
			}
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	if err != nil {
		w.warn(fmt.Errorf("undelivered answers: %s: %w", c.ID, err))
		return nil
	}
	o := Overdue{Agent: agent, Issue: n, ID: c.ID, Entry: r.Entry, Action: action, Receipt: &r}
	switch action {
	case ActionWoke:
		wk, err := w.retry(ctx, agent, n, items)
		if err != nil {
			w.warn(fmt.Errorf("wake %s again for %s: %w", agent, c.ID, err))
		}
		o.Woke = wk
	case ActionNotified:
		if err := notify(ctx, n, c, r); err != nil {
			w.warn(err)
		}
	}
	return []Overdue{o}
}

// reemit appends again, once, the event of an overdue answer that its
// asker's inbox does not hold: the process that recorded the answer was
// killed between the ledger write and the event's append, so neither the
// inbox, nor hook stop, nor a wake could see it. With the event back, they
// deliver it as any other (the next look, hook or command). done reports
// whether it did so now (the rest waits for the next scan).
func (w *Waker) reemit(ctx context.Context, n int, c *ledger.Clarification, r inbox.Receipt, key string) (out []Overdue, done bool) {
	if !w.worksHere(c.From) {
		return nil, false // a clone's history is not this machine's to replay
	}
	res, err := inbox.Check(ctx, w.Store, inbox.Options{Agent: c.From, Issue: &n, Peek: true, Kinds: Kinds})
	if err != nil {
		w.warn(fmt.Errorf("undelivered answers: %s: %w", c.ID, err))
		return nil, false
	}
	for _, it := range res.Items {
		if it.ID == c.ID {
			return nil, false // the inbox has it: its event is there
		}
	}
	entry := c.Thread[r.Entry]
	var st Undelivered
	err = w.Store.UpdateState(ctx, UndeliveredFile, &st, func() error {
		if a := st.Answers[key]; a != nil && a.Reemitted != nil {
			return errUnchanged // once: what follows is the other actions' business
		}
		now := w.Store.Now()
		if st.Answers == nil {
			st.Answers = map[string]*Acted{}
		}
		a := st.Answers[key]
		if a == nil {
			a = &Acted{Agent: c.From, Issue: n, ID: c.ID, Entry: r.Entry, Answered: entry.Timestamp}
			st.Answers[key] = a
		}
		a.Reemitted = tp(now)
		e := eventlog.EventFor(eventlog.EventAnswered, n, c, entry.Timestamp.Time)
		e.Round, e.By = entry.Round, entry.From
		return eventlog.EventLog{Path: filepath.Join(w.Store.Dir(), eventlog.File)}.Append(e)
	})
	if errors.Is(err, errUnchanged) {
		return nil, false
	}
	if err != nil {
		w.warn(fmt.Errorf("undelivered answers: %s: append its event again: %w", c.ID, err))
		return nil, false
	}
	return []Overdue{{Agent: c.From, Issue: n, ID: c.ID, Entry: r.Entry, Action: ActionReemitted, Receipt: &r}}, true
}

// worksHere reports whether agent has worked on this machine: it has looked
// at its inbox here, or a hook of its recorded a session here. Only then is
// a missing event appended again: a fresh clone's ledgers hold answers
// whose events are not this machine's business.
func (w *Waker) worksHere(agent string) bool {
	for _, name := range []string{inbox.StateFile(agent), StateFile(agent)} {
		if _, err := os.Stat(filepath.Join(w.Store.Dir(), filepath.FromSlash(name))); err == nil {
			return true
		}
	}
	return false
}

// retryable returns the inbox items of clarification id that would wake
// agent on issue n, and whether it can be woken for them now: it has a
// resume command and a session recorded here, and no hook holds its turn.
func (w *Waker) retryable(ctx context.Context, agent string, n int, id string) ([]inbox.Item, bool) {
	if len(w.Agents[agent].Resume) == 0 || !w.allowed(agent) {
		return nil, false
	}
	var st State
	if err := w.Store.ReadState(StateFile(agent), &st); err != nil {
		return nil, false
	}
	if _, known := sessionOf(st, n); !known {
		return nil, false
	}
	res, err := inbox.Check(ctx, w.Store, inbox.Options{Agent: agent, Issue: &n, Peek: true, Kinds: Kinds})
	if err != nil {
		return nil, false
	}
	var items []inbox.Item
	for _, it := range res.Items {
		if it.ID == id {
			items = append(items, it)
		}
	}
	return items, len(items) > 0
}

// retrySuffix makes the keys of a claim that wakes an agent once more for
// items an earlier claim had: a claim's keys are its own.
const retrySuffix = "#retry"

// retry claims, under agent's wake lock, one more wake for items (unless
// a hook holds the turn now), and runs it.
func (w *Waker) retry(ctx context.Context, agent string, n int, items []inbox.Item) (*Woke, error) {
	var c Claim
	ok := false
	var st State
	err := w.Store.UpdateState(ctx, StateFile(agent), &st, func() error {
		now := w.Store.Now()
		if st.deliverer(n, now) {
			return errUnchanged // the hook that holds the turn, or the session's live waiter, delivers
		}
		c = st.claim(n, agent, items, retrySuffix, now)
		ok = true
		return nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	if err != nil || !ok {
		return nil, err
	}
	return w.run(ctx, agent, c)
}

// anyResume reports whether some agent has a resume command.
func (w *Waker) anyResume() bool {
	for _, a := range w.Agents {
		if len(a.Resume) > 0 {
			return true
		}
	}
	return false
}

// scanDue reports whether the overdue scan last ran ScanEvery ago or more
// (by ScannedFile's modification time: one stat), and if so notes that it
// runs now. Two processes that start together may both scan: what they
// do is recorded once, in UndeliveredFile, under its lock.
func (w *Waker) scanDue() bool {
	p := filepath.Join(w.Store.Dir(), filepath.FromSlash(ScannedFile))
	now := w.Store.Now()
	if fi, err := os.Stat(p); err == nil {
		at := fi.ModTime()
		if now.Sub(at) < ScanEvery && at.Before(now.Add(ScanEvery)) {
			return false
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return true
	}
	if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
		f.Close()
	}
	_ = os.Chtimes(p, now, now)
	return true
}

func (w *Waker) warn(err error) {
	if w.Warn != nil {
		w.Warn(err)
	}
}

func tp(t time.Time) *ledger.Time {
	v := ledger.T(t)
	return &v
}
