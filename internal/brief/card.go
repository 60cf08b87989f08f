package brief

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// Card is a question as whoever decides on it reads it: who asks whom
// about what, the question, its options, the context it came with, the
// decisions already made on the issue, and what was left out.
type Card struct {
	ID       string
	Issue    int
	From, To string
	Topic    string
	Blocking bool
	Question string   // the current question
	Options  []Option // the choices offered with it
	Commit   string   // the asker's commit when it asked
	Excerpts []Excerpt
	// Decisions are the decisions made on the issue before the question was
	// asked, newest first, at most MaxDecisions.
	Decisions []Decision
	// Omitted says what the question's context left out, and why: as
	// recorded when it was asked, then what is not shown now (a file
	// changed since).
	Omitted []string
}

// Option is one choice a question offers.
type Option struct {
	N       int
	Text    string
	Default bool // the asker proposed it (its text ends with "(default)")
}

// Excerpt is a file, or some of its lines, as given with a question.
type Excerpt struct {
	Kind  string   // KindRef, KindArtifact or KindIssue
	Path  string   // relative to the repository root
	First int      // the number of the first line
	Lines []string // the lines given, without their line breaks
	Whole bool     // the whole file
	Title string   // the issue's title (KindIssue, when its text has one)
}

// Range is the lines an excerpt gives, as "12-40", or "" for a whole file.
func (e Excerpt) Range() string {
	if e.Whole || len(e.Lines) == 0 {
		return ""
	}
	return lines(e.First, e.First+len(e.Lines)-1)
}

// Decision is one decision already made on the issue.
type Decision struct {
	ID    string
	Topic string
	Text  string // the clarification's Decision()
}

// MaxDecisions is how many decisions a card shows, the newest.
const MaxDecisions = 5

// Source is where a card's excerpts are read again: the repository, with
// the rules that bound them (the budget, the asker's scope).
type Source struct {
	Root    string
	Rules   *workflow.Set
	ReadCap int64 // 0: DefaultReadCap
}

// Build makes the card of clarification c of issue issue; all are the
// issue's clarifications (c among them, or not), for its decisions. The
// excerpts are read again from src as the ledger recorded them (the
// lines given, through the same checks as when asked): a file that
// changed since (its SHA-256 differs) is not shown, and a note says so.
func Build(src Source, issue int, c *ledger.Clarification, all []*ledger.Clarification) *Card {
	k := &Card{ID: c.ID, Issue: issue, From: c.From, To: c.To, Topic: c.Topic, Blocking: c.Blocking, Question: c.Topic}
	if q := c.Current(ledger.Question); q != nil {
		k.Question = q.Body
	}
	if c.X != nil {
		def := DefaultOption(c.X.Options)
		for i, o := range c.X.Options {
			k.Options = append(k.Options, Option{N: i + 1, Text: o, Default: i == def})
		}
		if cx := c.X.Context; cx != nil {
			k.Commit = cx.Commit
			k.Omitted = slices.Clone(cx.Omitted)
			k.excerpts(src, c, cx)
		}
	}
	k.Decisions = Decisions(c, all)
	return k
}

// excerpts reads again the files c's context gave.
func (k *Card) excerpts(src Source, c *ledger.Clarification, cx *ledger.Context) {
	if len(cx.Refs) == 0 {
		return
	}
	req := Request{Root: src.Root, Rules: src.Rules, Workflow: c.X.Workflow, Step: c.X.Step, From: c.From, To: c.To, ReadCap: src.ReadCap}
	g := newGatherer(req)
	defer g.rd.close()
	for _, r := range cx.Refs {
		name := r.Path
		if r.Lines != "" {
			name += ":" + r.Lines
		}
		f, why := g.rd.read(r.Path, r.Kind == KindRef)
		switch {
		case why != "":
			k.note("%s: %s", name, why)
			continue
		case f.sum != r.SHA256:
			k.note("%s: changed since the question was asked (its SHA-256 differs): not shown", name)
			continue
		}
		ls := splitLines(f.data)
		e := Excerpt{Kind: r.Kind, Path: r.Path, First: 1, Whole: r.Lines == ""}
		a, b := 1, len(ls)
		if !e.Whole {
			from, to, ok := ParseLines(r.Lines)
			if !ok || from > len(ls) {
				k.note("%s: not lines of the file: not shown", name)
				continue
			}
			a, b = from, min(to, len(ls))
		}
		// the budget again, against a record made with a larger one (or
		// not by agentx)
		want := b
		for b >= a && cost(ls, a, b) > g.budget {
			b--
		}
		if b < a && len(ls) > 0 {
			k.note("%s: left out to keep within the context budget (%d bytes)", name, g.total)
			continue
		}
		if b < want {
			e.Whole = false
			k.note("%s: lines %s left out to keep within the context budget (%d bytes)", r.Path, lines(b+1, want), g.total)
		}
		g.budget -= cost(ls, a, b)
		e.First, e.Lines = a, ls[a-1:b]
		if r.Kind == KindIssue && a == 1 && len(e.Lines) > 0 {
			if t, ok := strings.CutPrefix(e.Lines[0], "# "); ok {
				e.Title = strings.TrimSpace(t)
			}
		}
		k.Excerpts = append(k.Excerpts, e)
	}
}

func (k *Card) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(k.Omitted, s) {
		k.Omitted = append(k.Omitted, s)
	}
}

// Decisions are the decisions made on c's issue before c was asked: the
// Decision of each other clarification of all resolved by then, newest
// first, at most MaxDecisions.
func Decisions(c *ledger.Clarification, all []*ledger.Clarification) []Decision {
	type dated struct {
		d  Decision
		at ledger.Time
	}
	var ds []dated
	for _, o := range all {
		if o == nil || o.ID == c.ID || o.Status != ledger.Resolved || o.ResolvedAt == nil || o.ResolvedAt.After(c.Created.Time) {
			continue
		}
		if text := o.Decision(); text != "" {
			ds = append(ds, dated{Decision{ID: o.ID, Topic: o.Topic, Text: text}, *o.ResolvedAt})
		}
	}
	slices.SortStableFunc(ds, func(a, b dated) int {
		return cmp.Or(b.at.Compare(a.at.Time), cmp.Compare(b.d.ID, a.d.ID))
	})
	out := make([]Decision, 0, min(len(ds), MaxDecisions))
	for _, d := range ds[:min(len(ds), MaxDecisions)] {
		out = append(out, d.d)
	}
	return out
}

// DefaultSuffix ends the text of the option an asker proposes as the
// default: clarify ask --option "SQLite (default)".
const DefaultSuffix = "(default)"

// DefaultOption is the index of the option the asker proposed as the
// default (the one whose text ends with "(default)", in any case), or -1
// when none is, or more than one.
func DefaultOption(opts []string) int {
	at := -1
	for i, o := range opts {
		t := strings.TrimSpace(o)
		if len(t) >= len(DefaultSuffix) && strings.EqualFold(t[len(t)-len(DefaultSuffix):], DefaultSuffix) {
			if at >= 0 {
				return -1
			}
			at = i
		}
	}
	return at
}

// HasContext reports whether the card has more than its question: an
// excerpt, a decision, or a note of what was left out.
func (k *Card) HasContext() bool {
	return len(k.Excerpts) > 0 || len(k.Decisions) > 0 || len(k.Omitted) > 0
}
