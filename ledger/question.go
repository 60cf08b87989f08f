package ledger

import (
	"strings"
	"time"
)

// NewQuestion is a new clarification as its asker gives it, with what the
// rules that govern it say: every new question is made by Ledger.Ask.
type NewQuestion struct {
	From, To  string
	Topic     string
	Body      string // the question: the thread's first entry
	Blocking  bool
	MaxRounds int
	SLA       time.Duration // from the asking to stale
	Workflow  string        // whose rules applied
	Step      string        // the asker's step
	Options   []string      // choices offered to the one asked
}

// Ask adds q to l as its next clarification, pending in round 1, asked at
// now, and returns it.
func (l *Ledger) Ask(q NewQuestion, now time.Time) *Clarification {
	c := &Clarification{
		ID: l.NextID(), From: q.From, To: q.To, Topic: q.Topic,
		Blocking: q.Blocking, Status: Pending, Round: 1, MaxRounds: q.MaxRounds,
		Created: T(now), StaleAfter: T(now.Add(q.SLA)),
		Thread: []ThreadEntry{{Round: 1, From: q.From, Type: Question, Body: q.Body, Timestamp: T(now)}},
		X:      &Extra{Workflow: q.Workflow, Step: q.Step, Options: q.Options},
	}
	l.Clarifications = append(l.Clarifications, c)
	return c
}

// Origin is what identifies a question whatever its id (the id one ledger
// gives it may be another's elsewhere: a merge, another host's copy): who
// asked whom, the topic, when it was asked, to the millisecond a ledger
// keeps, and the question.
func Origin(c *Clarification) string {
	first := ""
	if len(c.Thread) > 0 {
		first = c.Thread[0].Body
	}
	return origin(c.From, c.To, c.Topic, c.Created.Time, first)
}

func origin(from, to, topic string, at time.Time, question string) string {
	return strings.Join([]string{from, to, topic, at.UTC().Format(TimeFormat), question}, "\x00")
}
