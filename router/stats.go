package router

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/textsim"
	"github.com/agentx-cli/agentx/ledger"
)

// Stats is the digest of a set of clarifications.
type Stats struct {
	Total          int            `json:"total"`
	ByStatus       map[string]int `json:"byStatus"`
	ResolvedRate   float64        `json:"resolvedRate"`  // resolved / total
	EscalatedRate  float64        `json:"escalatedRate"` // ever escalated / total
	AvgRounds      float64        `json:"avgRoundsToResolution"`
	MaxRounds      int            `json:"maxRoundsToResolution"`
	MedianAnswer   Duration       `json:"medianTimeToAnswer"`  // first answer - created
	MedianResolve  Duration       `json:"medianTimeToResolve"` // resolvedAt - created
	Topics         []Count        `json:"topics"`              // most common topic words
	ByTopic        []Count        `json:"byTopic"`             // most common topics, grouped by TopicKey
	Pairs          []PairStats    `json:"pairs"`
	Agents         []AgentStats   `json:"agents"`
	AnsweredCount  int            `json:"answered"` // clarifications with at least one answer
	EscalatedCount int            `json:"escalated"`
	// Waits is who waited on whom: each round's wait for its reply, per
	// asker, answerer and person, and the longest open waits.
	Waits Waits `json:"waits"`
	// Proposals counts the enhancement proposals by status (pending,
	// approved, rejected, implemented); nil when there are none. The
	// command fills it: proposals are not clarifications.
	Proposals map[string]int `json:"proposals,omitempty"`
	// Refusals counts what the event log says was refused or failed with
	// nothing changed (CountRefusals); nil when nothing was.
	Refusals *Refusals `json:"refusals,omitempty"`
}

// Refusals counts the refusal events of a period (EventLog.EachRefusal).
type Refusals struct {
	Scope        int `json:"scope"`        // scope-refused: asks and writes a step's scope refused
	LockTimeouts int `json:"lockTimeouts"` // lock-timeout: writes that gave up waiting for an issue's lock
}

// CountRefusals counts the refusal events of log that match f; nil when
// there are none.
func CountRefusals(log EventLog, f EventFilter) (*Refusals, error) {
	var r Refusals
	err := log.EachRefusal(f, func(e Event) error {
		switch e.Type {
		case EventScopeRefused:
			r.Scope++
		case EventLockTimeout:
			r.LockTimeouts++
		}
		return nil
	})
	if err != nil || r == (Refusals{}) {
		return nil, err
	}
	return &r, nil
}

// Duration is a time span that JSON prints in seconds.
type Duration struct{ time.Duration }

// MarshalJSON writes whole seconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return strconv.AppendInt(nil, int64(d.Seconds()), 10), nil
}

// Count is a word and how often it appears.
type Count struct {
	Key   string `json:"key"`
	Count int    `json:"count"`
}

// PairStats counts what one agent asked another.
type PairStats struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Asked     int    `json:"asked"`
	Answered  int    `json:"answered"`
	Escalated int    `json:"escalated"`
}

// AgentStats is one agent's share.
type AgentStats struct {
	Agent      string  `json:"agent"`
	Asked      int     `json:"asked"`      // questions it asked
	Received   int     `json:"received"`   // questions asked of it
	AnswerRate float64 `json:"answerRate"` // share of those it (or a human for it) answered
}

// TopicWords normalises a topic into the words counted (textsim.TopicWords).
func TopicWords(topic string) []string { return textsim.TopicWords(topic) }

// TopicKey is what topics are grouped by (textsim.TopicKey): "Database
// adapter", "database-adapter" and "The database adapter?" are one topic.
func TopicKey(topic string) string { return textsim.TopicKey(topic) }

// maxTopicGroups bounds the distinct topics a digest counts: past it, a
// new topic is counted under otherTopics, so a ledger of a million
// distinct topics costs no more than this many.
const maxTopicGroups = 10000

// otherTopics is the group of the topics past maxTopicGroups.
const otherTopics = "(other topics)"

// ComputeStats digests recs, with the open rounds' waits measured until
// now and the DefaultLongestOpen longest of them listed. It is pure: the
// same records and now give the same figures.
func ComputeStats(recs []Record, now time.Time) Stats {
	d := Digest{Now: now, Longest: DefaultLongestOpen}
	for _, r := range recs {
		d.Add(r)
	}
	return d.Stats()
}

// Digest is ComputeStats one record at a time: it keeps counters, two
// durations per clarification and one per round asked, not the records,
// and of the open rounds only the Longest longest; so a digest of every
// ledger holds no ledger. The zero value is an empty digest that measures
// open waits until the zero time and lists none; Stats gives the same
// figures as ComputeStats of the records added, in that order, when Now
// and Longest are the same.
type Digest struct {
	Now     time.Time // open rounds have waited until then
	Longest int       // how many of the longest open waits Stats lists

	st                  Stats
	toAnswer, toResolve []time.Duration
	roundsSum, resolved int
	topics              map[string]int
	byTopic             map[string]*Count // by TopicKey: the first spelling seen, and the count
	pairs               map[[2]string]*PairStats
	agents              map[string]*agentTally
	waits               waitDigest
}

// agentTally is what a digest counts of one agent: its share, and the
// waits of the rounds it asked and of those asked of it.
type agentTally struct {
	AgentStats
	asker, answerer waitSet
}

func (d *Digest) agent(name string) *agentTally {
	a := d.agents[name]
	if a == nil {
		a = &agentTally{AgentStats: AgentStats{Agent: name}}
		d.agents[name] = a
	}
	return a
}

// Add counts r in the digest. It keeps nothing of r but the names of its
// agents and people, the words of its topic, the waits of its rounds and,
// if it is among the longest open waits, which round waits.
func (d *Digest) Add(r Record) {
	if d.topics == nil {
		d.topics, d.pairs, d.agents = map[string]int{}, map[[2]string]*PairStats{}, map[string]*agentTally{}
		d.byTopic = map[string]*Count{}
		d.st.ByStatus = map[string]int{}
	}
	st := &d.st
	c := r.Clarification
	st.Total++
	st.ByStatus[string(c.Status)]++
	key := [2]string{c.From, c.To}
	if d.pairs[key] == nil {
		d.pairs[key] = &PairStats{From: c.From, To: c.To}
	}
	p := d.pairs[key]
	p.Asked++
	from, to := d.agent(c.From), d.agent(c.To)
	from.Asked++
	to.Received++
	if a := firstOf(c, ledger.Answer); a != nil {
		st.AnsweredCount++
		p.Answered++
		to.AnswerRate++ // a count until Stats
		d.toAnswer = append(d.toAnswer, a.Timestamp.Sub(c.Created.Time))
	}
	if c.Status == ledger.Escalated || c.Current(ledger.Escalation) != nil {
		st.EscalatedCount++
		p.Escalated++
	}
	if c.Status == ledger.Resolved {
		d.resolved++
		d.roundsSum += c.Round
		st.MaxRounds = max(st.MaxRounds, c.Round)
		if c.ResolvedAt != nil {
			d.toResolve = append(d.toResolve, c.ResolvedAt.Sub(c.Created.Time))
		}
	}
	words := TopicWords(c.Topic)
	for _, w := range words {
		d.topics[w]++
	}
	tk := textsim.TopicKeyOf(c.Topic, words)
	g := d.byTopic[tk]
	if g == nil && len(d.byTopic) >= maxTopicGroups {
		tk = otherTopics
		g = d.byTopic[tk]
	}
	if g == nil {
		shown := strings.Join(strings.Fields(c.Topic), " ")
		if tk == otherTopics {
			shown = otherTopics
		}
		g = &Count{Key: shown}
		d.byTopic[tk] = g
	}
	g.Count++
	d.addWaits(r.IssueNumber, c, from, to)
}

// Stats is the digest of the records added so far. It leaves d's figures
// as they were (it sorts the waits d keeps, whose order says nothing).
func (d *Digest) Stats() Stats {
	st := d.st
	st.ByStatus = map[string]int{}
	for _, s := range ledger.Statuses {
		st.ByStatus[string(s)] = 0
	}
	for s, n := range d.st.ByStatus {
		st.ByStatus[s] = n
	}
	st.Topics, st.ByTopic, st.Pairs, st.Agents = []Count{}, []Count{}, []PairStats{}, []AgentStats{}
	if st.Total > 0 {
		st.ResolvedRate = float64(d.resolved) / float64(st.Total)
		st.EscalatedRate = float64(st.EscalatedCount) / float64(st.Total)
	}
	if d.resolved > 0 {
		st.AvgRounds = float64(d.roundsSum) / float64(d.resolved)
	}
	st.MedianAnswer = Duration{median(d.toAnswer)}
	st.MedianResolve = Duration{median(d.toResolve)}
	for w, n := range d.topics {
		st.Topics = append(st.Topics, Count{w, n})
	}
	st.Topics = topTen(st.Topics)
	for _, c := range d.byTopic {
		st.ByTopic = append(st.ByTopic, *c)
	}
	st.ByTopic = topTen(st.ByTopic)
	for _, p := range d.pairs {
		st.Pairs = append(st.Pairs, *p)
	}
	sort.Slice(st.Pairs, func(i, j int) bool {
		a, b := st.Pairs[i], st.Pairs[j]
		return a.Asked > b.Asked || a.Asked == b.Asked && a.From+" "+a.To < b.From+" "+b.To
	})
	for _, a := range d.agents {
		a := a.AgentStats
		if a.Received > 0 {
			a.AnswerRate /= float64(a.Received)
		}
		st.Agents = append(st.Agents, a)
	}
	sort.Slice(st.Agents, func(i, j int) bool { return st.Agents[i].Agent < st.Agents[j].Agent })
	st.Waits = d.waits.stats(d.agents)
	return st
}

func firstOf(c *ledger.Clarification, t ledger.EntryType) *ledger.ThreadEntry {
	for i := range c.Thread {
		if c.Thread[i].Type == t {
			return &c.Thread[i]
		}
	}
	return nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return sortedMedian(s)
}

// sortedMedian is the median of the sorted, non-empty s.
func sortedMedian(s []time.Duration) time.Duration {
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// topTen is the ten largest counts of cs, most first, then by key.
func topTen(cs []Count) []Count {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		return a.Count > b.Count || a.Count == b.Count && a.Key < b.Key
	})
	return cs[:min(len(cs), 10)]
}
