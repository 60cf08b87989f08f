package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/router"
)

// contextNotes tells the asker, on stderr, what its question's context
// left out and why (a file refused, lines past the budget): the record
// says it under --json.
func (a *App) contextNotes(r router.Record) {
	if a.json || r.X == nil || r.X.Context == nil {
		return
	}
	for _, n := range r.X.Context.Omitted {
		fmt.Fprintf(a.stderr, "agentx: context: %s\n", safetext.Line(n))
	}
}

// renderCard writes what r's decision card adds to its thread (the
// context its question came with, the decisions made on the issue before
// it, what was left out), indented as the thread is; nothing when it adds
// nothing.
func (a *App) renderCard(w io.Writer, r router.Record) {
	if a.hb == nil {
		return
	}
	k := a.hb.Card(r)
	if !k.HasContext() {
		return
	}
	text := k.Render(brief.Text, brief.Options{Compact: true})
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintln(w, strings.TrimRight("  "+l, " "))
	}
}
