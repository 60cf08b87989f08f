package todo

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/eventlog"
	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// Kind is what waits on a person.
type Kind string

// The kinds of item, as --json names them.
const (
	KindQuestion    Kind = "question"    // a question to human, pending or stale
	KindEscalation  Kind = "escalation"  // a clarification agents could not settle
	KindEvaluation  Kind = "evaluation"  // work the supervisor gate escalated
	KindProposal    Kind = "proposal"    // an enhancement proposal waiting for a decision
	KindUndelivered Kind = "undelivered" // an answer its asker never picked up
	// KindReused is a question whose asker proceeds on an earlier decision
	// it reused (clarify assume --reuse) while it waits for the answer: a
	// person keeps it, or overturns it by answering.
	KindReused Kind = "reused"
)

// Item is one thing waiting on a person.
type Item struct {
	Kind     Kind   `json:"kind"`
	ID       string `json:"id"`              // CLR-N-SEQ or PROP-SEQ
	Issue    int    `json:"issue,omitempty"` // a clarification's issue
	Issues   []int  `json:"issues,omitempty"`
	Topic    string `json:"topic"`
	From     string `json:"from"` // who asked (an agent, agentx for the gate's proposals)
	To       string `json:"to,omitempty"`
	Status   string `json:"status"`
	Blocking bool   `json:"blocking,omitempty"`
	// Since is when it started waiting on a person; Due when it is late
	// (a question's SLA, an answer's delivery); Overdue when that passed.
	Since   ledger.Time  `json:"since"`
	Due     *ledger.Time `json:"due,omitempty"`
	Overdue bool         `json:"overdue,omitempty"`
	// Text is what to decide on: the question, the escalation's reason,
	// the proposal's action, the answer nobody picked up.
	Text      string            `json:"text"`
	Reason    string            `json:"reason,omitempty"`    // an escalation's reason
	Reuses    *ledger.Reuse     `json:"reuses,omitempty"`    // a reused decision: the one reused
	Positions []router.Position `json:"positions,omitempty"` // an escalation's two sides: the asker's, the asked's
	Options   []Option          `json:"options,omitempty"`
	// Settle is the one command that settles it; Actions every way to.
	Settle  string   `json:"settle"`
	Actions []Action `json:"actions"`
}

// Option is a numbered choice an item offers, and the command that picks it.
type Option struct {
	N       int    `json:"n"`
	Text    string `json:"text"`
	Command string `json:"command"`
	// NeedsText: picking it records the person's own words (a new decision).
	NeedsText bool `json:"needsText,omitempty"`
}

// Action is one way to settle an item.
type Action struct {
	Verb    string `json:"verb"` // answer, resolve, approve, reject; a reused decision's overturn, keep
	Command string `json:"command"`
}

// Filter narrows the queue.
type Filter struct {
	Issue *int // only this issue's items (a proposal's: the issues it names)
}

// List is everything in the workspace that waits on a person, most urgent
// first (see Sort). skipped are the issues or files it could not read; the
// rest is listed all the same.
func List(h *router.Hub, f Filter) (items []Item, skipped []error, err error) {
	store := h.Store
	now := store.Now()
	issues, err := store.OpenIssues()
	if err != nil {
		return nil, nil, err
	}
	for _, n := range issues {
		if f.Issue != nil && *f.Issue != n {
			continue
		}
		got, err := issueItems(store, n, now)
		if err != nil {
			skipped = append(skipped, fmt.Errorf("%s: %w", words.Issue(n), err))
			continue
		}
		items = append(items, got...)
	}
	book, err := proposal.Read(store)
	if err != nil {
		skipped = append(skipped, fmt.Errorf("proposals: %w", err))
	} else {
		for _, p := range book.Proposals {
			if p.Status == proposal.Pending && (f.Issue == nil || slices.Contains(p.Issues, *f.Issue)) {
				items = append(items, proposalItem(p))
			}
		}
	}
	Sort(items)
	return items, skipped, nil
}

// issueItems are the items of issue n: its open clarifications that wait
// on a person, read from the index first and the ledger only if one does.
func issueItems(store *ledger.Store, n int, now time.Time) ([]Item, error) {
	es, err := store.OpenEntries(n)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(es, func(e ledger.IndexEntry) bool { return waits(e, now) }) {
		return nil, nil
	}
	l, err := store.Read(n)
	if err != nil {
		return nil, err
	}
	var out []Item
	for _, e := range es {
		if !waits(e, now) {
			continue
		}
		c := l.Find(e.ID)
		if c == nil {
			continue
		}
		it, ok, err := ItemOf(store, n, c, now)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, it)
		}
	}
	return out, nil
}

// waits reports whether an index entry may be an item: a question to
// human or one whose asker reused a decision, an escalation, or an answer
// old enough to be undelivered.
func waits(e ledger.IndexEntry, now time.Time) bool {
	switch e.Status {
	case ledger.Pending, ledger.Stale:
		return e.To == ledger.Human || e.Reused
	case ledger.Escalated:
		return true
	case ledger.Answered:
		return !ledger.IsHuman(e.From) && now.Sub(e.Asked.Time) >= inbox.UndeliveredAfter
	}
	return false
}

// ItemOf is the item clarification c of issue n makes, if it waits on a
// person (ok false when it does not).
func ItemOf(store *ledger.Store, n int, c *ledger.Clarification, now time.Time) (it Item, ok bool, err error) {
	it = Item{
		ID: c.ID, Issue: n, Topic: c.Topic, From: c.From, To: c.To, Status: string(c.Status),
		Blocking: c.Blocking, Since: c.Created,
	}
	if q := c.Current(ledger.Question); q != nil {
		it.Since, it.Text = q.Timestamp, q.Body
	}
	if r := c.Reused(); r != nil {
		return reusedItem(it, c, r), true, nil
	}
	switch c.Status {
	case ledger.Pending, ledger.Stale:
		if c.To != ledger.Human {
			return it, false, nil
		}
		it.Kind = KindQuestion
		due := c.StaleAfter
		it.Due, it.Overdue = &due, c.Status == ledger.Stale || !now.Before(due.Time)
		it.Options = options(c, "answer")
		it.Actions = []Action{{Verb: "answer", Command: fmt.Sprintf("agentx clarify answer %s --body %q", c.ID, "...")}}
	case ledger.Escalated:
		it.Kind = KindEscalation
		it.Reason = c.EscalationReason()
		if e := c.Current(ledger.Escalation); e != nil {
			it.Since = e.Timestamp
		}
		if strings.HasPrefix(it.Reason, "evaluation:") {
			it.Kind = KindEvaluation
			it.Actions = []Action{{Verb: "resolve", Command: fmt.Sprintf("agentx clarify resolve %s --body %q", c.ID, "decision: ...")}}
			break
		}
		asker, asked := router.Positions(c)
		it.Positions = []router.Position{asker, asked}
		it.Options = options(c, "resolve")
		it.Actions = []Action{{Verb: "resolve", Command: fmt.Sprintf("agentx clarify resolve %s --body %q", c.ID, "decision: ...")}}
	case ledger.Answered:
		rs, err := inbox.Receipts(store, c)
		if err != nil {
			return it, false, err
		}
		i := slices.IndexFunc(rs, func(r inbox.Receipt) bool { return r.Overdue })
		if i < 0 {
			return it, false, nil
		}
		e := c.Thread[rs[i].Entry]
		it.Kind = KindUndelivered
		it.Since, it.Text = e.Timestamp, e.Body
		due := ledger.T(e.Timestamp.Add(inbox.UndeliveredAfter))
		it.Due, it.Overdue = &due, true
		it.Actions = []Action{{Verb: "resolve", Command: "agentx clarify resolve " + c.ID + " --from human"}}
	default:
		return it, false, nil
	}
	it.Settle = it.Actions[0].Command
	return it, true, nil
}

// reusedItem is the item of c, whose asker reused an earlier decision
// (r): a person keeps it, or overturns it by answering the question (as
// a person, whoever was asked), which reaches the asker as a late answer
// beside the reuse.
func reusedItem(it Item, c *ledger.Clarification, r *ledger.Assumption) Item {
	it.Kind = KindReused
	it.Since = r.Timestamp
	reuse := *r.Reuses
	it.Reuses = &reuse
	if c.To == ledger.Human {
		it.Options = options(c, "answer")
	}
	it.Actions = []Action{
		{Verb: "overturn", Command: fmt.Sprintf("agentx clarify answer %s --from human --body %q", c.ID, "...")},
		{Verb: "keep", Command: fmt.Sprintf("agentx clarify answer %s --from human --body %q", c.ID, KeepBody(reuse.ID))},
	}
	it.Settle = it.Actions[0].Command
	return it
}

// KeepBody is the answer that keeps a reused decision.
func KeepBody(decision string) string { return "Keep the decision of " + decision + "." }

// options are c's numbered options, each with the command (verb: answer
// or resolve) that picks it.
func options(c *ledger.Clarification, verb string) []Option {
	var out []Option
	for _, o := range router.Options(c) {
		cmd := fmt.Sprintf("agentx clarify %s %s --option %d", verb, c.ID, o.N)
		if o.NeedsBody() {
			cmd += fmt.Sprintf(" --body %q", "...")
		}
		out = append(out, Option{N: o.N, Text: o.Text, Command: cmd, NeedsText: o.NeedsBody()})
	}
	return out
}

func proposalItem(p *proposal.Proposal) Item {
	approve := "agentx proposals approve " + p.ID
	return Item{
		Kind: KindProposal, ID: p.ID, Issues: p.Issues, Topic: p.Title, From: p.CreatedBy,
		Status: string(p.Status), Since: p.Created, Text: p.Action, Reason: p.Rationale,
		Settle: approve,
		Actions: []Action{
			{Verb: "approve", Command: approve},
			{Verb: "reject", Command: fmt.Sprintf("agentx proposals reject %s --reason %q", p.ID, "...")},
		},
	}
}

// Sort orders the queue: what is overdue first (the longest overdue
// first), then the rest by when it fell or falls due, else by how long it
// has waited; ties by id.
func Sort(items []Item) {
	slices.SortStableFunc(items, func(a, b Item) int {
		if a.Overdue != b.Overdue {
			if a.Overdue {
				return -1
			}
			return 1
		}
		return cmp.Or(a.key().Compare(b.key()), cmpID(a.ID, b.ID))
	})
}

// key is when an item is or was due, or when it started waiting.
func (it Item) key() time.Time {
	if it.Due != nil {
		return it.Due.Time
	}
	return it.Since.Time
}

// cmpID compares ids by their numbers (CLR-9-002 before CLR-10-001).
func cmpID(a, b string) int {
	na, sa := idNums(a)
	nb, sb := idNums(b)
	return cmp.Or(strings.Compare(prefix(a), prefix(b)), cmp.Compare(na, nb), cmp.Compare(sa, sb), strings.Compare(a, b))
}

func prefix(id string) string { p, _, _ := strings.Cut(id, "-"); return p }

func idNums(id string) (int, int) {
	if n, s, err := ledger.ParseID(id); err == nil {
		return n, s
	}
	_, tail, _ := strings.Cut(id, "-")
	s, _ := strconv.Atoi(tail)
	return 0, s
}

// Settled says who settled an item, from the event that did (for a page
// that watches the queue): "answered by dana on Slack". "" for an event
// that settles nothing.
func Settled(e eventlog.Event) string {
	verb := ""
	switch e.Type {
	case eventlog.EventAnswered:
		verb = "answered"
	case eventlog.EventResolved:
		verb = "resolved"
	case eventlog.EventAbandoned:
		verb = "abandoned"
	case eventlog.EventFollowedUp:
		verb = "followed up"
	case eventlog.EventProposalApproved:
		verb = "approved"
	case eventlog.EventProposalRejected:
		verb = "rejected"
	default:
		return ""
	}
	if e.By == "" {
		return verb
	}
	return verb + " by " + Who(e.By)
}

// Who words an event's actor for people: human:slack:U1 is "U1 on
// Slack", human:github:octo "octo on GitHub", human:desk:dana "dana on the
// desk", human:dana "dana", an agent its name.
func Who(by string) string {
	name, ok := strings.CutPrefix(by, ledger.Human+":")
	if !ok {
		return by
	}
	for _, w := range []struct{ prefix, where string }{
		{"slack:", "Slack"}, {"github:", "GitHub"}, {DeskPrefix, "the desk"},
	} {
		if rest, ok := strings.CutPrefix(name, w.prefix); ok {
			return rest + " on " + w.where
		}
	}
	return name
}

// DeskPrefix begins the name of a person acting through the desk
// (desk:NAME), as slack: and github: begin theirs.
const DeskPrefix = "desk:"

// Ago words a duration for people: 45s, 12m, 3h5m, 2d4h.
func Ago(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}
