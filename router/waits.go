package router

import (
	"slices"
	"sort"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

// DefaultLongestOpen is how many of the longest open waits a digest lists
// unless told otherwise.
const DefaultLongestOpen = 5

// Waits is who waited on whom. A wait is a round's wait for its reply:
// from the round's question to the first answer, escalation or resolution
// of that round. A round that got one is replied; a round of a
// clarification still open that got none is open, and has waited until
// now so far; a round closed without a reply (abandoned, cancelled) is
// neither.
type Waits struct {
	Replied WaitFigures `json:"replied"` // every replied round
	Open    WaitFigures `json:"open"`    // every open round, until now
	// ByAsker and ByAnswerer are per agent: the asker, and the agent asked
	// (whoever replied for it); ByPerson the replied rounds whose first
	// reply a person gave (as human), by the name recorded with it
	// (agentx.people), human when none was. Each is most time waited
	// first, then by name.
	ByAsker    []AgentWaits  `json:"byAsker"`
	ByAnswerer []AgentWaits  `json:"byAnswerer"`
	ByPerson   []PersonWaits `json:"byPerson"`
	// LongestOpen is the open rounds that have waited longest, longest
	// first (at most Digest.Longest of them).
	LongestOpen []OpenWait `json:"longestOpen"`
}

// WaitFigures sums up a set of waits: how many, their median, their 90th
// percentile (the wait nine in ten were no longer than, by nearest rank)
// and their sum. All are zero when there are none.
type WaitFigures struct {
	Rounds int      `json:"rounds"`
	Median Duration `json:"median"`
	P90    Duration `json:"p90"`
	Total  Duration `json:"total"`
}

// AgentWaits is the waits of one agent, as asker or as answerer.
type AgentWaits struct {
	Agent   string      `json:"agent"`
	Replied WaitFigures `json:"replied"`
	Open    WaitFigures `json:"open"`
}

// PersonWaits is the waits a person ended with the first reply.
type PersonWaits struct {
	Person  string      `json:"person"`
	Replied WaitFigures `json:"replied"`
}

// OpenWait is a round still waiting for its reply.
type OpenWait struct {
	ID          string      `json:"id"`
	IssueNumber int         `json:"issueNumber"`
	From        string      `json:"from"`
	To          string      `json:"to"`
	Round       int         `json:"round"`
	Since       ledger.Time `json:"since"`  // the round's question
	Waited      Duration    `json:"waited"` // since then, until now
}

// waitSet is the waits of one group: the replied ones and the open ones.
type waitSet struct{ replied, open []time.Duration }

// waitDigest is the part of a Digest that measures waits, besides those
// it keeps per agent (agentTally).
type waitDigest struct {
	person  map[string][]time.Duration // the replied rounds, by the person who replied first
	longest []OpenWait                 // longest first, at most Digest.Longest
}

// roundWaits calls replied for each round of c that got a reply, with the
// round, how long it waited and the index in the thread of its first
// reply; then open, once, if c's last round is still waiting (c is not
// closed and that round has no reply), with its question. A round is the
// question entries of one round number, from the first; its reply is the
// first answer, escalation or resolution of that round after it. The
// resolution that abandoned c is no reply. A wait the clocks make negative
// is zero.
func roundWaits(c *ledger.Clarification, replied func(round int, waited time.Duration, reply int), open func(q *ledger.ThreadEntry)) {
	var q *ledger.ThreadEntry // the current round's question, while it has no reply
	round, answered := 0, true
	last := len(c.Thread) - 1
	for i := range c.Thread {
		e := &c.Thread[i]
		switch e.Type {
		case ledger.Question:
			if answered || e.Round != round {
				q, round, answered = e, e.Round, false
			}
		case ledger.Answer, ledger.Escalation, ledger.Resolution:
			if answered || e.Round != round {
				continue
			}
			if e.Type == ledger.Resolution && c.Status == ledger.Abandoned && i == last {
				continue // given up: no reply
			}
			answered = true
			replied(round, max(0, e.Timestamp.Sub(q.Timestamp.Time)), i)
		}
	}
	if !answered && !c.Status.Final() {
		open(q)
	}
}

// addWaits counts the waits of c's rounds, asked by from of to.
func (d *Digest) addWaits(issue int, c *ledger.Clarification, from, to *agentTally) {
	roundWaits(c, func(_ int, waited time.Duration, reply int) {
		from.asker.replied = append(from.asker.replied, waited)
		to.answerer.replied = append(to.answerer.replied, waited)
		if c.Thread[reply].From == ledger.Human {
			name := c.PersonAt(reply)
			if name == "" {
				name = ledger.Human
			}
			if d.waits.person == nil {
				d.waits.person = map[string][]time.Duration{}
			}
			d.waits.person[name] = append(d.waits.person[name], waited)
		}
	}, func(q *ledger.ThreadEntry) {
		waited := max(0, d.Now.Sub(q.Timestamp.Time))
		from.asker.open = append(from.asker.open, waited)
		to.answerer.open = append(to.answerer.open, waited)
		d.keepLongest(OpenWait{ID: c.ID, IssueNumber: issue, From: c.From, To: c.To, Round: q.Round, Since: q.Timestamp, Waited: Duration{waited}})
	})
}

// keepLongest keeps o if it is among the Longest longest open waits.
func (d *Digest) keepLongest(o OpenWait) {
	l := d.waits.longest
	if d.Longest <= 0 || len(l) == d.Longest && !longer(o, l[len(l)-1]) {
		return
	}
	i := sort.Search(len(l), func(i int) bool { return longer(o, l[i]) })
	if len(l) < d.Longest {
		l = append(l, OpenWait{})
	}
	copy(l[i+1:], l[i:])
	l[i] = o
	d.waits.longest = l
}

// longer orders open waits: the longest first, then by issue and id.
func longer(a, b OpenWait) bool {
	if a.Waited != b.Waited {
		return a.Waited.Duration > b.Waited.Duration
	}
	if a.IssueNumber != b.IssueNumber {
		return a.IssueNumber < b.IssueNumber
	}
	return a.ID < b.ID
}

// stats is the Waits of what was added; agents is the digest's.
func (w *waitDigest) stats(agents map[string]*agentTally) Waits {
	out := Waits{
		ByAsker: []AgentWaits{}, ByAnswerer: []AgentWaits{}, ByPerson: []PersonWaits{},
		LongestOpen: slices.Clone(w.longest),
	}
	var replied, open []time.Duration // every round has one asker
	for _, a := range agents {
		if s := a.asker; len(s.replied)+len(s.open) > 0 {
			replied, open = append(replied, s.replied...), append(open, s.open...)
			out.ByAsker = append(out.ByAsker, AgentWaits{Agent: a.Agent, Replied: figures(s.replied), Open: figures(s.open)})
		}
		if s := a.answerer; len(s.replied)+len(s.open) > 0 {
			out.ByAnswerer = append(out.ByAnswerer, AgentWaits{Agent: a.Agent, Replied: figures(s.replied), Open: figures(s.open)})
		}
	}
	out.Replied, out.Open = figures(replied), figures(open)
	sortAgentWaits(out.ByAsker)
	sortAgentWaits(out.ByAnswerer)
	for name, s := range w.person {
		out.ByPerson = append(out.ByPerson, PersonWaits{Person: name, Replied: figures(s)})
	}
	sort.Slice(out.ByPerson, func(i, j int) bool {
		a, b := out.ByPerson[i], out.ByPerson[j]
		return a.Replied.Total.Duration > b.Replied.Total.Duration || a.Replied.Total == b.Replied.Total && a.Person < b.Person
	})
	if out.LongestOpen == nil {
		out.LongestOpen = []OpenWait{}
	}
	return out
}

// sortAgentWaits puts the most time waited (replied and open) first, then
// orders by name.
func sortAgentWaits(out []AgentWaits) {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		ta, tb := a.Replied.Total.Duration+a.Open.Total.Duration, b.Replied.Total.Duration+b.Open.Total.Duration
		return ta > tb || ta == tb && a.Agent < b.Agent
	})
}

// figures sums up s, which it sorts: the order of a set of waits says
// nothing, so a digest's Stats may sort its own.
func figures(s []time.Duration) WaitFigures {
	if len(s) == 0 {
		return WaitFigures{}
	}
	slices.Sort(s)
	var total time.Duration
	for _, d := range s {
		total += d
	}
	return WaitFigures{Rounds: len(s), Median: Duration{sortedMedian(s)}, P90: Duration{percentile(s, 90)}, Total: Duration{total}}
}

// percentile is the p-th percentile of the sorted s, by nearest rank: the
// smallest value that p% of s are no larger than.
func percentile(s []time.Duration, p int) time.Duration {
	rank := (len(s)*p + 99) / 100 // ⌈n·p/100⌉
	return s[max(rank, 1)-1]
}
