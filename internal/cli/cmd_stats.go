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
	"github.com/agentx-cli/agentx/internal/words"
	"github.com/agentx-cli/agentx/router"
)

// statsOptions are `agentx clarify stats`'s flags.
type statsOptions struct {
	issue   issueFlag
	since   string
	format  string
	longest int
}

func newStatsCmd(a *App) *cobra.Command {
	o := &statsOptions{}
	cmd := &cobra.Command{
		Use:   "stats [--since D] [--issue N] [--longest N] [--format text|markdown]",
		Short: "The digest: statuses, resolution and escalation rates, time to answer, topics, agent pairs, who waits on whom",
		Long: `A digest of clarifications: totals by status, resolved and escalated rates,
average and maximum rounds to resolution, median time to answer and to
resolve, the most common topics (grouped: the same words in the same order
are one topic) and the words they are made of, and per agent pair and per agent what
was asked, answered and escalated; then the enhancement proposals by status,
and what the event log says was refused in the period (asks and writes a
step's scope refused, writes that timed out on a lock).
On a terminal the distributions are bar charts. --format markdown gives a report for a pull request or an issue.

Then who waits on whom. A round waits from its question to its first reply
(an answer, an escalation or a resolution): for the rounds replied to, and
apart for the rounds still waiting (until now), the median, the 90th
percentile and the total, per asker, per answerer (the agent asked,
whoever replied for it) and per person (the rounds a person replied to
first, as human, by the name recorded); then the --longest open waits
(default 5): id, issue, asker and answerer, since when and how long. A
round closed without a reply (abandoned, cancelled) counts in neither.
Under --json the durations are seconds.

--since takes an age back from now (24h, 7d, 2w) or an RFC 3339 time, and
counts clarifications created since then.`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			return o.run(a)
		}),
	}
	o.issue.register(cmd, "only this issue")
	cmd.Flags().StringVar(&o.since, "since", "", "only clarifications created since (an age such as 24h or 7d, or an RFC 3339 time)")
	cmd.Flags().IntVar(&o.longest, "longest", router.DefaultLongestOpen, "list the N longest open waits (0: none)")
	formatFlag(cmd, &o.format)
	return cmd
}

// run is the command's body over the session a: its streams, global flags, output and hub.
func (o *statsOptions) run(a *App) error {
	if err := checkFormat(o.format); err != nil {
		return err
	}
	if o.longest < 0 {
		return &usageError{Err: fmt.Errorf("--longest %d: give 0 or more", o.longest)}
	}
	n, err := o.issue.get(a)
	if err != nil {
		return err
	}
	var from time.Time
	if o.since != "" {
		if from, err = parseSince(o.since, a.now()); err != nil {
			return err
		}
	}
	a.wide = true
	_, h, err := a.hub()
	if err != nil {
		return err
	}
	st, err := o.digest(a, h, n, from)
	if err != nil {
		return err
	}
	return a.emit(st, func() {
		if o.format == formatMarkdown {
			statsMarkdown(a.stdout, st)
			return
		}
		newStatsText(a, a.stdout).stats(st)
	})
}

// digest counts the clarifications of issue n (nil: all) created since
// from, the proposals and the refusals.
func (o *statsOptions) digest(a *App, h *router.Hub, n *int, from time.Time) (router.Stats, error) {
	// One ledger at a time, into counters: the digest of every
	// ledger holds none of them (see router.Digest).
	d := router.Digest{Now: a.now(), Longest: o.longest}
	errs, err := h.Each(router.Filter{Issue: n, All: true}, func(r router.Record) error {
		if !r.Created.Before(from) {
			d.Add(r)
		}
		return nil
	})
	if err != nil {
		return router.Stats{}, err
	}
	for _, e := range errs {
		a.warnf("skipped %v", e)
	}
	st := d.Stats()
	b, err := proposalBook(a)
	if err != nil {
		return st, err
	}
	st.Proposals = proposalCounts(b, n, from)
	if st.Refusals, err = router.CountRefusals(h.Events, router.EventFilter{Issue: n, Since: from}); err != nil {
		return st, err
	}
	return st, nil
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
	return span(d.Duration)
}

// span is a duration for a person to read: seconds under a minute
// (45s), else to the minute (4m, 2h, 2h5m) under two days, else days to
// a tenth (3.5d); a negative one (clocks that disagree) with a minus.
func span(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + span(-d)
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		switch {
		case h == 0:
			return fmt.Sprintf("%dm", m)
		case m == 0:
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	return fmt.Sprintf("%.1fd", d.Hours()/24)
}

// waitCell is the median, 90th percentile and total of f, or "-".
func waitCell(f router.WaitFigures) string {
	if f.Rounds == 0 {
		return "-"
	}
	return span(f.Median.Duration) + " / " + span(f.P90.Duration) + " / " + span(f.Total.Duration)
}

// waitsLine is "5 rounds, median 4m, p90 1h, total 2h10m" ("no rounds").
func waitsLine(f router.WaitFigures) string {
	if f.Rounds == 0 {
		return "no rounds"
	}
	return fmt.Sprintf("%d %s, median %s, p90 %s, total %s", f.Rounds, plural(f.Rounds, "round", "rounds"),
		span(f.Median.Duration), span(f.P90.Duration), span(f.Total.Duration))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// statsText prints the digest for a person: bold titles, and bar charts
// on a terminal (in a pipe the numbers suffice).
type statsText struct {
	w    io.Writer
	bold func(string) string
	bars bool
}

func newStatsText(a *App, w io.Writer) statsText {
	return statsText{w: w, bold: a.paint(boldAttr), bars: a.isTTY}
}

// stats prints st.
func (p statsText) stats(st router.Stats) {
	w, bold := p.w, p.bold
	fmt.Fprintf(w, "%s  %s · %s resolved · %s escalated\n", bold("Clarifications"), words.Count(st.Total, "clarification", "clarifications"), pct(st.ResolvedRate), pct(st.EscalatedRate))
	fmt.Fprintf(w, "  rounds to resolution: avg %.1f, max %d · median time to answer %s, to resolve %s\n\n",
		st.AvgRounds, st.MaxRounds, dur(st.MedianAnswer, st.AnsweredCount), dur(st.MedianResolve, st.ByStatus["resolved"]))

	fmt.Fprintf(w, "%s\n", bold("By status"))
	maxStatus := 0
	for _, n := range st.ByStatus {
		maxStatus = max(maxStatus, n)
	}
	var t table
	for _, s := range []string{"pending", "answered", "stale", "escalated", "resolved", "abandoned"} {
		t.add(plain(s, strconv.Itoa(st.ByStatus[s]), p.bar(float64(st.ByStatus[s]), float64(maxStatus)))...)
	}
	t.write(w, "  ")
	for _, top := range topicTables(st) {
		if len(top.cs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", bold(top.title))
		t = table{}
		for _, tp := range top.cs {
			t.add(plain(tp.Key, strconv.Itoa(tp.Count), p.bar(float64(tp.Count), float64(top.cs[0].Count)))...)
		}
		t.write(w, "  ")
	}
	if len(st.Pairs) > 0 {
		fmt.Fprintf(w, "\n%s\n", bold("Agent pairs"))
		t = table{}
		t.add(plain("FROM -> TO", "ASKED", "ANSWERED", "ESCALATED", "")...)
		for _, pair := range st.Pairs {
			t.add(plain(pair.From+" -> "+pair.To, strconv.Itoa(pair.Asked), strconv.Itoa(pair.Answered), strconv.Itoa(pair.Escalated),
				p.bar(float64(pair.Asked), float64(st.Pairs[0].Asked)))...)
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
			t.add(plain(ag.Agent, strconv.Itoa(ag.Asked), strconv.Itoa(ag.Received), rate, p.bar(ag.AnswerRate, 1))...)
		}
		t.write(w, "  ")
	}
	p.waits(st.Waits)
	if len(st.Proposals) > 0 {
		fmt.Fprintf(w, "\n%s  %s\n", bold("Proposals"), proposalsLine(st.Proposals))
	}
	if st.Refusals != nil {
		fmt.Fprintf(w, "\n%s  %s\n", bold("Refused"), refusalsLine(*st.Refusals))
	}
}

// refusalsLine is "2 by a step's scope · 1 write timed out on a lock
// (agentx events lists them)", the kinds with any.
func refusalsLine(r router.Refusals) string {
	var parts []string
	if r.Scope > 0 {
		parts = append(parts, fmt.Sprintf("%d by a step's scope", r.Scope))
	}
	if r.LockTimeouts > 0 {
		parts = append(parts, fmt.Sprintf("%d %s timed out on a lock", r.LockTimeouts, words.Plural(r.LockTimeouts, "write", "writes")))
	}
	return strings.Join(parts, " · ") + " (agentx events lists them)"
}

// waits writes who waits on whom: the waits in all, per asker,
// answerer and person (median / p90 / total), and the longest open ones.
func (p statsText) waits(ws router.Waits) {
	w, bold := p.w, p.bold
	fmt.Fprintf(w, "\n%s  a round's question to its first reply (answer, escalation or resolution)\n", bold("Waits"))
	fmt.Fprintf(w, "  replied: %s\n  open:    %s\n", waitsLine(ws.Replied), waitsLine(ws.Open))
	for _, g := range []struct {
		title string
		ws    []router.AgentWaits
	}{{"ASKER", ws.ByAsker}, {"ANSWERER", ws.ByAnswerer}} {
		if len(g.ws) == 0 {
			continue
		}
		var t table
		t.add(plain(g.title, "REPLIED", "WAITED (MEDIAN / P90 / TOTAL)", "OPEN", "WAITING")...)
		for _, aw := range g.ws {
			t.add(plain(aw.Agent, strconv.Itoa(aw.Replied.Rounds), waitCell(aw.Replied), strconv.Itoa(aw.Open.Rounds), waitCell(aw.Open))...)
		}
		fmt.Fprintln(w)
		t.write(w, "  ")
	}
	if len(ws.ByPerson) > 0 {
		var t table
		t.add(plain("PERSON", "REPLIED", "WAITED (MEDIAN / P90 / TOTAL)")...)
		for _, pw := range ws.ByPerson {
			t.add(plain(pw.Person, strconv.Itoa(pw.Replied.Rounds), waitCell(pw.Replied))...)
		}
		fmt.Fprintln(w)
		t.write(w, "  ")
	}
	if len(ws.LongestOpen) > 0 {
		fmt.Fprintf(w, "\n%s\n", bold("Longest open waits"))
		var t table
		t.add(plain("ID", "ISSUE", "ASKER -> ANSWERER", "ROUND", "WAITING SINCE", "FOR")...)
		for _, o := range ws.LongestOpen {
			t.add(plain(o.ID, fmt.Sprintf("#%d", o.IssueNumber), o.From+" -> "+o.To, strconv.Itoa(o.Round), stamp(o.Since), span(o.Waited.Duration))...)
		}
		t.write(w, "  ")
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

// proposalCounts counts the enhancement proposals of b by status: those
// naming issue when it is given, created at or after from. nil: none.
func proposalCounts(b *proposal.Book, issue *int, from time.Time) map[string]int {
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
	return counts
}

// bar draws a bar on a terminal only: in a pipe the numbers suffice.
func (p statsText) bar(value, max float64) string {
	if !p.bars {
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
	waitsMarkdown(w, st.Waits)
	if len(st.Proposals) > 0 {
		fmt.Fprintf(w, "\n**Enhancement proposals:** %s\n", proposalsLine(st.Proposals))
	}
	if st.Refusals != nil {
		fmt.Fprintf(w, "\n**Refused:** %s\n", refusalsLine(*st.Refusals))
	}
}

// waitsMarkdown writes who waits on whom for a pull request or an issue.
func waitsMarkdown(w io.Writer, ws router.Waits) {
	md := safetext.MarkdownLine
	fmt.Fprintf(w, "\n**Waits** (a round's question to its first reply): replied %s · open %s\n", waitsLine(ws.Replied), waitsLine(ws.Open))
	for _, g := range []struct {
		title string
		ws    []router.AgentWaits
	}{{"asker", ws.ByAsker}, {"answerer", ws.ByAnswerer}} {
		if len(g.ws) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n| %s | replied | waited (median / p90 / total) | open | waiting (median / p90 / total) |\n|---|---:|---|---:|---|\n", g.title)
		for _, aw := range g.ws {
			fmt.Fprintf(w, "| %s | %d | %s | %d | %s |\n", md(aw.Agent), aw.Replied.Rounds, waitCell(aw.Replied), aw.Open.Rounds, waitCell(aw.Open))
		}
	}
	if len(ws.ByPerson) > 0 {
		fmt.Fprintf(w, "\n| person | replied | waited (median / p90 / total) |\n|---|---:|---|\n")
		for _, p := range ws.ByPerson {
			fmt.Fprintf(w, "| %s | %d | %s |\n", md(p.Person), p.Replied.Rounds, waitCell(p.Replied))
		}
	}
	if len(ws.LongestOpen) > 0 {
		fmt.Fprintf(w, "\n**Longest open waits**\n\n| id | issue | asker → answerer | round | waiting since | for |\n|---|---:|---|---:|---|---:|\n")
		for _, o := range ws.LongestOpen {
			fmt.Fprintf(w, "| %s | #%d | %s → %s | %d | %s | %s |\n", md(o.ID), o.IssueNumber, md(o.From), md(o.To), o.Round, stamp(o.Since), span(o.Waited.Duration))
		}
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
