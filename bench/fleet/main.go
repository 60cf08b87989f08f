//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentx-cli/agentx/bench/internal/gen"
)

// config is the command line.
type config struct {
	procs        []int
	k            int
	maxAsks      int
	historySizes []int
	crowd        []int
	historyRuns  int
	startupRuns  int
	ledgers      int
	perLedger    int
	events       int
	scaleRuns    int
	skipScale    bool
	scaleOnly    bool
	against      string
	timeout      time.Duration
	json         bool
	keep         bool
	assumptions  bool
	bin          string
}

// quick is what -quick changes, for the flags not given.
var quick = map[string]string{"crowd": "100", "procs": "1,8", "k": "5", "history-runs": "5", "startup-runs": "30", "ledgers": "1000", "events": "100000", "scale-runs": "1"}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	procs := fs.String("procs", "1,8,32,64", "fleet sizes: processes asking at once, comma-separated")
	fs.IntVar(&c.k, "k", 25, "asks per process, one after another")
	fs.IntVar(&c.maxAsks, "max-asks", 400, "asks per fleet at most: a larger fleet asks fewer per process (at least one), so P=64 stays within minutes")
	history := fs.String("history", "10,5000", "clarifications already in the ledger, for the history cost (comma-separated; the ratio is last/first)")
	fs.IntVar(&c.historyRuns, "history-runs", 20, "asks on each history ledger")
	crowd := fs.String("crowd", "200,1000", "other issues (five open questions each) in the crowded-workspace measurement, comma-separated; asks: -history-runs")
	fs.IntVar(&c.startupRuns, "startup-runs", 300, "runs of agentx version and of hello world, interleaved (the figures differ by tenths of a millisecond: fewer runs make a noisy median)")
	fs.IntVar(&c.ledgers, "ledgers", 10_000, "ledgers in the reads-at-scale workspace")
	fs.IntVar(&c.perLedger, "per-ledger", 3, "clarifications in each of those ledgers")
	fs.IntVar(&c.events, "events", 1_000_000, "lines in its event log")
	fs.IntVar(&c.scaleRuns, "scale-runs", 3, "runs of each read command at scale")
	fs.BoolVar(&c.skipScale, "skip-scale", false, "skip the reads at scale (the slowest part)")
	fs.BoolVar(&c.scaleOnly, "scale-only", false, "only the reads at scale (table 4)")
	fs.StringVar(&c.against, "against", "", "a git revision: the reads at scale also run agentx built at it, interleaved with this tree's, for before and after figures from the same minutes")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "time limit of each process")
	fs.BoolVar(&c.json, "json", false, "print the figures as JSON instead of tables")
	fs.BoolVar(&c.keep, "keep", false, "keep the workspaces and say where they are")
	fs.BoolVar(&c.assumptions, "assumptions", false, "after each fleet on one issue, its processes record an assumption on each question they asked, all at once (changes other than asks, on one issue)")
	fs.StringVar(&c.bin, "bin", "", "measure this agentx binary (an earlier build, for before and after) instead of building this tree's")
	q := fs.Bool("quick", false, "a smaller pass for a smoke test (P 1,8; K 5; 1,000 ledgers; 100,000 events; fewer runs)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.skipScale && c.scaleOnly {
		return c, errors.New("-skip-scale and -scale-only leave nothing to measure")
	}
	if *q {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		for name, v := range quick {
			if !given[name] {
				if err := fs.Set(name, v); err != nil {
					return c, err
				}
			}
		}
	}
	var err error
	if c.procs, err = ints("-procs", *procs); err != nil {
		return c, err
	}
	if c.crowd, err = ints("-crowd", *crowd); err != nil {
		return c, err
	}
	if c.historySizes, err = ints("-history", *history); err != nil {
		return c, err
	}
	for _, n := range []int{c.k, c.maxAsks, c.historyRuns, c.startupRuns, c.ledgers, c.perLedger, c.scaleRuns} {
		if n < 1 {
			return c, errors.New("-k, -max-asks, -history-runs, -startup-runs, -ledgers, -per-ledger and -scale-runs must be at least 1")
		}
	}
	return c, nil
}

// perProc is how many asks each of p processes makes: -k, or fewer so that
// the fleet makes at most -max-asks.
func (c config) perProc(p int) int { return max(1, min(c.k, c.maxAsks/p)) }

// ints parses a comma-separated list of positive integers.
func ints(name, s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", name, f)
		}
		out = append(out, n)
	}
	return out, nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == rssFlag {
		os.Exit(measureChild(os.Args[2:]))
	}
	c, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, c, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "fleet: interrupted; the temporary workspaces are removed")
		os.Exit(130)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

// bench is one run: the binaries, where the workspaces go, and how
// processes are started.
type bench struct {
	r      runner
	tmp    string
	agentx string
	hello  string
	floor  string // bench/internal/floor: cobra and toml, nothing of agentx
	base   string // agentx built at -against (agentx-full beside it, at a revision that has one), or ""
	rev    string // -against

	assumptions bool // -assumptions
}

// report is every figure of a run.
type report struct {
	Date    string       `json:"date"`
	Machine machine      `json:"machine"`
	Fleet   []fleetRun   `json:"fleet"`
	History *historyCost `json:"history"`
	Crowd   []crowdCase  `json:"crowd"`
	Startup *startupCost `json:"startup"`
	Scale   *scaleReads  `json:"scale,omitempty"`
	Files   *fileTrace   `json:"files"`
}

type machine struct {
	CPUs    int    `json:"cpus"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	CPU     string `json:"cpu,omitempty"`          // the processor's model name, from /proc/cpuinfo
	FS      string `json:"fs,omitempty"`           // the file system of the workspaces (statfs)
	Load    string `json:"load_average,omitempty"` // at the start, from /proc/loadavg
	Version string `json:"agentx_version"`
	Commit  string `json:"commit,omitempty"` // git describe of the tree measured
}

func run(ctx context.Context, c config, stdout, stderr io.Writer) (err error) {
	tmp, err := os.MkdirTemp("", "agentx-fleet-")
	if err != nil {
		return err
	}
	defer func() {
		if c.keep {
			fmt.Fprintln(stderr, "workspaces kept under", tmp)
		} else if rerr := os.RemoveAll(tmp); err == nil {
			err = rerr
		}
	}()
	b := &bench{r: newRunner(c.timeout), tmp: tmp, agentx: filepath.Join(tmp, "agentx"), assumptions: c.assumptions}
	progress := func(format string, args ...any) { fmt.Fprintf(stderr, "fleet: "+format+"\n", args...) }

	progress("building agentx, the libraries' floor and hello world (CGO_ENABLED=0)")
	b.floor = filepath.Join(tmp, "floor")
	pkgs := []string{"./cmd/agentx", "./bench/internal/floor"}
	if c.bin != "" {
		if b.agentx, err = filepath.Abs(c.bin); err != nil {
			return err
		}
		pkgs = pkgs[1:]
	}
	for _, pkg := range pkgs {
		if err := build(ctx, "", pkg, filepath.Join(tmp, filepath.Base(pkg))); err != nil {
			return fmt.Errorf("%w (run from the repository root)", err)
		}
	}
	if b.hello, err = helloWorld(ctx, tmp); err != nil {
		return err
	}
	if c.against != "" && !c.skipScale {
		progress("building agentx at %s", c.against)
		if b.base, err = buildAt(ctx, c.against, filepath.Join(tmp, "against")); err != nil {
			return err
		}
		b.rev = c.against
	}
	rep := report{Date: time.Now().UTC().Format(time.RFC3339), Machine: b.machine(ctx)}
	out := &printer{w: stdout, on: !c.json}
	out.machine(rep)

	if !c.scaleOnly {
		if err := b.before(ctx, c, &rep, out, progress); err != nil {
			return err
		}
	}
	if !c.skipScale {
		progress("reads at scale: generating %d ledgers and %d event lines", c.ledgers, c.events)
		shape := gen.Shape{Ledgers: c.ledgers, PerLedger: c.perLedger, Open: 10}
		if rep.Scale, err = b.scale(ctx, shape, c.events, c.scaleRuns); err != nil {
			return err
		}
		out.scale(rep.Scale)
	}

	if !c.scaleOnly {
		if err := b.after(ctx, c, &rep, out, progress); err != nil {
			return err
		}
	}

	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return nil
}

// machine describes where the figures come from.
func (b *bench) machine(ctx context.Context) machine {
	m := machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			m.Load = strings.Join(f[:3], " ")
		}
	}
	m.CPU, m.FS = cpuModel(), fsType(b.tmp)
	if p := b.r.run(ctx, job{argv: []string{b.agentx, "version"}, out: true}); p.Exit == 0 {
		m.Version = strings.TrimSpace(string(p.Stdout))
	}
	if out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	return m
}

// cpuModel is the processor's model name as Linux reports it ("" elsewhere):
// the same benchmark gives different figures on different processors.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// before is what is measured before the reads at scale: fleets, history and start-up.
func (b *bench) before(ctx context.Context, c config, rep *report, out *printer, progress func(string, ...any)) (err error) {
	for _, p := range c.procs {
		k := c.perProc(p)
		for _, one := range []bool{true, false} {
			where := "an issue each"
			if one {
				where = "all on one issue"
			}
			progress("%d processes × %d asks, %s", p, k, where)
			frs, err := b.fleet(ctx, p, k, one)
			if err != nil {
				return err
			}
			rep.Fleet = append(rep.Fleet, frs...)
		}
	}
	out.fleet(rep.Fleet)

	progress("history: %d asks on ledgers of %v clarifications", c.historyRuns, c.historySizes)
	if rep.History, err = b.history(ctx, c.historySizes, c.historyRuns); err != nil {
		return err
	}
	out.history(rep.History)

	progress("start-up: %d runs each", c.startupRuns)
	if rep.Startup, err = b.startup(ctx, c.startupRuns); err != nil {
		return err
	}
	out.startup(rep.Startup)
	return nil
}

// after is what is measured after the reads at scale: the files one ask writes and the crowded workspace.
func (b *bench) after(ctx context.Context, c config, rep *report, out *printer, progress func(string, ...any)) (err error) {
	progress("files one ask writes")
	if rep.Files, err = b.files(ctx); err != nil {
		return err
	}
	out.files(rep.Files)

	progress("crowded workspace: %d asks with %v other issues", c.historyRuns, c.crowd)
	if rep.Crowd, err = b.crowd(ctx, c.crowd, c.historyRuns); err != nil {
		return err
	}
	out.crowd(rep.Crowd)
	return nil
}
