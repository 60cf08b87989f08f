package ghmirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
	"github.com/agentx-cli/agentx/workflow"
)

// PersonPrefix marks a person's name that is a GitHub login: a comment by
// alice is recorded as the person github:alice.
const PersonPrefix = "github:"

// The labels that follow an issue's clarifications.
const (
	LabelActive    = "clarification:active"
	LabelStale     = "clarification:stale"
	LabelEscalated = "clarification:escalated"
)

// Receipt is the reaction agentx leaves on a comment it took.
const Receipt = "+1"

// Mirror is GitHub mode over one workspace's hub.
type Mirror struct {
	Hub    *router.Hub
	Config *workflow.GitHubConfig
	Client *Client
	// Warn receives problems that do not stop the work (a reaction that
	// could not be added).
	Warn func(error)

	busy sync.Mutex // held by the Side reading or mirroring (see Side)
}

func (m *Mirror) now() time.Time { return m.Hub.Store.Now() }

func (m *Mirror) warn(err error) {
	if m.Warn != nil && err != nil {
		m.Warn(err)
	}
}

// Labels are the status labels an issue's clarifications call for: active
// while any is open, stale while any is stale, escalated while any is
// escalated; none once all are closed.
func Labels(cs []*ledger.Clarification) []string {
	var active, stale, escalated bool
	for _, c := range cs {
		switch c.Status {
		case ledger.Stale:
			stale, active = true, true
		case ledger.Escalated:
			escalated, active = true, true
		case ledger.Pending, ledger.Answered:
			active = true
		}
	}
	out := []string{}
	if active {
		out = append(out, LabelActive)
	}
	if stale {
		out = append(out, LabelStale)
	}
	if escalated {
		out = append(out, LabelEscalated)
	}
	return out
}

// refAt is the GitHub comment recorded for entry i among refs, or nil.
func refAt(refs []chanref.GitHubRef, i int) *chanref.GitHubRef {
	for k := range refs {
		if refs[k].Entry == i && refs[k].Comment > 0 {
			return &refs[k]
		}
	}
	return nil
}

// setRef records ref as the comment of its entry of c.
func setRef(c *ledger.Clarification, ref chanref.GitHubRef) error {
	refs, err := chanref.GitHubRefs(c)
	if err != nil {
		return err
	}
	k := slices.IndexFunc(refs, func(r chanref.GitHubRef) bool { return r.Entry == ref.Entry })
	if k >= 0 {
		refs[k] = ref
	} else {
		refs = append(refs, ref)
	}
	return chanref.SetGitHubRefs(c, refs)
}

// trusted reports whether a comment's metadata may be believed: its author
// has write access to the repository, or is a bot (an app, Actions). A
// stranger's comment that copies the metadata is not taken for agentx's.
func trusted(c Comment) bool {
	return c.Bot || writeAccess(c.Association)
}

func writeAccess(assoc string) bool {
	switch assoc {
	case "OWNER", "MEMBER", "COLLABORATOR":
		return true
	}
	return false
}

// mentionsFor are the people a comment for entry e of c @mentions: the
// configured ones, on a question to a person and on an escalation.
func (m *Mirror) mentionsFor(c *ledger.Clarification, e ledger.ThreadEntry) []string {
	if e.Type == ledger.Escalation || (e.Type == ledger.Question && c.To == ledger.Human) {
		return m.Config.Mention
	}
	return nil
}

// card is c's decision card for its question's comment, when c records
// the context it came with (a question asked before it was recorded has
// none, and keeps the comment it was posted with); nil otherwise. all are
// the issue's clarifications, for the decisions made before it.
func (m *Mirror) card(issue int, c *ledger.Clarification, all []*ledger.Clarification) *brief.Card {
	if c.X == nil || c.X.Context == nil {
		return nil
	}
	return brief.Build(m.Hub.Source(), issue, c, all)
}

// IssueReport is what syncing one issue did.
type IssueReport struct {
	Issue   int      `json:"issue"`
	Posted  int      `json:"posted"`            // comments created
	Found   int      `json:"found"`             // comments posted before but not recorded (a crash), recorded now
	Edited  int      `json:"edited"`            // comments whose rendering changed
	Labels  []string `json:"labels"`            // the status labels it carries now
	Pending int      `json:"pending,omitempty"` // entries still not mirrored
	Error   string   `json:"error,omitempty"`
}

// SyncIssue brings GitHub issue n up to its ledger: one comment per thread
// entry, in order, each recorded in the ledger (agentx.github) as soon as
// it is posted, and the status labels. The ledger says what is posted: the
// issue's comments are listed only to recover a post whose result was lost
// (poster.found), so that a process that died between posting and
// recording, or never got GitHub's answer, does not post twice. Then the
// enhancement proposals naming n (syncProposals). prev are the labels
// agentx set before (nil: none); SyncIssue returns the report with the
// labels now set.
func (m *Mirror) SyncIssue(ctx context.Context, n int, prev []string) (rep IssueReport, err error) {
	rep = IssueReport{Issue: n, Labels: prev}
	l, err := m.Hub.Store.Read(n)
	if err != nil {
		return rep, err
	}
	p, err := m.poster(n)
	if err != nil {
		return rep, err
	}
	defer func() { err = errors.Join(err, p.Finish(ctx)) }()
	type todo struct {
		key  entryKey
		text string
		ref  *chanref.GitHubRef
	}
	var work []todo
	for _, c := range l.Clarifications {
		refs, err := chanref.GitHubRefs(c)
		if err != nil {
			return rep, err
		}
		card := m.card(n, c, l.Clarifications)
		for i, e := range c.Thread {
			ref := refAt(refs, i)
			if ref != nil {
				p.recorded(entryKey{c.ID, i})
			}
			if ref != nil && ref.Inbound {
				continue // a person's own comment carries it
			}
			text := Render(n, c, i, m.mentionsFor(c, e), card)
			if ref != nil && ref.Sum == Sum(text) {
				continue
			}
			work = append(work, todo{key: entryKey{c.ID, i}, text: text, ref: ref})
		}
	}
	for k, w := range work {
		rep.Pending = len(work) - k
		if w.ref != nil {
			if err := m.Client.Edit(ctx, w.ref.Comment, w.text); err != nil {
				return rep, err
			}
			if err := m.record(ctx, n, w.key.id, chanref.GitHubRef{Entry: w.key.entry, Comment: w.ref.Comment, Sum: Sum(w.text)}); err != nil {
				return rep, err
			}
			rep.Edited++
			continue
		}
		id, found, err := p.found(ctx, w.key)
		if err != nil {
			return rep, err
		}
		sum := ""
		if found {
			// Posted, perhaps rendered otherwise then: recorded without a
			// digest, it is edited on the next sync.
			rep.Found++
		} else {
			got, err := p.create(ctx, w.key, w.text)
			if err != nil {
				return rep, err
			}
			id, sum = got.ID, Sum(w.text)
			rep.Posted++
		}
		if err := m.record(ctx, n, w.key.id, chanref.GitHubRef{Entry: w.key.entry, Comment: id, Sum: sum}); err != nil {
			return rep, err
		}
		p.recorded(w.key)
	}
	rep.Pending = 0
	if err := m.syncProposals(ctx, n, &rep, p); err != nil {
		return rep, err
	}
	labels, err := m.label(ctx, n, Labels(l.Clarifications), prev)
	rep.Labels = labels
	return rep, err
}

// entryKey names one thread entry of one clarification (or one entry of a
// proposal).
type entryKey struct {
	id    string
	entry int
}

func (k entryKey) String() string { return fmt.Sprintf("%s/%d", k.id, k.entry) }

// poster posts the comments of one issue, noting each post before it is
// made (relay.Poster), so that the issue's comments are listed only when
// a post was begun and never seen recorded.
type poster struct {
	*relay.Poster
	m      *Mirror
	n      int
	posted map[entryKey]int64 // what agentx posted on the issue, once listed
}

func (m *Mirror) poster(n int) (*poster, error) {
	p, err := relay.PostingIn(m.Hub.Store.Dir(), Dir).For(n)
	if err != nil {
		return nil, err
	}
	return &poster{Poster: p, m: m, n: n}, nil
}

// found is the comment agentx posted for k before it could record it: only
// for a post begun and not recorded is the issue listed (once, every page).
func (p *poster) found(ctx context.Context, k entryKey) (int64, bool, error) {
	if !p.Lost(k.String()) {
		return 0, false, nil
	}
	if p.posted == nil {
		var err error
		if p.posted, err = p.m.postedOn(ctx, p.n); err != nil {
			return 0, false, err
		}
	}
	id, ok := p.posted[k]
	return id, ok, nil
}

// create notes the post of k, then makes it.
func (p *poster) create(ctx context.Context, k entryKey, text string) (Comment, error) {
	var c Comment
	err := p.Post(ctx, k.String(), func() error {
		var err error
		if c, err = p.m.Client.Create(ctx, p.n, text); err == nil && crashAfterPost != nil {
			err = crashAfterPost()
		}
		return err
	}, refused)
	return c, err
}

// recorded says k's comment is in the record now.
func (p *poster) recorded(k entryKey) { p.Recorded(k.String()) }

// postedOn maps the entries agentx has posted on issue n (by their
// metadata, on comments by trusted authors) to their comments.
func (m *Mirror) postedOn(ctx context.Context, n int) (map[entryKey]int64, error) {
	cs, err := m.Client.IssueComments(ctx, n)
	if err != nil {
		return nil, err
	}
	out := map[entryKey]int64{}
	for _, c := range cs {
		if meta, ok := ParseMeta(c.Body); ok && meta.Entry != nil && trusted(c) {
			if _, dup := out[entryKey{meta.ID, *meta.Entry}]; !dup {
				out[entryKey{meta.ID, *meta.Entry}] = c.ID
			}
		}
	}
	return out, nil
}

// crashAfterPost, in tests, stops a sync between posting a comment and
// recording it, as a process killed there would.
var crashAfterPost func() error

// record writes the comment of one entry into the ledger: no status
// changes, so no event.
func (m *Mirror) record(ctx context.Context, n int, id string, ref chanref.GitHubRef) error {
	_, err := m.Hub.Store.Update(ctx, n, func(l *ledger.Ledger) error {
		c := l.Find(id)
		if c == nil || ref.Entry >= len(c.Thread) {
			return fmt.Errorf("github: %s entry %d: %w", id, ref.Entry, ledger.ErrNotFound)
		}
		return setRef(c, ref)
	})
	return err
}

// label sets the status labels want on issue n, given those agentx set
// before (prev): adds what is missing, removes what agentx set and is no
// longer wanted (never a label someone else set). It returns the labels
// now set.
func (m *Mirror) label(ctx context.Context, n int, want, prev []string) ([]string, error) {
	var add []string
	for _, l := range want {
		if !slices.Contains(prev, l) {
			add = append(add, l)
		}
	}
	if len(add) > 0 {
		if err := m.Client.AddLabels(ctx, n, add); err != nil {
			return prev, err
		}
	}
	now := slices.Clone(want)
	for i, l := range prev {
		if slices.Contains(want, l) {
			continue
		}
		if err := m.Client.RemoveLabel(ctx, n, l); err != nil {
			for _, p := range prev[i:] { // still set: removed next time
				if !slices.Contains(now, p) {
					now = append(now, p)
				}
			}
			return now, err
		}
	}
	return now, nil
}

// issueKey is an issue number as a JSON object key.
func issueKey(n int) string { return relay.IssueKey(n) }
