package mcpserver

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

// The text renderings are for clients that show the model only text: each
// says the id, where the question stands, the answer if any, and what to do.
// Clients print it too, so every text from the ledgers is neutralised
// (safetext): one-line fields with line, bodies with block, which keeps
// their line breaks but indents every line under its heading so that no
// body can forge a heading ("[round 2] human RESOLVED") or a "Next:" line.
// The structured result beside the text stays exact.

var line = safetext.Line

// block is body indented by two spaces, every line neutralised.
func block(body string) string {
	return strings.TrimSuffix(safetext.Indent(body, "  ", "  "), "\n")
}

func issueLabel(n int) string { return words.Issue(n) }

// renderError is a failed call's text: the error may quote the call's
// arguments or a file.
func renderError(name string, code int, err error, hint string) string {
	text := strings.TrimSuffix(safetext.Indent(err.Error(), fmt.Sprintf("error %s (exit %d): ", name, code), "  "), "\n")
	if hint != "" {
		text += "\nhint: " + line(hint)
	}
	return text
}

func renderAsk(r AskResult) string {
	var b strings.Builder
	head := fmt.Sprintf("%s (%s, round %d): ", line(r.ID), issueLabel(r.Issue), r.Round)
	switch r.Outcome {
	case OutcomeAnswered:
		fmt.Fprintf(&b, "%sanswered by %s:\n%s\n", head, line(r.AnsweredBy), block(r.Answer))
	case OutcomeResolved:
		fmt.Fprintf(&b, "%sresolved:\n%s\n", head, block(r.Decision))
	case OutcomeEscalated:
		fmt.Fprintf(&b, "%sescalated to a human: %s\n", head, line(r.Decision))
	case OutcomeAbandoned:
		fmt.Fprintf(&b, "%sabandoned: %s\n", head, line(r.Decision))
	case OutcomeTimedOut:
		fmt.Fprintf(&b, "%stimed out: %s has not answered.\n", head, line(r.To))
	default:
		fmt.Fprintf(&b, "%spending: waiting for %s.\n", head, line(r.To))
	}
	if len(r.Options) > 0 && r.Outcome != OutcomeAnswered && r.Outcome != OutcomeResolved {
		fmt.Fprintf(&b, "Options offered: %s\n", line(strings.Join(r.Options, " | ")))
	}
	if len(r.DecidedBefore) > 0 {
		b.WriteString("Decided before:\n")
		for _, d := range r.DecidedBefore {
			meta := fmt.Sprintf("#%d, %s", d.Issue, d.ResolvedAt.UTC().Format(time.DateOnly))
			if d.Commit != "" {
				meta += ", commit " + line(d.Commit)
			}
			fmt.Fprintf(&b, "- %s (%s): %s\n", line(d.ID), meta, line(d.Summary))
			if d.Outdated {
				fmt.Fprintf(&b, "  may be outdated: %s changed since\n", line(strings.Join(d.Changed, ", ")))
			}
		}
	}
	fmt.Fprintf(&b, "\nNext: %s", line(r.Guidance))
	return b.String()
}

func renderRecord(r RecordResult) string {
	return fmt.Sprintf("%s (%s, \"%s\", %s -> %s): %s, round %d.\n%s", line(r.ID), issueLabel(r.Issue), line(r.Topic), line(r.From), line(r.To), line(string(r.Status)), r.Round, line(r.Guidance))
}

func renderThread(rec router.Record, rs []inbox.Receipt) string {
	c := rec.Clarification
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s\n", line(c.ID), issueLabel(rec.IssueNumber), line(string(c.Status)))
	mode := "blocking"
	if !c.Blocking {
		mode = "non-blocking"
	}
	fmt.Fprintf(&b, "Topic: %s · %s -> %s · %s · round %d of %d\n", line(c.Topic), line(c.From), line(c.To), mode, c.Round, c.MaxRounds)
	if c.X != nil && len(c.X.Options) > 0 {
		fmt.Fprintf(&b, "Options: %s\n", line(strings.Join(c.X.Options, " | ")))
	}
	for i, e := range c.Thread {
		label := map[ledger.EntryType]string{ledger.Question: "Q", ledger.Answer: "A", ledger.Resolution: "RESOLVED", ledger.Escalation: "ESCALATED"}[e.Type]
		fmt.Fprintf(&b, "\n[round %d] %s %s (%s):\n%s\n", e.Round, line(e.From), label, e.Timestamp, block(e.Body))
		if j := slices.IndexFunc(rs, func(r inbox.Receipt) bool { return r.Entry == i }); j >= 0 {
			fmt.Fprintf(&b, "(%s)\n", rs[j].Line())
		}
	}
	if c.X != nil {
		for _, a := range c.X.Assumptions {
			fmt.Fprintf(&b, "\n[round %d] %s ASSUMED (%s):\n%s\n", a.Round, line(a.By), a.Timestamp, block(a.Body))
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
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s -> %s\tround %d/%d\t%s\n", line(c.ID), words.IssueRef(c.Issue), line(string(c.Status)), line(c.From), line(c.To), c.Round, c.MaxRounds, line(c.Topic))
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", line(s))
	}
	return strings.TrimRight(b.String(), "\n")
}
