package slackmode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// Inbound is where reading the threads got to.
type Inbound struct {
	// Threads is, by clarification id, the ts of the last reply read in
	// its thread: the next read asks for the replies after it.
	Threads map[string]string `json:"threads,omitempty"`
	// Told are the replies of people not allowed whose author was told so
	// (an ephemeral notice), so that nobody is told twice.
	Told []string `json:"told,omitempty"`
	// ReadAt is, by clarification id, when its thread was last read: the
	// least recently read are read first.
	ReadAt map[string]ledger.Time `json:"readAt,omitempty"`
	// Listener is when the listener (agentx slack listen) last said it
	// runs: while it does, commands leave the threads to it.
	Listener *ledger.Time `json:"listener,omitempty"`
	relay.Throttle
}

// maxTold bounds Told.
const maxTold = 500

// Outcome is what became of one reply.
type Outcome string

// The outcomes a poll reports.
const (
	Taken   Outcome = "taken"   // the answer or decision is in the ledger
	Refused Outcome = "refused" // not taken; its author was told why (ephemeral)
	Ignored Outcome = "ignored" // a stranger's (told so, ephemeral)
)

// Handled is one reply a poll acted on.
type Handled struct {
	TS      string  `json:"ts"`
	User    string  `json:"user"`
	ID      string  `json:"id"`               // the clarification
	Verb    string  `json:"verb,omitempty"`   // answer or resolve
	Option  int     `json:"option,omitempty"` // the option the reply chose, from 1
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason,omitempty"` // why it was refused or ignored
}

// PollReport is what one inbound read did.
type PollReport struct {
	Read    bool      `json:"read"`    // Slack was asked (not throttled, not busy)
	Threads int       `json:"threads"` // open threads read
	Replies int       `json:"replies"` // new replies in them
	Handled []Handled `json:"handled"`
	Told    int       `json:"told,omitempty"` // assumptions posted in threads
	// Listening is whether the listener runs, so no thread was read.
	Listening bool   `json:"listening,omitempty"`
	Skipped   string `json:"skipped,omitempty"`
}

// Poll reads the replies in the open threads, at most once per interval
// (force: now), and takes the allowed people's (Take). Processes polling
// at once leave it to one (relay.ErrBusy for the others, unless force).
// While the listener runs (agentx slack listen, which takes each reply as
// it is written), an unforced poll reads no thread: it leaves replies to
// the listener. Threads are read least recently read first, so a rate
// limit that stops a read leaves the others first in line next time. It
// also tells each thread of the asker's assumptions it has not seen.
func (m *Mode) Poll(ctx context.Context, force bool) (PollReport, error) {
	return m.poll(ctx, pollHow{force: force, read: func(thread) bool { return true }})
}

// pollHow is what one poll does: force it, which threads to read (the
// others are only told of assumptions), and whether the listener does it.
type pollHow struct {
	force    bool
	read     func(thread) bool
	listener bool
}

// listenTick is how often the listener posts and tells assumptions; a
// listener not heard from in three ticks is not running.
func (m *Mode) listenTick() time.Duration { return max(m.Config.Interval.Duration, 10*time.Second) }

func (m *Mode) poll(ctx context.Context, how pollHow) (PollReport, error) {
	rep := PollReport{Handled: []Handled{}}
	now := m.Hub.Store.Now()
	r := &relay.Reader{File: m.file(InboundFile), Service: "Slack", Interval: m.Config.Interval.Duration, Hold: m.hold()}
	var in Inbound
	skipped, err := r.Read(ctx, now, &in, &in.Throttle, how.force, func() error {
		rep.Read = true
		if in.Threads == nil {
			in.Threads = map[string]string{}
		}
		if in.ReadAt == nil {
			in.ReadAt = map[string]ledger.Time{}
		}
		if how.listener {
			t := ledger.T(now)
			in.Listener = &t
			m.said.Store(now.UnixMilli())
		}
		listening := !how.force && in.Listener != nil && now.Sub(in.Listener.Time) < 3*m.listenTick()
		rep.Listening = listening
		open, err := m.openThreads()
		if err != nil {
			return err
		}
		// live are the open threads, shared ones too: a shared thread is
		// not read, but where its reading got to is kept for when it is
		// no longer shared.
		live := map[string]bool{}
		for _, t := range open {
			live[t.c.ID] = true
		}
		open = m.unshared(open)
		slices.SortStableFunc(open, func(a, b thread) int { return in.ReadAt[a.c.ID].Compare(in.ReadAt[b.c.ID].Time) })
		for _, t := range open {
			if !listening && how.read(t) {
				rep.Threads++
				if err := m.readThread(ctx, &in, t, &rep); err != nil {
					return err
				}
				in.ReadAt[t.c.ID] = ledger.T(now)
			}
			n, err := m.tellAssumptions(ctx, t.issue, t.c.ID)
			rep.Told += n
			if err != nil {
				return err
			}
		}
		for id := range in.Threads {
			if !live[id] {
				delete(in.Threads, id) // closed: never read again
			}
		}
		for id := range in.ReadAt {
			if !live[id] {
				delete(in.ReadAt, id)
			}
		}
		return nil
	})
	rep.Skipped = skipped
	return rep, err
}

// thread is an open clarification with a Slack thread.
type thread struct {
	issue int
	c     *ledger.Clarification
	th    *chanref.SlackThread
}

// openThreads are the open clarifications (of the issues the open index
// lists) whose Slack thread has its first message.
func (m *Mode) openThreads() ([]thread, error) {
	issues, err := m.Hub.Store.IssuesWithFile(ledger.IndexDir)
	if err != nil {
		return nil, err
	}
	var out []thread
	for _, n := range issues {
		l, err := m.Hub.Store.Read(n)
		if err != nil {
			return nil, err
		}
		for _, c := range l.Clarifications {
			if c.Status.Final() {
				continue
			}
			th, err := chanref.SlackThreadOf(c)
			if err != nil {
				return nil, err
			}
			if th != nil && th.TS != "" {
				out = append(out, thread{issue: n, c: c, th: th})
			}
		}
	}
	return out, nil
}

// unshared are the threads whose ts no other open clarification has: a
// reply in a shared thread would be read for each, so such a thread is
// read for none of them, and said (Warn).
func (m *Mode) unshared(open []thread) []thread {
	by := map[string][]string{}
	for _, t := range open {
		by[t.th.TS] = append(by[t.th.TS], t.c.ID)
	}
	out := open[:0:0]
	for _, t := range open {
		ids := by[t.th.TS]
		if len(ids) == 1 {
			out = append(out, t)
		} else if ids[0] == t.c.ID && m.Warn != nil {
			m.Warn(fmt.Errorf("the Slack thread %s is recorded for %s: its replies are read for none of them (`agentx clarify show` shows them; answer from a shell)", t.th.TS, strings.Join(ids, " and ")))
		}
	}
	return out
}

// readThread reads the replies of one thread after the last one read and
// takes them in order.
func (m *Mode) readThread(ctx context.Context, in *Inbound, t thread, rep *PollReport) error {
	th := t.th
	ms, err := m.Client.Replies(ctx, th.Channel, th.TS, in.Threads[t.c.ID])
	if err != nil {
		return err
	}
	for _, msg := range ms {
		if msg.TS == th.TS {
			continue // the thread's first message: agentx's
		}
		rep.Replies++
		h, err := m.Take(ctx, t.issue, t.c.ID, th, msg, slices.Contains(in.Told, msg.TS))
		if err != nil {
			return err // read again next time (what was taken is in the ledger, once)
		}
		if h != nil {
			rep.Handled = append(rep.Handled, *h)
			if h.Outcome != Taken && !slices.Contains(in.Told, msg.TS) {
				in.Told = append(in.Told, msg.TS)
				if len(in.Told) > maxTold {
					in.Told = in.Told[len(in.Told)-maxTold:]
				}
			}
		}
		in.Threads[t.c.ID] = msg.TS
	}
	return nil
}

// allowed reports whether a Slack user may answer: one of [slack]
// answerers.
func (m *Mode) allowed(user string) bool { return slices.Contains(m.Config.Answerers, user) }

// Take acts on one reply in the thread of clarification id: bots' and
// agentx's own messages (its metadata, its bot id: a bot's message; its
// bot user: Client.Self), edits and other events are ignored (nil); a
// reply picking an option (ParseReply) goes to the hub as that option; an
// allowed person's reply answers the current round (another answer of it
// once answered: people clarify in several messages) or, on an escalated
// clarification, settles it, through the hub as the person slack:USER,
// once however many processes read it (the reply's ts is recorded in the
// same ledger write). A stranger's reply is ignored, and they are told so
// (an ephemeral notice only they see), unless told already. An error is a
// local or Slack failure: the reply is read again next time.
func (m *Mode) Take(ctx context.Context, issue int, id string, th *chanref.SlackThread, msg Message, told bool) (*Handled, error) {
	if !personal(msg.Bot, msg.SubType) || msg.Meta != nil || msg.User == "" {
		return nil, nil
	}
	self, err := m.Client.Self(ctx)
	if err != nil {
		return nil, err
	}
	if self.Is(msg) {
		// agentx's own bot user (every agent may hold its token) is never
		// a person, whatever [slack] answerers says.
		return nil, nil
	}
	h := &Handled{TS: msg.TS, User: msg.User, ID: id}
	notice := func(out Outcome, why string) (*Handled, error) {
		h.Outcome, h.Reason = out, why
		if told {
			return h, nil
		}
		if err := m.Client.Ephemeral(ctx, th.Channel, msg.User, th.TS, Notice(why)); err != nil && m.Warn != nil {
			m.Warn(err)
		}
		return h, nil
	}
	if !m.allowed(msg.User) {
		return notice(Ignored, "only the people listed in [slack] answerers answer here")
	}
	cur, err := m.Hub.Store.Get(id)
	if err != nil {
		return nil, err
	}
	r, perr := ParseReply(msg.Text, router.Options(cur))
	if errors.Is(perr, ErrEmpty) {
		return nil, nil
	}
	if perr != nil {
		return notice(Refused, perr.Error())
	}
	h.Option = r.Option
	person := PersonPrefix + msg.User
	ctx = router.WithCaller(ctx, &router.Caller{Via: "Slack", Person: func() (string, error) { return person, nil }})
	ctx = router.WithOnce(ctx, &router.Once{
		Done: func(l *ledger.Ledger) (bool, error) { return hasReply(l, msg.TS) },
		Mark: func(c *ledger.Clarification) error {
			rec, err := chanref.SlackThreadOf(c)
			if err != nil {
				return err
			}
			if rec == nil {
				rec = &chanref.SlackThread{Channel: th.Channel, TS: th.TS}
			}
			rec.Posts = append(rec.Posts, chanref.SlackPost{Entry: len(c.Thread) - 1, TS: msg.TS, Inbound: true})
			return chanref.SetSlackThread(c, rec)
		},
	})
	if cur.Status == ledger.Escalated {
		h.Verb = "resolve"
		_, err = m.Hub.ResolveReply(ctx, id, ledger.Human, r)
	} else {
		h.Verb = "answer"
		_, err = m.Hub.AnswerReply(ctx, id, ledger.Human, r)
	}
	var skipped *router.SkippedError
	switch {
	case err == nil, errors.As(err, &skipped) && skipped.Reason == router.OnceDone:
		h.Outcome = Taken
		return h, nil
	case relay.Refusable(err):
		return notice(Refused, refusal(id, err))
	}
	return nil, err
}

// hasReply reports whether any clarification of l records the reply ts.
func hasReply(l *ledger.Ledger, ts string) (bool, error) {
	for _, c := range l.Whole() { // a closed record may hold it
		th, err := chanref.SlackThreadOf(c)
		if err != nil {
			return false, fmt.Errorf("%s: %w", words.Issue(l.IssueNumber), err)
		}
		if th != nil && slices.ContainsFunc(th.Posts, func(p chanref.SlackPost) bool { return p.Inbound && p.TS == ts }) {
			return true, nil
		}
	}
	return false, nil
}

// refusal words why a reply was not taken.
func refusal(id string, err error) string {
	var te *ledger.TransitionError
	if errors.As(err, &te) && te.From.Final() {
		return fmt.Sprintf("%s is already %s", id, te.From)
	}
	var in *ledger.InputError
	if errors.As(err, &in) && in.Limit > 0 {
		return fmt.Sprintf("%v: nothing was recorded; reply again in at most %d bytes (put the detail in a file or the issue and name it)", err, in.Limit)
	}
	return err.Error()
}

// tellAssumptions posts in the thread of clarification id the asker's
// assumptions it has not been told of, each recorded (agentx.slack
// assumed) as soon as it is posted; the thread is read only to recover a
// post whose result was lost (relay.Posting).
func (m *Mode) tellAssumptions(ctx context.Context, issue int, id string) (told int, err error) {
	c, err := m.Hub.Store.Get(id)
	if err != nil || c.X == nil {
		return 0, err
	}
	th, err := chanref.SlackThreadOf(c)
	if err != nil || th == nil || th.Assumed >= len(c.X.Assumptions) {
		return 0, err
	}
	p, err := m.poster(issue)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, p.Finish(ctx)) }()
	var ms []Message
	for k := th.Assumed; k < len(c.X.Assumptions); k++ {
		key := fmt.Sprintf("%s/assumption-%d", id, k)
		posted := false
		if p.Lost(key) {
			if ms == nil {
				if ms, err = m.Client.Replies(ctx, th.Channel, th.TS, ""); err != nil {
					return told, err
				}
			}
			posted = slices.ContainsFunc(ms, func(msg Message) bool {
				return msg.Bot && msg.Meta != nil && msg.Meta.ID == id && msg.Meta.Entry < 0 && msg.Meta.Assumption == k
			})
		}
		if !posted {
			if _, err := p.post(ctx, key, th.Channel, th.TS, RenderAssumption(c, k), Meta{ID: id, Entry: -1, Assumption: k}); err != nil {
				return told, err
			}
			told++
		}
		if _, err := m.Hub.Store.Update(ctx, issue, func(l *ledger.Ledger) error {
			cl := l.Find(id)
			if cl == nil {
				return nil
			}
			rec, err := chanref.SlackThreadOf(cl)
			if err != nil || rec == nil || rec.Assumed >= k+1 {
				return err
			}
			rec.Assumed = k + 1
			return chanref.SetSlackThread(cl, rec)
		}); err != nil {
			return told, err
		}
		p.Recorded(key)
	}
	return told, nil
}
