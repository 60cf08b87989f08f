package cli

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agentx-cli/agentx/internal/safetext"
)

// table aligns columns by the width of their plain text, then paints each
// cell, so colour codes never upset the alignment (text/tabwriter counts
// them as width).
type table struct {
	rows [][]cell
}

// cell is one table cell: its text and how to paint it (nil: as is).
type cell struct {
	text  string
	paint func(string) string
}

func plain(texts ...string) []cell {
	out := make([]cell, len(texts))
	for i, t := range texts {
		out[i] = cell{text: t}
	}
	return out
}

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// write prints the rows, each prefixed by indent, columns two spaces apart,
// with no trailing spaces. Each cell is one line of neutralised text
// (safetext.Line): no cell can break its row or forge another.
func (t *table) write(w io.Writer, indent string) {
	var widths []int
	for _, r := range t.rows {
		for i := range r {
			r[i].text = safetext.Line(r[i].text)
			c := r[i]
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			text := c.text
			if c.paint != nil {
				text = c.paint(text)
			}
			b.WriteString(text)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text)+2))
			}
		}
		io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n")
	}
}

// writeTable writes rows under header as aligned plain columns.
func writeTable(w io.Writer, header []string, rows [][]string) {
	t := table{}
	t.add(plain(header...)...)
	for _, r := range rows {
		t.add(plain(r...)...)
	}
	t.write(w, "")
}
