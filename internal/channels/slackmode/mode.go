package slackmode

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// PersonPrefix marks a person's name that is a Slack user id: a reply by
// U0123ABCD is recorded as the person slack:U0123ABCD.
const PersonPrefix = "slack:"

// The files Slack mode keeps, in .agentx/state/slack/ (relay.File).
const (
	Dir         = "slack"
	OutboxFile  = "outbox.json"
	InboundFile = "inbound.json"
	// HoldFile is the rate limit every process honours (relay.Hold).
	HoldFile = "hold.json"
)

// Mode is Slack mode over one workspace's hub.
type Mode struct {
	Hub    *router.Hub
	Config *workflow.SlackConfig
	Client *Client
	// Warn receives problems that do not stop the work (a notice that
	// could not be shown).
	Warn func(error)

	busy sync.Mutex // held by the Side reading or posting (see Side)
	// said is the time (Unix milliseconds, as inbound.json keeps it) this
	// listener last said it runs: its stop unsays only that.
	said atomic.Int64
}

func (m *Mode) file(name string) relay.File {
	return relay.FileIn(m.Hub.Store.Dir(), Dir, name)
}

// hold is the rate limit every process of the workspace honours
// (HoldFile): the client's, and its reader's and outbox's.
func (m *Mode) hold() *relay.Hold { return &relay.Hold{File: m.file(HoldFile)} }

func (m *Mode) outbox() *relay.Outbox {
	return &relay.Outbox{File: m.file(OutboxFile), Store: m.Hub.Store, Events: m.Hub.Events, Service: "Slack", NoIssue: true, Start: m.start, Hold: m.hold()}
}

// start lists the issues the first run in a workspace queues: those with
// open clarifications, and 0 when a pending proposal is not in the channel
// yet.
func (m *Mode) start() ([]int, error) {
	open, err := m.Hub.Store.IssuesWithFile(ledger.IndexDir)
	if err != nil {
		return nil, err
	}
	b, err := proposal.Read(m.Hub.Store)
	if err != nil {
		return nil, err
	}
	for _, p := range b.Proposals {
		if toPost(p) && (p.Mirror == nil || p.Mirror.Slack == nil) {
			return append(open, 0), nil
		}
	}
	return open, nil
}

// Outbox is what Slack mode still owes Slack.
type Outbox struct {
	relay.Queue
}

// rootOf is the thread entry that opens c's Slack thread: its first
// question when it asks a person, else its first escalation; -1 when c has
// no business in Slack.
func rootOf(c *ledger.Clarification) int {
	if c.To == ledger.Human {
		return firstQuestion(c)
	}
	for i, e := range c.Thread {
		if e.Type == ledger.Escalation {
			return i
		}
	}
	return -1
}

// IssueReport is what syncing one issue did.
type IssueReport struct {
	Issue   int    `json:"issue"`
	Posted  int    `json:"posted"`            // messages posted
	Found   int    `json:"found"`             // messages posted before but not recorded (a crash), recorded now
	Pending int    `json:"pending,omitempty"` // entries still not posted
	Error   string `json:"error,omitempty"`
}

// SyncIssue brings the Slack threads of issue n's clarifications up to the
// ledger: a thread for each question to a person and each escalation,
// every later entry in it, in order, each recorded in the ledger
// (agentx.slack) as soon as it is posted. The ledger says what is posted:
// the channel (for a thread's first message) or the thread (for the
// others) is read only to recover a post whose result was lost (a note in
// posting.json, relay.Posting), looked for by its metadata, so that a
// process that died between posting and recording, or never got Slack's
// answer, does not post twice. Issue 0 carries the enhancement proposals
// too (syncProposals).
func (m *Mode) SyncIssue(ctx context.Context, n int) (rep IssueReport, err error) {
	rep = IssueReport{Issue: n}
	l, err := m.Hub.Store.Read(n)
	if err != nil {
		return rep, err
	}
	p, err := m.poster(n)
	if err != nil {
		return rep, err
	}
	defer func() { err = errors.Join(err, p.Finish(ctx)) }()
	for _, c := range l.Clarifications {
		th, err := chanref.SlackThreadOf(c)
		if err != nil {
			return rep, err
		}
		if th != nil {
			for _, post := range th.Posts {
				p.Recorded(entryKey(c.ID, post.Entry))
			}
		}
		todo := unposted(c, th)
		rep.Pending += len(todo)
		if len(todo) == 0 {
			continue
		}
		root := rootOf(c)
		card := m.card(n, c, l.Clarifications)
		var found map[int]string
		for _, i := range todo {
			key := entryKey(c.ID, i)
			ts := ""
			if p.Lost(key) {
				if found == nil {
					if found, err = m.lookFor(ctx, c, th); err != nil {
						return rep, err
					}
				}
				ts = found[i]
				if ts != "" && i == root {
					if other, err := m.boundTo(ts, c.ID); err != nil {
						return rep, err
					} else if other != "" {
						ts = "" // Slack gave it another thread's ts: posted again
					}
				}
			}
			if ts != "" {
				rep.Found++
			} else {
				thread := ""
				if th != nil {
					thread = th.TS
				}
				if ts, err = p.post(ctx, key, m.channelOf(th), thread, Render(n, c, i, i == root, card), Meta{ID: c.ID, Entry: i}); err != nil {
					return rep, err
				}
				rep.Posted++
			}
			if th, err = m.record(ctx, n, c.ID, i, i == root, ts); err != nil {
				return rep, err
			}
			p.Recorded(key)
			if i == root {
				found = nil // the rest are looked for in the thread
			}
			rep.Pending--
		}
	}
	if n == 0 {
		if err := m.syncProposals(ctx, &rep, p); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// card is c's decision card for its question's message, when c records
// the context it came with; nil otherwise. all are the issue's
// clarifications, for the decisions made before it.
func (m *Mode) card(issue int, c *ledger.Clarification, all []*ledger.Clarification) *brief.Card {
	if c.X == nil || c.X.Context == nil {
		return nil
	}
	return brief.Build(m.Hub.Source(), issue, c, all)
}

// entryKey names the message of thread entry i of clarification id in the
// posting notes.
func entryKey(id string, i int) string { return fmt.Sprintf("%s/%d", id, i) }

// poster posts the messages of one issue, noting each before it is made
// (relay.Poster).
type poster struct {
	*relay.Poster
	m *Mode
}

func (m *Mode) poster(n int) (*poster, error) {
	p, err := relay.PostingIn(m.Hub.Store.Dir(), Dir).For(n)
	if err != nil {
		return nil, err
	}
	return &poster{Poster: p, m: m}, nil
}

// post notes the post for key, then makes it.
func (p *poster) post(ctx context.Context, key, channel, threadTS, text string, meta metadata) (string, error) {
	var ts string
	err := p.Post(ctx, key, func() error {
		var err error
		if ts, err = p.m.Client.Post(ctx, channel, threadTS, text, meta); err == nil && crashAfterPost != nil {
			err = crashAfterPost()
		}
		return err
	}, refused)
	return ts, err
}

// lookFor maps the thread entries of c that Slack shows agentx posted to
// their ts: in the channel since shortly before its thread's first entry
// when it has no thread yet, else in its thread.
func (m *Mode) lookFor(ctx context.Context, c *ledger.Clarification, th *chanref.SlackThread) (map[int]string, error) {
	if th == nil || th.TS == "" {
		since := c.Thread[rootOf(c)].Timestamp.Add(-10 * time.Minute)
		return m.postedIn(ctx, func() ([]Message, error) { return m.Client.History(ctx, m.Config.Channel, since) }, c.ID)
	}
	return m.postedIn(ctx, func() ([]Message, error) { return m.Client.Replies(ctx, th.Channel, th.TS, "") }, c.ID)
}

// SharedError is Slack giving a new thread's first message the ts of
// another clarification's thread: a reply there would be read for both,
// so the thread is not recorded, and the message is posted again later.
type SharedError struct {
	ID, TS, Other string
}

func (e *SharedError) Error() string {
	return fmt.Sprintf("slack: the message opening the thread of %s got ts %s, already the thread of %s: not shared; it is posted again on the next sync", e.ID, e.TS, e.Other)
}

// boundTo is the open clarification other than id whose thread is ts, or
// "".
func (m *Mode) boundTo(ts, id string) (string, error) {
	open, err := m.openThreads()
	if err != nil {
		return "", err
	}
	for _, t := range open {
		if t.th.TS == ts && t.c.ID != id {
			return t.c.ID, nil
		}
	}
	return "", nil
}

// channelOf is the channel of a thread, or the configured one for a new
// thread.
func (m *Mode) channelOf(th *chanref.SlackThread) string {
	if th != nil && th.Channel != "" {
		return th.Channel
	}
	return m.Config.Channel
}

// unposted are the thread entries of c that its Slack thread th still
// lacks, in order: from the entry that opens it on.
func unposted(c *ledger.Clarification, th *chanref.SlackThread) []int {
	root := rootOf(c)
	if root < 0 {
		return nil
	}
	var out []int
	for i := root; i < len(c.Thread); i++ {
		if th.Post(i) == nil {
			out = append(out, i)
		}
	}
	return out
}

// postedIn maps the thread entries of clarification id that list shows
// agentx posted (by their metadata, on bots' messages) to their ts.
func (m *Mode) postedIn(ctx context.Context, list func() ([]Message, error), id string) (map[int]string, error) {
	ms, err := list()
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for _, msg := range ms {
		if msg.Meta != nil && msg.Bot && msg.Meta.ID == id && msg.Meta.Entry >= 0 {
			if _, dup := out[msg.Meta.Entry]; !dup {
				out[msg.Meta.Entry] = msg.TS
			}
		}
	}
	return out, nil
}

// crashAfterPost, in tests, stops a sync between posting a message and
// recording it, as a process killed there would.
var crashAfterPost func() error

// record writes the message of entry i of clarification id into the
// ledger (no status changes, so no event) and returns the thread as
// recorded.
func (m *Mode) record(ctx context.Context, n int, id string, i int, root bool, ts string) (*chanref.SlackThread, error) {
	if root {
		if other, err := m.boundTo(ts, id); err != nil || other != "" {
			if err == nil {
				err = &SharedError{ID: id, TS: ts, Other: other}
			}
			return nil, err
		}
	}
	var th *chanref.SlackThread
	_, err := m.Hub.Store.Update(ctx, n, func(l *ledger.Ledger) error {
		c := l.Find(id)
		if c == nil || i >= len(c.Thread) {
			return fmt.Errorf("slack: %s entry %d: %w", id, i, ledger.ErrNotFound)
		}
		var err error
		if th, err = chanref.SlackThreadOf(c); err != nil {
			return err
		}
		if th == nil {
			th = &chanref.SlackThread{Channel: m.Config.Channel}
		}
		if root {
			th.TS = ts
		}
		if th.Post(i) == nil {
			th.Posts = append(th.Posts, chanref.SlackPost{Entry: i, TS: ts})
		}
		return chanref.SetSlackThread(c, th)
	})
	if err != nil {
		return nil, err
	}
	return th, nil
}

// PushReport is what one outbound run did.
type PushReport = relay.PushReport[IssueReport]

// Push posts what changed: the issues the event log says changed since
// the last run, and those queued, that are due (relay.Outbox.Run: backoff,
// rate limits, ErrBusy unless force). only adds issues whatever changed.
func (m *Mode) Push(ctx context.Context, force bool, only ...int) (PushReport, error) {
	var ob Outbox
	return relay.Push(ctx, m.outbox(), m.Hub.Store.Now(), &ob, &ob.Queue, force, only, func(ctx context.Context, n int) (IssueReport, error) {
		ir, err := m.SyncIssue(ctx, n)
		if err != nil {
			ir.Error = err.Error()
		}
		return ir, err
	})
}
