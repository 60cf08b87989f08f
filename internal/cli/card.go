package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentx-cli/agentx/internal/brief"
	"github.com/agentx-cli/agentx/router"
)

// renderCard writes what r's decision card adds to its thread (the
// context its question came with, the decisions made on the issue before
// it, what was left out), indented as the thread is; nothing when it adds
// nothing, or when no hub was opened.
func renderCard(w io.Writer, h *router.Hub, r router.Record) {
	if h == nil {
		return
	}
	k := h.Card(r)
	if !k.HasContext() {
		return
	}
	text := k.Render(brief.Text, brief.Options{Compact: true})
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintln(w, strings.TrimRight("  "+l, " "))
	}
}
