package desk

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/frontends/todo"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
)

//go:embed assets
var assets embed.FS

// pageTemplates parses the page's templates on first use: a package
// initialiser would cost every agentx command, not only the desk.
var pageTemplates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"when":  func(t ledger.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"count": words.Count,
	}).ParseFS(assets, "assets/*.tmpl"))
})

// asset serves the page's script or style.
func asset(w http.ResponseWriter, r *http.Request) {
	name := path.Base(r.URL.Path)
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		refuse(w, http.StatusNotFound, "no such file")
		return
	}
	ct := "text/css; charset=utf-8"
	if strings.HasSuffix(name, ".js") {
		ct = "text/javascript; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(b)
}

// pageView is what the page template shows.
type pageView struct {
	Root   string
	Person string
	Flash  *flash
	Items  []itemView
	Skip   []string
	Now    string
}

// itemView is one item as the page shows it: the queue's item, how long
// it has waited, its whole thread or its proposal, and the token its
// forms carry.
type itemView struct {
	todo.Item
	Label    string
	Where    string
	Waiting  string
	DueText  string // "due in 3h", "overdue 5m"; "" when it has no due time
	DueWarn  bool   // painted as a warning: overdue, or due soon (dueSoon)
	Thread   []entryView
	Proposal *proposal.Proposal
	Token    string
	Free     bool   // an answer box with a plain answer or resolve button
	Draft    string // what the person wrote in its box, when the action was not done
	// Card is the clarification's decision card, as text (brief.Text),
	// when it has more than its question: the files and lines it came
	// with, the decisions made on the issue before it, what was left out.
	Card string
	Keep string // a reused decision: the answer that keeps it
}

type entryView struct {
	Round  int
	From   string
	Type   string
	When   string
	Body   string
	Person string
	Choice string
}

// page renders the whole page.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	v := pageView{Root: s.opt.Root, Person: s.Person(), Now: s.opt.Hub.Store.Now().Format("15:04 UTC")}
	if key := r.URL.Query().Get("flash"); key != "" {
		if f, ok := s.takeFlash(key); ok {
			v.Flash = &f
		}
	}
	items, skipped, err := todo.List(s.opt.Hub, todo.Filter{})
	if err != nil {
		v.Skip = append(v.Skip, err.Error())
	}
	for _, e := range skipped {
		v.Skip = append(v.Skip, e.Error())
	}
	v.Items = s.views(items)
	if f := v.Flash; f != nil && !f.OK && f.Draft != "" {
		for i := range v.Items {
			if v.Items[i].ID == f.ID {
				v.Items[i].Draft = f.Draft
			}
		}
	}
	var b bytes.Buffer
	if err := pageTemplates().ExecuteTemplate(&b, "page.tmpl", v); err != nil {
		s.warn(fmt.Errorf("desk: page: %w", err))
		refuse(w, http.StatusInternalServerError, "the page could not be made: the desk's terminal says why")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// views makes the page's view of each item, reading its thread.
func (s *Server) views(items []todo.Item) []itemView {
	now := s.opt.Hub.Store.Now()
	var book *proposal.Book
	out := make([]itemView, 0, len(items))
	for _, it := range items {
		v := itemView{Item: it, Token: s.formKey, Waiting: todo.Ago(now.Sub(it.Since.Time))}
		v.Label = map[todo.Kind]string{
			todo.KindQuestion: "question to you", todo.KindEscalation: "escalation",
			todo.KindEvaluation: "evaluation", todo.KindProposal: "proposal",
			todo.KindUndelivered: "answer not picked up", todo.KindReused: "reused decision",
		}[it.Kind]
		if it.Reuses != nil {
			v.Keep = todo.KeepBody(it.Reuses.ID)
		}
		v.Where = where(it)
		v.DueText, v.DueWarn = due(it, now)
		switch it.Kind {
		case todo.KindProposal:
			if book == nil {
				b, err := proposal.Read(s.opt.Hub.Store)
				if err != nil {
					s.warn(err)
					b = &proposal.Book{}
				}
				book = b
			}
			v.Proposal = book.Find(it.ID)
		default:
			v.Free = true
			if rec, err := s.opt.Hub.Get(it.ID); err == nil {
				c := rec.Clarification
				for i, e := range c.Thread {
					ev := entryView{Round: e.Round, From: e.From, Type: string(e.Type), When: e.Timestamp.UTC().Format("2006-01-02 15:04"), Body: e.Body, Person: c.PersonAt(i)}
					if ch := c.ChoiceAt(i); ch != nil {
						ev.Choice = fmt.Sprintf("picked option %d: %s", ch.Option, ch.Text)
					}
					v.Thread = append(v.Thread, ev)
				}
				if k := s.opt.Hub.Card(rec); k.HasContext() {
					v.Card = k.Render(brief.Text, brief.Options{})
				}
			} else {
				s.warn(err)
			}
		}
		out = append(out, v)
	}
	return out
}

// due says when it falls due, and whether the page warns of it: an item
// overdue, or due soon (dueSoon). One due in a day is not a warning.
func due(it todo.Item, now time.Time) (text string, warn bool) {
	switch {
	case it.Due == nil:
		return "", false
	case it.Overdue || !now.Before(it.Due.Time):
		return "overdue " + todo.Ago(now.Sub(it.Due.Time)), true
	}
	left := it.Due.Sub(now)
	return "due in " + todo.Ago(left), left <= dueSoon(it.Due.Sub(it.Since.Time))
}

// dueSoon is how little time left makes an item due soon, for an item
// given sla in all (a question's SLA): its last tenth, and at most its
// last hour. A question with the default SLA of a day is due soon in its
// last hour, one with an SLA of 30 minutes in its last 3.
func dueSoon(sla time.Duration) time.Duration {
	return min(time.Hour, sla/10)
}

// fragment renders one item for the live queue.
func (s *Server) fragment(v itemView) (string, error) {
	var b bytes.Buffer
	err := pageTemplates().ExecuteTemplate(&b, "item", v)
	return b.String(), err
}

// where names the issue an item is on: a clarification's, or the issues a
// proposal names; "no issue" for none.
func where(it todo.Item) string {
	if it.Kind != todo.KindProposal {
		return words.IssueRef(it.Issue)
	}
	return issues(it.Issues)
}

func issues(ns []int) string {
	if len(ns) == 0 {
		return "no issue"
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("#%d", n)
	}
	return strings.Join(parts, " ")
}
