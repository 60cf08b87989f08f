package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentx-cli/agentx/internal/gate/proposal"
	"github.com/agentx-cli/agentx/internal/safetext"
	"github.com/agentx-cli/agentx/router"
)

func newStatsCmd(a *App) *cobra.Command {
	var (
		issue  issueFlag
		since  string
		format string
	)
	cmd := &cobra.Command{
		Use:   "stats [--since D] [--issue N] [--format text|markdown]",
		Short: "The digest: statuses, resolution and escalation rates, time to answer, topics, agent pairs",
		Long: `A digest of clarifications: totals by status, resolved and escalated rates,
average and maximum rounds to resolution, median time to answer and to
resolve, the most common topics (grouped: the same words in the same order
are one topic) and the words they are made of, and per agent pair and per agent what
was asked, answered and escalated; then the enhancement proposals by status.
On a terminal the distributions are bar charts. --format markdown gives a report for a pull request or an issue.

--since takes an age back from now (24h, 7d, 2w) or an RFC 3339 time, and
counts clarifications created since then.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			n, err := issue.get(a)
			if err != nil {
				return err
			}
			var from time.Time
			if since != "" {
				if from, err = parseSince(since, a.now()); err != nil {
					return err
				}
			}
			a.wide = true
			_, h, err := a.hub()
			if err != nil {
				return err
			}
			// One ledger at a time, into counters: the digest of every
			// ledger holds none of them (see router.Digest).
			d := router.Digest{Now: a.now(), Longest: router.DefaultLongestOpen}
			errs, err := h.Each(router.Filter{Issue: n, All: true}, func(r router.Record) error {
				if !r.Created.Before(from) {
					d.Add(r)
				}
				return nil
			})
			if err != nil {
				return err
			}
			for _, e := range errs {
				a.warnf("skipped %v", e)
			}
			st := d.Stats()
			if st.Proposals, err = a.proposalCounts(n, from); err != nil {
				return err
			}
			return a.emit(st, func() {
				if format == formatMarkdown {
					statsMarkdown(a.stdout, st)
					return
				}
				a.statsText(a.stdout, st)
			})
		}),
	}
	issue.register(cmd, "only this issue")
	cmd.Flags().StringVar(&since, "since", "", "only clarifications created since (an age such as 24h or 7d, or an RFC 3339 time)")
	formatFlag(cmd, &format)
	return cmd
}

// bar draws value against max in width cells with unicode eighth blocks.
func bar(value, max float64, width int) string {
	if max <= 0 || value <= 0 {
		return ""
	}
	eighths := int(math.Round(value / max * float64(width*8)))
	if eighths == 0 {
		eighths = 1
	}
	partial := []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}
	return strings.Repeat("█", eighths/8) + partial[eighths%8]
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// dur formats a median; "-" when there was nothing to measure.
func dur(d router.Duration, samples int) string {
	if samples == 0 {
		return "-"
	}
	switch {
	case d.Duration < time.Minute:
		return d.Round(time.Second).String()
	case d.Duration < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%.1fd", d.Hours()/24)
}

func (a *App) statsText(w io.Writer, st router.Stats) {
	bold := a.paint(boldAttr)
	fmt.Fprintf(w, "%s  %d clarifications · %s resolved · %s escalated\n", bold("Clarifications"), st.Total, pct(st.ResolvedRate), pct(st.EscalatedRate))
	fmt.Fprintf(w, "  rounds to resolution: avg %.1f, max %d · median time to answer %s, to resolve %s\n\n",
		st.AvgRounds, st.MaxRounds, dur(st.MedianAnswer, st.AnsweredCount), dur(st.MedianResolve, st.ByStatus["resolved"]))

	fmt.Fprintf(w, "%s\n", bold("By status"))
	maxStatus := 0
	for _, n := range st.ByStatus {
		maxStatus = max(maxStatus, n)
	}
	var t table
	for _, s := range []string{"pending", "answered", "stale", "escalated", "resolved", "abandoned"} {
		t.add(plain(s, strconv.Itoa(st.ByStatus[s]), a.maybeBar(float64(st.ByStatus[s]), float64(maxStatus)))...)
	}
	t.write(w, "  ")
	for _, top := range topicTables(st) {
		if len(top.cs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", bold(top.title))
		t = table{}
		for _, tp := range top.cs {
			t.add(plain(tp.Key, strconv.Itoa(tp.Count), a.maybeBar(float64(tp.Count), float64(top.cs[0].Count)))...)
		}
		t.write(w, "  ")
	}
	if len(st.Pairs) > 0 {
		fmt.Fprintf(w, "\n%s\n", bold("Agent pairs"))
		t = table{}
		t.add(plain("FROM -> TO", "ASKED", "ANSWERED", "ESCALATED", "")...)
		for _, p := range st.Pairs {
			t.add(plain(p.From+" -> "+p.To, strconv.Itoa(p.Asked), strconv.Itoa(p.Answered), strconv.Itoa(p.Escalated),
				a.maybeBar(float64(p.Asked), float64(st.Pairs[0].Asked)))...)
		}
		t.write(w, "  ")
		fmt.Fprintf(w, "\n%s\n", bold("Agents"))
		t = table{}
		t.add(plain("AGENT", "ASKED", "WAS ASKED", "ANSWER RATE", "")...)
		for _, ag := range st.Agents {
			rate := "-"
			if ag.Received > 0 {
				rate = pct(ag.AnswerRate)
			}
			t.add(plain(ag.Agent, strconv.Itoa(ag.Asked), strconv.Itoa(ag.Received), rate, a.maybeBar(ag.AnswerRate, 1))...)
		}
		t.write(w, "  ")
	}
	if len(st.Proposals) > 0 {
		fmt.Fprintf(w, "\n%s  %s\n", bold("Proposals"), proposalsLine(st.Proposals))
	}
}

// proposalsLine is "4 · 1 pending · 2 approved · ...", the statuses with any.
func proposalsLine(counts map[string]int) string {
	total, parts := 0, []string{}
	for _, s := range proposal.Statuses {
		if n := counts[string(s)]; n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return strings.Join(append([]string{strconv.Itoa(total)}, parts...), " · ")
}

// proposalCounts counts the enhancement proposals by status: those
// naming issue when it is given, created at or after from. nil: none.
func (a *App) proposalCounts(issue *int, from time.Time) (map[string]int, error) {
	b, err := a.proposalBook()
	if err != nil {
		return nil, err
	}
	var counts map[string]int
	for _, p := range b.Proposals {
		if p.Created.Before(from) || (issue != nil && !slices.Contains(p.Issues, *issue)) {
			continue
		}
		if counts == nil {
			counts = map[string]int{}
		}
		counts[string(p.Status)]++
	}
	return counts, nil
}

// maybeBar draws a bar on a terminal only: in a pipe the numbers suffice.
func (a *App) maybeBar(value, max float64) string {
	if !a.isTTY {
		return ""
	}
	return bar(value, max, 20)
}

// statsMarkdown writes the digest for a pull request or an issue. Topic
// words and agent names come from the ledgers: each is escaped as one line
// of markdown, so none can break a table row or add markup.
func statsMarkdown(w io.Writer, st router.Stats) {
	md := safetext.MarkdownLine
	fmt.Fprintf(w, "### Clarifications digest\n\n")
	fmt.Fprintf(w, "**%d** clarifications · **%s** resolved · **%s** escalated · rounds to resolution avg **%.1f**, max **%d** · median time to answer **%s**, to resolve **%s**\n\n",
		st.Total, pct(st.ResolvedRate), pct(st.EscalatedRate), st.AvgRounds, st.MaxRounds, dur(st.MedianAnswer, st.AnsweredCount), dur(st.MedianResolve, st.ByStatus["resolved"]))
	fmt.Fprintf(w, "| status | count |\n|---|---:|\n")
	for _, s := range []string{"pending", "answered", "stale", "escalated", "resolved", "abandoned"} {
		fmt.Fprintf(w, "| %s | %d |\n", s, st.ByStatus[s])
	}
	for _, top := range topicTables(st) {
		if len(top.cs) == 0 {
			continue
		}
		words := make([]string, len(top.cs))
		for i, t := range top.cs {
			words[i] = fmt.Sprintf("%s (%d)", md(t.Key), t.Count)
		}
		fmt.Fprintf(w, "\n**%s:** %s\n", top.title, strings.Join(words, ", "))
	}
	if len(st.Pairs) > 0 {
		fmt.Fprintf(w, "\n| from → to | asked | answered | escalated |\n|---|---:|---:|---:|\n")
		for _, p := range st.Pairs {
			fmt.Fprintf(w, "| %s → %s | %d | %d | %d |\n", md(p.From), md(p.To), p.Asked, p.Answered, p.Escalated)
		}
		fmt.Fprintf(w, "\n| agent | asked | was asked | answer rate |\n|---|---:|---:|---:|\n")
		for _, ag := range st.Agents {
			rate := "-"
			if ag.Received > 0 {
				rate = pct(ag.AnswerRate)
			}
			fmt.Fprintf(w, "| %s | %d | %d | %s |\n", md(ag.Agent), ag.Asked, ag.Received, rate)
		}
	}
	if len(st.Proposals) > 0 {
		fmt.Fprintf(w, "\n**Enhancement proposals:** %s\n", proposalsLine(st.Proposals))
	}
}

// topicTable is one of the digest's topic tables.
type topicTable struct {
	title string
	cs    []router.Count
}

// topicTables are the digest's topic tables: the topics, grouped
// (router.TopicKey), then the words they are made of.
func topicTables(st router.Stats) []topicTable {
	return []topicTable{{"Top topics", st.ByTopic}, {"Top topic words", st.Topics}}
}
