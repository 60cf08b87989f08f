package mcpserver

import (
	"fmt"
	"strings"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// The text renderings are for clients that show the model only text: each
// says the id, where the question stands, the answer if any, and what to do.

func issueLabel(n int) string {
	if n == 0 {
		return "no issue"
	}
	return fmt.Sprintf("issue #%d", n)
}

func renderAsk(r AskResult) string {
	var b strings.Builder
	head := fmt.Sprintf("%s (%s, round %d): ", r.ID, issueLabel(r.Issue), r.Round)
	switch r.Outcome {
	case OutcomeAnswered:
		fmt.Fprintf(&b, "%sanswered by %s:\n%s\n", head, r.AnsweredBy, r.Answer)
	case OutcomeResolved:
		fmt.Fprintf(&b, "%sresolved:\n%s\n", head, r.Decision)
	case OutcomeEscalated:
		fmt.Fprintf(&b, "%sescalated to a human: %s\n", head, r.Decision)
	case OutcomeAbandoned:
		fmt.Fprintf(&b, "%sabandoned: %s\n", head, r.Decision)
	case OutcomeTimedOut:
		fmt.Fprintf(&b, "%stimed out: %s has not answered.\n", head, r.To)
	default:
		fmt.Fprintf(&b, "%spending: waiting for %s.\n", head, r.To)
	}
	if len(r.Options) > 0 && r.Outcome != OutcomeAnswered && r.Outcome != OutcomeResolved {
		fmt.Fprintf(&b, "Options offered: %s\n", strings.Join(r.Options, " | "))
	}
	fmt.Fprintf(&b, "\nNext: %s", r.Guidance)
	return b.String()
}

func renderRecord(r RecordResult) string {
	return fmt.Sprintf("%s (%s, %q, %s -> %s): %s, round %d.\n%s", r.ID, issueLabel(r.Issue), r.Topic, r.From, r.To, r.Status, r.Round, r.Guidance)
}

func renderThread(rec router.Record) string {
	c := rec.Clarification
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s\n", c.ID, issueLabel(rec.IssueNumber), c.Status)
	mode := "blocking"
	if !c.Blocking {
		mode = "non-blocking"
	}
	fmt.Fprintf(&b, "Topic: %s · %s -> %s · %s · round %d of %d\n", c.Topic, c.From, c.To, mode, c.Round, c.MaxRounds)
	if c.X != nil && len(c.X.Options) > 0 {
		fmt.Fprintf(&b, "Options: %s\n", strings.Join(c.X.Options, " | "))
	}
	for _, e := range c.Thread {
		label := map[ledger.EntryType]string{ledger.Question: "Q", ledger.Answer: "A", ledger.Resolution: "RESOLVED", ledger.Escalation: "ESCALATED"}[e.Type]
		fmt.Fprintf(&b, "\n[round %d] %s %s (%s):\n%s\n", e.Round, e.From, label, e.Timestamp, e.Body)
	}
	if c.X != nil {
		for _, a := range c.X.Assumptions {
			fmt.Fprintf(&b, "\n[round %d] %s ASSUMED (%s):\n%s\n", a.Round, a.By, a.Timestamp, a.Body)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func renderList(r ListResult) string {
	if len(r.Clarifications) == 0 {
		return "No clarifications match."
	}
	var b strings.Builder
	for _, c := range r.Clarifications {
		fmt.Fprintf(&b, "%s\t#%d\t%s\t%s -> %s\tround %d/%d\t%s\n", c.ID, c.Issue, c.Status, c.From, c.To, c.Round, c.MaxRounds, c.Topic)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", s)
	}
	return strings.TrimRight(b.String(), "\n")
}
