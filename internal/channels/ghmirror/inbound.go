package ghmirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/channels/chanref"
	"github.com/agentx-cli/agentx/internal/channels/relay"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// Outcome is what became of one comment.
type Outcome string

// The outcomes a poll reports.
const (
	Taken   Outcome = "taken"   // the answer or decision is in the ledger (reaction added)
	Refused Outcome = "refused" // not taken; a reply says why
	Ignored Outcome = "ignored" // not for agentx (a plain comment nobody waits for, a stranger's plain comment)
)

// Handled is one comment a poll acted on.
type Handled struct {
	Comment int64   `json:"comment"`
	Issue   int     `json:"issue"`
	Login   string  `json:"login"`
	ID      string  `json:"id,omitempty"`     // the clarification
	Verb    string  `json:"verb,omitempty"`   // answer or resolve
	Option  int     `json:"option,omitempty"` // the option the command picked, from 1
	Outcome Outcome `json:"outcome"`          // taken or refused
	Reason  string  `json:"reason,omitempty"` // why it was refused
}

// PollReport is what one inbound read did.
type PollReport struct {
	Read        bool      `json:"read"`        // GitHub was asked (not throttled, not busy)
	NotModified bool      `json:"notModified"` // GitHub said nothing changed (a 304: no rate limit spent)
	Comments    int       `json:"comments"`    // comments read
	Handled     []Handled `json:"handled"`     // the commands among them
	Skipped     string    `json:"skipped,omitempty"`
}

// maxSeen bounds the comments remembered at the since instant; advanceAt
// is the listing length at which since moves up.
const (
	firstLook = 24 * time.Hour // how far back the first read in a workspace looks
	maxSeen   = 500
	advanceAt = 50
)

// Poll reads the repository's new issue comments, at most once per
// interval (force: now), with a conditional request, and takes the
// commands among them (Take). Processes polling at once leave it to one
// (ErrBusy for the others, unless force).
func (m *Mirror) Poll(ctx context.Context, force bool) (PollReport, error) {
	rep := PollReport{Handled: []Handled{}}
	now := m.now()
	r := &relay.Reader{File: m.file(InboundFile), Service: "GitHub", Interval: m.Config.Interval.Duration}
	var in Inbound
	skipped, err := r.Read(ctx, now, &in, &in.Throttle, force, func() error {
		if in.Since == nil && in.Polled == nil {
			// The first read in a workspace: older comments are history,
			// not commands to it.
			t := ledger.T(now.Add(-firstLook))
			in.Since = &t
		}
		var since time.Time
		if in.Since != nil {
			since = in.Since.Time
		}
		rep.Read = true
		cs, etag, notModified, err := m.Client.ListSince(ctx, since, in.ETag)
		if err != nil {
			return err
		}
		if notModified {
			rep.NotModified = true
			return nil
		}
		rep.Comments = len(cs)
		replied := map[int64]bool{}
		for _, c := range cs {
			if meta, ok := ParseMeta(c.Body); ok && meta.Reply > 0 && trusted(c) {
				replied[meta.Reply] = true
			}
		}
		done := slices.Clone(in.Seen)
		for _, c := range cs {
			if slices.Contains(in.Seen, c.ID) {
				continue
			}
			h, err := m.Take(ctx, c, replied[c.ID])
			if err != nil {
				// Stop here: this comment and the rest are read again next
				// time (what was taken is in the ledger, once).
				in.Seen, in.ETag = done, ""
				return err
			}
			if h != nil {
				rep.Handled = append(rep.Handled, *h)
			}
			done = append(done, c.ID)
		}
		// A short listing keeps its since, so that the same read again is
		// a 304 (GitHub tags the answer to one URL); a long one moves since
		// up to its newest comment.
		if len(cs) < advanceAt {
			in.Seen, in.ETag = done, etag
			return nil
		}
		last := cs[len(cs)-1].Updated
		u := ledger.T(last)
		in.Since, in.Seen, in.ETag = &u, nil, ""
		for _, c := range cs {
			if c.Updated.Equal(last) && len(in.Seen) < maxSeen {
				in.Seen = append(in.Seen, c.ID)
			}
		}
		return nil
	})
	rep.Skipped = skipped
	return rep, err
}

// allowed reports whether a comment's author may answer and resolve: one
// of [github] answerers, else an owner, member or collaborator of the
// repository.
func (m *Mirror) allowed(c Comment) bool {
	if len(m.Config.Answerers) > 0 {
		return slices.ContainsFunc(m.Config.Answerers, func(a string) bool { return strings.EqualFold(a, c.Login) })
	}
	return writeAccess(c.Association)
}

// Take acts on one comment: agentx's own comments and bots' are ignored
// (nil), and a command written from agentx's own account (Client.Self) is
// refused whoever is allowed; an option a command picks (relay.PickReply)
// goes to the hub as that option; an allowed person's /answer or /resolve
// goes to the hub as the
// person github:LOGIN, once however many processes read it (the comment's
// id is recorded in the same ledger write), and gets a reaction; a plain
// reply answers the one clarification on its issue waiting on a person, if
// exactly one is and its question was mirrored before the reply. A command
// that cannot be taken gets a short reply saying why (unless replied, the
// reply exists already). An error is a local or GitHub failure: the
// comment is read again next time.
func (m *Mirror) Take(ctx context.Context, c Comment, replied bool) (*Handled, error) {
	if _, ours := ParseMeta(c.Body); ours || c.Bot || c.Issue <= 0 || c.ID <= 0 {
		return nil, nil
	}
	cmd, perr := ParseCommand(c.Body)
	if errors.Is(perr, ErrNotCommand) {
		return nil, nil
	}
	self, err := m.Client.Self(ctx)
	if err != nil {
		return nil, err
	}
	own := self != "" && strings.EqualFold(c.Login, self)
	h := &Handled{Comment: c.ID, Issue: c.Issue, Login: c.Login, ID: cmd.ID, Verb: string(cmd.Verb)}
	if cmd.Verb == VerbPlain {
		if own || !m.allowed(c) {
			return nil, nil // agentx's own account, or a stranger's remark: nobody asked them
		}
		id, err := m.waitingOnPerson(c)
		if err != nil || id == "" {
			return nil, err
		}
		h.ID, h.Verb, cmd.ID, cmd.Verb = id, string(VerbAnswer), id, VerbAnswer
	}
	refuse := func(why string) (*Handled, error) {
		h.Outcome, h.Reason = Refused, why
		if replied || !ValidLogin(c.Login) {
			return h, nil
		}
		_, err := m.Client.Create(ctx, c.Issue, Reply(c.ID, c.Login, why))
		return h, err
	}
	switch {
	case own:
		// Every agent may hold the token: what it writes is never a
		// person's, whatever [github] answerers says.
		return refuse(fmt.Sprintf("%s is agentx's own account (the token agents use), and agentx's account is never a person: a person answers from their own account", c.Login))
	case perr != nil:
		return refuse(perr.Error())
	case !m.allowed(c):
		who := "owners, members and collaborators of the repository"
		if len(m.Config.Answerers) > 0 {
			who = "the people listed in [github] answerers"
		}
		return refuse(fmt.Sprintf("only %s answer and resolve clarifications here", who))
	}
	if issue, _, _ := ledger.ParseID(cmd.ID); issue != c.Issue {
		return refuse(fmt.Sprintf("%s belongs to issue #%d: answer it there", cmd.ID, issue))
	}
	person := PersonPrefix + c.Login
	ctx = router.WithCaller(ctx, &router.Caller{Via: "GitHub", Person: func() (string, error) { return person, nil }})
	ctx = router.WithOnce(ctx, &router.Once{
		Done: func(l *ledger.Ledger) (bool, error) { return hasComment(l, c.ID) },
		Mark: func(cl *ledger.Clarification) error {
			return setRef(cl, chanref.GitHubRef{Entry: len(cl.Thread) - 1, Comment: c.ID, Inbound: true})
		},
	})
	var options []router.Option
	if cur, gerr := m.Hub.Store.Get(cmd.ID); gerr == nil {
		options = router.Options(cur)
	}
	r := relay.PickReply(cmd.Text, options)
	h.Option = r.Option
	if cmd.Verb == VerbResolve {
		_, err = m.Hub.ResolveReply(ctx, cmd.ID, ledger.Human, r)
	} else {
		_, err = m.Hub.AnswerReply(ctx, cmd.ID, ledger.Human, r)
	}
	var skipped *router.SkippedError
	switch {
	case err == nil, errors.As(err, &skipped) && skipped.Reason == router.OnceDone:
		h.Outcome = Taken
		m.warn(m.Client.React(ctx, c.ID, Receipt))
		return h, nil
	case relay.Refusable(err):
		return refuse(refusal(cmd, err))
	}
	return nil, err
}

// hasComment reports whether any clarification of l records comment id.
func hasComment(l *ledger.Ledger, id int64) (bool, error) {
	for _, c := range l.Whole() { // a closed record may hold it
		refs, err := chanref.GitHubRefs(c)
		if err != nil {
			return false, fmt.Errorf("issue #%d: %w", l.IssueNumber, err)
		}
		if slices.ContainsFunc(refs, func(g chanref.GitHubRef) bool { return g.Comment == id }) {
			return true, nil
		}
	}
	return false, nil
}

// waitingOnPerson is the one clarification on the comment's issue whose
// question to a person is pending or stale and was mirrored before the
// comment; "" when none or several are.
func (m *Mirror) waitingOnPerson(c Comment) (string, error) {
	l, err := m.Hub.Store.Read(c.Issue)
	if err != nil {
		return "", err
	}
	if done, err := hasComment(l, c.ID); done || err != nil {
		return "", err
	}
	var ids []string
	for _, cl := range l.Clarifications {
		if cl.To != ledger.Human || (cl.Status != ledger.Pending && cl.Status != ledger.Stale) {
			continue
		}
		q := -1
		for i := len(cl.Thread) - 1; i >= 0; i-- {
			if cl.Thread[i].Type == ledger.Question {
				q = i
				break
			}
		}
		refs, err := chanref.GitHubRefs(cl)
		if err != nil {
			return "", err
		}
		if ref := refAt(refs, q); q >= 0 && ref != nil && ref.Comment < c.ID {
			ids = append(ids, cl.ID)
		}
	}
	if len(ids) != 1 {
		return "", nil
	}
	return ids[0], nil
}

// refusal words why a command was not taken, with what to do instead.
func refusal(cmd Command, err error) string {
	var te *ledger.TransitionError
	if errors.As(err, &te) {
		switch {
		case te.From == ledger.Escalated && cmd.Verb == VerbAnswer:
			return fmt.Sprintf("%s is escalated: settle it with /resolve %s decision: ...", cmd.ID, cmd.ID)
		case te.From.Final():
			return fmt.Sprintf("%s is already %s", cmd.ID, te.From)
		}
	}
	if errors.Is(err, ledger.ErrNotFound) {
		return fmt.Sprintf("there is no clarification %s", cmd.ID)
	}
	var in *ledger.InputError
	if errors.As(err, &in) && in.Limit > 0 {
		return fmt.Sprintf("%v: nothing was recorded; comment again in at most %d bytes (put the detail in a file or the issue and name it)", err, in.Limit)
	}
	return err.Error()
}

// ValidLogin reports whether s has the shape of a GitHub login (or an
// app's, ending in [bot]).
func ValidLogin(s string) bool {
	s = strings.TrimSuffix(s, "[bot]")
	if s == "" || len(s) > 39 || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
