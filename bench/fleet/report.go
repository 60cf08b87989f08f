//go:build unix

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// printer prints each section as a plain table as soon as it is measured,
// unless it is off (-json prints everything at the end instead).
type printer struct {
	w  io.Writer
	on bool
}

// table prints a title, then rows of cells: the first and the last column
// aligned left (names and words), the others right (figures).
func (p *printer) table(title string, rows [][]string, notes ...string) {
	if !p.on {
		return
	}
	fmt.Fprintf(p.w, "\n%s\n", title)
	last := 0
	if len(rows) > 0 {
		last = len(rows[0]) - 1
	}
	width := map[int]int{}
	for _, r := range rows {
		for _, i := range []int{0, last} {
			width[i] = max(width[i], utf8.RuneCountInString(r[i]))
		}
	}
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range rows {
		cells := slices.Clone(r)
		for _, i := range []int{0, last} {
			cells[i] += strings.Repeat(" ", width[i]-utf8.RuneCountInString(r[i]))
		}
		fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
	}
	tw.Flush()
	for line := range strings.Lines(buf.String()) {
		fmt.Fprintln(p.w, strings.TrimRight(line, " \n"))
	}
	for _, n := range notes {
		fmt.Fprintf(p.w, "  %s\n", n)
	}
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

// f2 is for the start-up figures, a few milliseconds that differ by tenths.
func f2(v float64) string { return fmt.Sprintf("%.2f", v) }

func (p *printer) machine(r report) {
	if !p.on {
		return
	}
	m := r.Machine
	fmt.Fprintf(p.w, "agentx fleet benchmark, %s\n", r.Date)
	cpu := ""
	if m.CPU != "" {
		cpu = " (" + m.CPU + ")"
	}
	fmt.Fprintf(p.w, "machine: %d CPUs%s, %s, %s/%s, load average %s at the start\n", m.CPUs, cpu, m.Go, m.OS, m.Arch, m.Load)
	if m.FS != "" {
		fmt.Fprintf(p.w, "workspaces on %s (set TMPDIR to measure another file system)\n", m.FS)
	}
	fmt.Fprintf(p.w, "agentx:  %s, built with CGO_ENABLED=0, tree %s\n", m.Version, m.Commit)
	fmt.Fprintln(p.w, "times are wall clock; CPU is user + system time of the process (rusage); ms per process unless said")
}

func (p *printer) fleet(frs []fleetRun) {
	rows := [][]string{{"issues", "P", "K", "asks", "ok", "wall s", "ok/s", "p50 ms", "p99 ms", "CPU p50", "CPU p90", "lost", "doubled", "unacked", "failures"}}
	var notes []string
	for _, f := range frs {
		var fails []string
		for _, x := range f.Failures {
			fails = append(fails, fmt.Sprintf("exit %d ×%d", x.Exit, x.Count))
			notes = append(notes, fmt.Sprintf("%s issue, P=%d: exit %d ×%d, e.g. %s", f.Issues, f.Procs, x.Exit, x.Count, x.Example))
		}
		if len(fails) == 0 {
			fails = []string{"-"}
		}
		lost := fmt.Sprint(f.Writes.Lost)
		if f.Writes.NoID > 0 {
			lost += fmt.Sprintf(" (+%d without id)", f.Writes.NoID)
		}
		rows = append(rows, []string{f.Issues, fmt.Sprint(f.Procs), fmt.Sprint(f.PerProc), fmt.Sprint(f.Asks), fmt.Sprint(f.OK), fmt.Sprintf("%.2f", f.WallMS/1000),
			f1(f.OKPerSec), f1(f.Latency.P50), f1(f.Latency.P99), f1(f.CPU.P50), f1(f.CPU.P90),
			lost, fmt.Sprint(f.Writes.Doubled), fmt.Sprint(f.Writes.Unacked), strings.Join(fails, ", ")})
	}
	notes = append([]string{"issues one: every process on issue 1; own: each process on its own issue. lost: asks that exited 0",
		"whose record is not in the ledger; unacked: records of asks that did not exit 0.",
		"one, assume (-assumptions): the same processes then each run agentx clarify assume on each question it asked."}, notes...)
	p.table("1. Fleet asks: P processes at once, each running K × agentx clarify ask --non-blocking --json", rows, notes...)
}

func (p *printer) history(h *historyCost) {
	rows := [][]string{{"records", "ledger KB", "asks", "wall p50", "wall p90", "CPU p50", "CPU p90", "failures"}}
	for _, c := range h.Cases {
		rows = append(rows, []string{fmt.Sprint(c.Records), f1(float64(c.LedgerBytes) / 1000), fmt.Sprint(c.Runs),
			f1(c.Wall.P50), f1(c.Wall.P90), f1(c.CPU.P50), f1(c.CPU.P90), failures(c.Failures)})
	}
	first, last := h.Cases[0], h.Cases[len(h.Cases)-1]
	p.table("2. History cost: asks in a row on an issue whose ledger already holds N clarifications", rows,
		fmt.Sprintf("ratio %d/%d: wall ×%.2f, CPU ×%.2f", last.Records, first.Records, h.WallRatio, h.CPURatio))
}

func (p *printer) crowd(cs []crowdCase) {
	rows := [][]string{{"other issues", "open there", "asks", "CPU p50", "CPU p90", "no monitor p50", "no monitor p90", "failures"}}
	for _, c := range cs {
		rows = append(rows, []string{fmt.Sprint(c.Issues), fmt.Sprint(c.Open), fmt.Sprint(c.Monitor.Runs), f1(c.Monitor.CPU.P50), f1(c.Monitor.CPU.P90),
			f1(c.NoMonitor.CPU.P50), f1(c.NoMonitor.CPU.P90), failures(append(c.Monitor.Failures, c.NoMonitor.Failures...))})
	}
	p.table("6. Crowded workspace: asks on an issue of their own while other issues hold open questions", rows,
		"no monitor: the same asks with AGENTX_NO_MONITOR=1; after a write the side monitor reads the issues that changed or fell due, and looks the others up")
}

func (p *printer) startup(s *startupCost) {
	rows := [][]string{{"program", "runs", "CPU p50", "CPU p90", "wall p50", "wall p90", "failures"}}
	for _, x := range []struct {
		name string
		t    timing
	}{{"agentx version", s.Agentx}, {"agentx version, TZ= given", s.AgentxNoTZ}, {"libraries' floor: cobra + toml, version", s.Libraries}, {"hello world (Go, static)", s.Hello}} {
		rows = append(rows, []string{x.name, fmt.Sprint(x.t.Runs), f2(x.t.CPU.P50), f2(x.t.CPU.P90), f2(x.t.Wall.P50), f2(x.t.Wall.P90), failures(x.t.Failures)})
	}
	p.table("3. Start-up", rows, fmt.Sprintf("agentx version / hello world, median CPU: ×%.2f (with TZ= given: ×%.2f, the same unless the /etc/localtime read at start is back; the libraries' floor alone: ×%.2f)", s.CPURatio, s.NoTZRatio, s.FloorRatio))
}

func (p *printer) scale(s *scaleReads) {
	rows := [][]string{{"command", "runs", "wall p50", "wall max", "CPU p50", "peak RSS MiB", "failures"}}
	for _, c := range s.Commands {
		rows = append(rows, []string{c.Command, fmt.Sprint(c.Runs), f1(c.Wall.P50), f1(c.Wall.Max), f1(c.CPU.P50), f1(float64(c.MaxRSSKiB) / 1024), failures(c.Failures)})
	}
	p.table(fmt.Sprintf("4. Reads at scale: %d ledgers (%d clarifications, %d open), events.jsonl of %d lines (%.0f MB); generated in %.1f s",
		s.Ledgers, s.Ledgers*s.PerLedger, s.Open, s.EventLines, float64(s.EventBytes)/1e6, s.GenerateMS/1000), rows,
		"stdout goes to /dev/null; the read commands run the monitor, as they do for a user")
}

func (p *printer) files(f *fileTrace) {
	if !f.Traced {
		p.table("5. Files one ask writes", nil, f.Note)
		return
	}
	rows := [][]string{{"path", "what the ask did to it"}}
	for _, w := range f.Writes {
		rows = append(rows, []string{w.Path, strings.Join(w.Ops, ", ")})
	}
	p.table(fmt.Sprintf("5. Files one ask writes: %d paths under .agentx/ (exit %d)", len(f.Writes), f.Exit), rows, f.Note)
}

func failures(fs []failure) string {
	if len(fs) == 0 {
		return "-"
	}
	var s []string
	for _, f := range fs {
		s = append(s, fmt.Sprintf("exit %d ×%d: %s", f.Exit, f.Count, cut(f.Example, 60)))
	}
	return strings.Join(s, "; ")
}
