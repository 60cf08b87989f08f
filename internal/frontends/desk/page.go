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

	"github.com/agentx-cli/agentx/internal/frontends/todo"
	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/ledger"
)

//go:embed assets
var assets embed.FS

// pageTemplates parses the page's templates on first use: a package
// initialiser would cost every agentx command, not only the desk.
var pageTemplates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"when": func(t ledger.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
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
	Late     string
	Thread   []entryView
	Proposal *proposal.Proposal
	Token    string
	Free     bool   // an answer box with a plain answer or resolve button
	Keep     string // a reused decision: the answer that keeps it
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
		msg, _ := s.explain(err)
		v.Skip = append(v.Skip, msg)
	}
	for _, e := range skipped {
		v.Skip = append(v.Skip, e.Error())
	}
	v.Items = s.views(items)
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
		v.Where = fmt.Sprintf("#%d", it.Issue)
		if it.Overdue && it.Due != nil {
			v.Late = "overdue " + todo.Ago(now.Sub(it.Due.Time))
		} else if it.Due != nil {
			v.Late = "due in " + todo.Ago(it.Due.Sub(now))
		}
		switch it.Kind {
		case todo.KindProposal:
			v.Where = issues(it.Issues)
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
			} else {
				s.warn(err)
			}
		}
		out = append(out, v)
	}
	return out
}

// fragment renders one item for the live queue.
func (s *Server) fragment(v itemView) (string, error) {
	var b bytes.Buffer
	err := pageTemplates().ExecuteTemplate(&b, "item", v)
	return b.String(), err
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
