//go:build unix

package main

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/bench/internal/gen"
)

// timing summarises the runs of one command.
type timing struct {
	Runs      int       `json:"runs"`
	Wall      dist      `json:"wall"`
	CPU       dist      `json:"cpu"`
	MaxRSSKiB int64     `json:"max_rss_kib"` // the largest peak of the runs
	Failures  []failure `json:"failures"`
}

func timingOf(ps []proc) timing {
	t := timing{Runs: len(ps), Failures: tally(ps)}
	var wall, cpu []time.Duration
	for _, p := range ps {
		wall, cpu = append(wall, p.Wall), append(cpu, p.CPU)
		t.MaxRSSKiB = max(t.MaxRSSKiB, p.MaxRSS)
	}
	t.Wall, t.CPU = summarize(wall), summarize(cpu)
	return t
}

// rounds runs each job in turn, n rounds of them, after one uncounted
// warm-up round when warm is set; interleaving the jobs spreads the noise
// of a shared machine over all of them alike. Each round takes the jobs in
// an order of its own: a program run right after itself starts warmer
// (about 0.1 ms of 2 in start-up) than one run after another program, and
// a fixed order would give that to the same job every round. It returns
// each job's timing.
func (b *bench) rounds(ctx context.Context, n int, warm bool, jobs []job) ([]timing, error) {
	ps := make([][]proc, len(jobs))
	if warm {
		for _, j := range jobs {
			b.r.run(ctx, j)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(len(jobs)))) // the same orders in every run of the benchmark
	for range n {
		for _, i := range rng.Perm(len(jobs)) {
			ps[i] = append(ps[i], b.r.run(ctx, jobs[i]))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]timing, len(jobs))
	for i := range jobs {
		out[i] = timingOf(ps[i])
	}
	return out, nil
}

// historyCase is asks on an issue whose ledger holds Records clarifications.
type historyCase struct {
	Records     int   `json:"records"`
	LedgerBytes int64 `json:"ledger_bytes"`
	timing
}

// historyCost compares asks on a short ledger and on a long one.
type historyCost struct {
	Cases     []historyCase `json:"cases"`
	WallRatio float64       `json:"wall_ratio"` // last case's median over the first's
	CPURatio  float64       `json:"cpu_ratio"`
}

func (b *bench) history(ctx context.Context, sizes []int, runs int) (*historyCost, error) {
	h := &historyCost{}
	var jobs []job
	for _, n := range sizes {
		root := filepath.Join(b.tmp, "history-"+strconv.Itoa(n))
		if err := b.workspace(ctx, root); err != nil {
			return nil, err
		}
		if err := gen.History(root, 1, n); err != nil {
			return nil, err
		}
		jobs = append(jobs, job{argv: b.ask(1, "h"), root: root})
		c := historyCase{Records: n}
		if fi, err := os.Stat(filepath.Join(gen.StateDir(root), "clarifications", "issue-1.json")); err == nil {
			c.LedgerBytes = fi.Size()
		}
		h.Cases = append(h.Cases, c)
	}
	ts, err := b.rounds(ctx, runs, true, jobs)
	if err != nil {
		return nil, err
	}
	for i := range h.Cases {
		h.Cases[i].timing = ts[i]
	}
	first, last := h.Cases[0], h.Cases[len(h.Cases)-1]
	h.WallRatio, h.CPURatio = ratio(last.Wall.P50, first.Wall.P50), ratio(last.CPU.P50, first.CPU.P50)
	return h, nil
}

// startupCost compares `agentx version` with a hello-world Go program, and
// with the floor of the libraries it is built on (bench/internal/floor).
// It also runs agentx version with TZ set empty: BurntSushi/toml's package
// init asks for the local time zone (time.Now().Zone()), which would read
// /etc/localtime in every process unless TZ says otherwise. agentx (and the
// floor, as built on the same start) spares that read (internal/utczone),
// so the two agentx rows should agree: a gap between them is the read
// come back.
type startupCost struct {
	Agentx     timing  `json:"agentx_version"`
	AgentxNoTZ timing  `json:"agentx_version_tz_empty"`
	Hello      timing  `json:"hello_world"`
	Libraries  timing  `json:"libraries_floor"`
	CPURatio   float64 `json:"cpu_ratio"`           // agentx's median CPU over hello world's
	NoTZRatio  float64 `json:"cpu_ratio_tz_empty"`  // the same with TZ=
	FloorRatio float64 `json:"libraries_cpu_ratio"` // the libraries' floor's over hello world's
}

func (b *bench) startup(ctx context.Context, runs int) (*startupCost, error) {
	ts, err := b.rounds(ctx, runs, true, []job{{argv: []string{b.agentx, "version"}}, {argv: []string{b.hello}}, {argv: []string{b.floor, "version"}},
		{argv: []string{b.agentx, "version"}, env: []string{"TZ="}}})
	if err != nil {
		return nil, err
	}
	return &startupCost{Agentx: ts[0], Hello: ts[1], Libraries: ts[2], AgentxNoTZ: ts[3],
		CPURatio: ratio(ts[0].CPU.P50, ts[1].CPU.P50), FloorRatio: ratio(ts[2].CPU.P50, ts[1].CPU.P50), NoTZRatio: ratio(ts[3].CPU.P50, ts[1].CPU.P50)}, nil
}

// scaleReads is the read commands on a large workspace.
type scaleReads struct {
	gen.Shape
	EventLines int          `json:"event_lines"`
	EventBytes int64        `json:"event_bytes"`
	GenerateMS float64      `json:"generate_ms"`
	Commands   []scaleTimed `json:"commands"`
}

type scaleTimed struct {
	Command string `json:"command"`
	timing
}

func (b *bench) scale(ctx context.Context, shape gen.Shape, events, runs int) (*scaleReads, error) {
	s := &scaleReads{Shape: shape, EventLines: events}
	root := filepath.Join(b.tmp, "scale")
	if err := b.workspace(ctx, root); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := gen.Ledgers(root, shape); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var err error
	if s.EventBytes, err = gen.Events(root, events, shape.Ledgers); err != nil {
		return nil, err
	}
	s.GenerateMS = ms(time.Since(start))
	cmds := [][]string{{"events", "--json"}, {"clarify", "list", "--all"}, {"clarify", "stats"}, {"doctor"}}
	var jobs []job
	var names []string
	for _, c := range cmds {
		name := "agentx " + strings.Join(c, " ")
		jobs, names = append(jobs, job{argv: append([]string{b.agentx}, c...), root: root, rss: true}), append(names, name)
		if b.base != "" { // the same at -against, interleaved with it
			jobs, names = append(jobs, job{argv: append([]string{b.base}, c...), root: root, rss: true}), append(names, name+" @ "+b.rev)
		}
	}
	ts, err := b.rounds(ctx, runs, false, jobs)
	if err != nil {
		return nil, err
	}
	for i, name := range names {
		s.Commands = append(s.Commands, scaleTimed{Command: name, timing: ts[i]})
	}
	return s, nil
}

// crowdCase is asks on an issue of their own in a workspace whose other
// Issues hold Open open questions between them: with the side monitor
// every ask runs, and without it (AGENTX_NO_MONITOR=1), to show what the
// monitor's scan of every open question costs an ask.
type crowdCase struct {
	Issues    int    `json:"issues"`
	Open      int    `json:"open"`
	Monitor   timing `json:"monitor"`
	NoMonitor timing `json:"no_monitor"`
}

func (b *bench) crowd(ctx context.Context, issues []int, runs int) ([]crowdCase, error) {
	var out []crowdCase
	var jobs []job
	for _, n := range issues {
		root := filepath.Join(b.tmp, "crowd-"+strconv.Itoa(n))
		if err := b.workspace(ctx, root); err != nil {
			return nil, err
		}
		s := gen.Shape{Ledgers: n, PerLedger: 10, Open: 5 * n}
		if err := gen.Ledgers(root, s); err != nil {
			return nil, err
		}
		// As in a workspace in use, the other issues' files were last
		// written a while ago: the side monitor trusts their times only
		// once they are two seconds old.
		time.Sleep(3 * time.Second)
		ask := b.ask(n+1, "c") // an issue of its own
		jobs = append(jobs, job{argv: ask, root: root}, job{argv: ask, root: root, env: []string{"AGENTX_NO_MONITOR=1"}})
		out = append(out, crowdCase{Issues: n, Open: s.Open})
	}
	ts, err := b.rounds(ctx, runs, true, jobs)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Monitor, out[i].NoMonitor = ts[2*i], ts[2*i+1]
	}
	return out, nil
}
