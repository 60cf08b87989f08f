package cli

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/frontends/inbox"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/router"
)

const (
	formatText     = "text"
	formatMarkdown = "markdown"
)

// formatFlag registers --format for commands that render clarifications.
func formatFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "format", formatText, "text or markdown")
}

func checkFormat(f string) error {
	if f != formatText && f != formatMarkdown {
		return &usageError{Err: fmt.Errorf("--format %q: use text or markdown (or --json)", f)}
	}
	return nil
}

// statusColor is the colour of each status on a terminal.
func statusColor(s ledger.Status) color.Attribute {
	switch s {
	case ledger.Pending:
		return color.FgYellow
	case ledger.Answered:
		return color.FgGreen
	case ledger.Stale:
		return color.FgRed
	case ledger.Escalated:
		return color.FgMagenta
	case ledger.Resolved:
		return color.FgCyan
	case ledger.Abandoned:
		return color.Faint
	}
	return color.Reset
}

// painter colours text when colour is on (App.paint): what a renderer
// takes of the session.
type painter func(attrs ...color.Attribute) func(string) string

func stamp(t ledger.Time) string { return t.UTC().Format("2006-01-02 15:04") }

const rule = "  -----------------------------------------------"

// renderThread writes one clarification as a terminal thread, with under
// each answer its receipt from rs, if any (see inbox.Receipts). Every text
// from the ledger is neutralised (safetext): a header field cannot break
// its line, and a body line is indented under its entry, so none can pass
// for a line of the thread.
func renderThread(w io.Writer, paint painter, r router.Record, rs []inbox.Receipt) {
	c := r.Clarification
	bold := paint(color.Bold)
	line := safetext.Line
	fmt.Fprintf(w, "  %s (%s)  %s\n", bold("Clarification Thread: "+line(c.ID)), words.IssueRef(r.IssueNumber), paint(statusColor(c.Status))(line(string(c.Status))))
	mode := "blocking"
	if !c.Blocking {
		mode = "non-blocking"
	}
	fmt.Fprintf(w, "  Topic: %s · %s -> %s · %s · round %d of %d\n", line(c.Topic), line(c.From), line(c.To), mode, c.Round, c.MaxRounds)
	if c.X != nil && len(c.X.Options) > 0 { // choices offered with the question (ask_human)
		fmt.Fprintf(w, "  Options: %s\n", line(strings.Join(c.X.Options, " | ")))
	}
	if d := decision(c); d != "" { // what was decided, in short, above the whole thread
		fmt.Fprintf(w, "  Decision: %s\n", line(d))
	}
	fmt.Fprintln(w, rule)
	for i := range c.Thread {
		if i > 0 {
			fmt.Fprintln(w)
		}
		renderEntry(w, paint, c, i, rs)
	}
	if c.Status == ledger.Pending || c.Status == ledger.Stale {
		fmt.Fprintf(w, "\n  ... waiting for %s (stale after %s)\n", line(c.To), stamp(c.StaleAfter))
	}
	fmt.Fprintln(w, rule)
}

// renderEntry writes entry i of c's thread, an answer with its receipt
// from rs, if any, and the option it picked.
func renderEntry(w io.Writer, paint painter, c *ledger.Clarification, i int, rs []inbox.Receipt) {
	line := safetext.Line
	e := c.Thread[i]
	switch e.Type {
	case ledger.Question:
		fmt.Fprintf(w, "  [Round %d] %s -> %s  (%s)\n", e.Round, line(e.From), line(c.To), stamp(e.Timestamp))
		fmt.Fprint(w, indent("    Q: ", e.Body))
	case ledger.Answer:
		fmt.Fprintf(w, "  [Round %d] %s -> %s  (%s)\n", e.Round, line(e.From), line(c.From), stamp(e.Timestamp))
		fmt.Fprint(w, indent("    A: ", e.Body))
		if i := slices.IndexFunc(rs, func(r inbox.Receipt) bool { return r.Entry == i }); i >= 0 {
			fmt.Fprintf(w, "    (%s)\n", rs[i].Line())
		}
	case ledger.Resolution:
		label := "[RESOLVED]"
		if strings.HasPrefix(e.Body, "Abandoned") {
			label = "[ABANDONED]"
		}
		fmt.Fprintf(w, "  %s %s  (%s)\n", paint(statusColor(ledger.Resolved))(label), line(e.From), stamp(e.Timestamp))
		fmt.Fprint(w, indent("    ", e.Body))
	case ledger.Escalation:
		mag := paint(color.FgMagenta, color.Bold)
		fmt.Fprintf(w, "  %s %s  (%s)\n", mag("!! [ESCALATED]"), line(e.From), stamp(e.Timestamp))
		fmt.Fprint(w, safetext.Indent(e.Body, "  | ", "  | "))
	}
	if ch := c.ChoiceAt(i); ch != nil {
		fmt.Fprintf(w, "    (picked option %d: %s)\n", ch.Option, line(ch.Text))
	}
}

// indent prefixes the first line of body with first and the rest with
// spaces of the same width.
func indent(first, body string) string {
	return safetext.Indent(body, first, strings.Repeat(" ", len(first)))
}

// renderMarkdown writes one clarification for chat or a PR comment. Every
// text from the ledger is escaped (safetext.Markdown): it reads as text and
// cannot open a heading, list, table, link or block of its own.
func renderMarkdown(w io.Writer, r router.Record) {
	c := r.Clarification
	md := safetext.MarkdownLine
	for _, e := range c.Thread {
		switch e.Type {
		case ledger.Question:
			label := "Clarification"
			if e.Round > 1 {
				label = fmt.Sprintf("Follow-up, round %d", e.Round)
			}
			fmt.Fprintf(w, "**[%s -> %s] %s (%s):** %s\n\n", md(e.From), md(c.To), label, md(c.ID), safetext.Markdown(e.Body))
		case ledger.Answer:
			fmt.Fprintf(w, "**[%s]** %s\n\n", md(e.From), safetext.Markdown(e.Body))
		case ledger.Resolution:
			fmt.Fprintf(w, "**[%s] Resolved:** %s\n\n", md(e.From), safetext.Markdown(e.Body))
		case ledger.Escalation:
			fmt.Fprintf(w, "**[ESCALATED]** %s\n\n", safetext.Markdown(router.EscalationReason(c)))
			fmt.Fprintf(w, "> %s\n\n", strings.ReplaceAll(safetext.Markdown(e.Body), "\n", "\n> "))
		}
	}
	if d := decision(c); d != "" {
		fmt.Fprintf(w, "**Decision:** %s\n\n", md(d))
	}
	fmt.Fprintf(w, "_%s · %s · %s · round %d of %d_\n", md(c.ID), words.IssueRef(r.IssueNumber), md(string(c.Status)), c.Round, c.MaxRounds)
}

// renderList writes records as a table: aligned with a header on a
// terminal, tab-separated without one for scripts.
func renderList(w io.Writer, recs []router.Record, now time.Time, tty bool, paint painter) {
	l := newListWriter(w, now, tty, paint)
	for _, r := range recs {
		l.add(r)
	}
	l.flush()
}

// listWriter prints clarify list's rows as the records come. In a pipe
// each line is written at once; on a terminal the table's cells are kept,
// to size its columns, but never the records they come from.
type listWriter struct {
	paint painter
	w     *bufio.Writer
	now   time.Time
	table *table // on a terminal
}

// newListWriter is a listWriter to w: a table when tty (a terminal).
func newListWriter(w io.Writer, now time.Time, tty bool, paint painter) *listWriter {
	l := &listWriter{paint: paint, w: bufio.NewWriter(w), now: now}
	if tty {
		l.table = &table{}
		l.table.add(plain("ID", "ISSUE", "STATUS", "FROM -> TO", "ROUND", "AGE", "TOPIC")...)
	}
	return l
}

func (l *listWriter) add(r router.Record) {
	c := r.Clarification
	if l.table == nil {
		line := safetext.Line
		fmt.Fprintf(l.w, "%s\t%d\t%s\t%s\t%s\t%d/%d\t%s\n", line(c.ID), r.IssueNumber, line(string(c.Status)), line(c.From), line(c.To), c.Round, c.MaxRounds, line(c.Topic))
		return
	}
	l.table.add(cell{text: c.ID}, cell{text: words.IssueRef(r.IssueNumber)},
		cell{text: string(c.Status), paint: l.paint(statusColor(c.Status))},
		cell{text: c.From + " -> " + c.To}, cell{text: fmt.Sprintf("%d/%d", c.Round, c.MaxRounds)},
		cell{text: age(l.now.Sub(c.Created.Time))}, cell{text: c.Topic})
}

// flush writes what is left: on a terminal, the table.
func (l *listWriter) flush() error {
	if l.table != nil {
		l.table.write(l.w, "")
	}
	return l.w.Flush()
}

func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
