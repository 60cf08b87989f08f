package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/bench/internal/gen"
)

func main() {
	records := flag.Int("records", 20_000, "clarifications in the long ledger")
	asks := flag.Int("asks", 60, "asks on each ledger (after one uncounted)")
	startup := flag.Int("startup", 300, "runs of agentx version and of hello world (0: skip)")
	bin := flag.String("bin", "", "the agentx binary to measure (default: built from this tree)")
	base := flag.String("base", "", "another agentx binary (an earlier build) measured beside it, the runs taking turns")
	keep := flag.Bool("keep", false, "keep the workspaces and say where they are (to profile an ask there)")
	flag.Parse()
	if err := run(*records, *asks, *startup, *bin, *base, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bigledger:", err)
		os.Exit(1)
	}
}

// job is one command measured: its runs' wall and CPU times.
type job struct {
	name      string
	argv      []string
	root      string // AGENTX_ROOT, when not ""
	wall, cpu []time.Duration
	// question, when not 0, is the index in argv of a question that
	// differs from run to run (nobody asks the same twice)
	question int
	runs     int
}

// workspace creates the default workspace at root, as agentx init does,
// without the per-run question cap: the benchmark measures writes.
func workspace(root string) error {
	if err := gen.Workspace(root); err != nil {
		return err
	}
	cfg := filepath.Join(root, ".agentx", "config.toml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		return err
	}
	lifted := strings.Replace(string(data), "\nmax_questions = 3", "\nmax_questions = 0", 1)
	if lifted == string(data) {
		return fmt.Errorf("%s: no max_questions = 3 to lift", cfg)
	}
	return os.WriteFile(cfg, []byte(lifted), 0o644)
}

func run(records, asks, startup int, bin, base string, keep bool) error {
	tmp, err := os.MkdirTemp("", "agentx-bigledger-")
	if err != nil {
		return err
	}
	if keep {
		defer fmt.Fprintln(os.Stderr, "workspaces kept under", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	if bin == "" {
		bin = filepath.Join(tmp, "agentx")
		if err := build(".", "./cmd/agentx", bin); err != nil {
			return err
		}
	}
	// the binaries measured: this one and, with -base, the one to compare
	// it with, their runs taking turns
	bins := map[string]string{"": bin}
	names := []string{""}
	if base != "" {
		bins["base: "] = base
		names = append(names, "base: ")
	}
	fields := strings.Fields(readLoad())
	fmt.Printf("%d CPUs, %s, load average %s\n\n", runtime.NumCPU(), runtime.Version(), strings.Join(fields[:min(3, len(fields))], " "))

	var history [][2]*job
	var all []*job
	for _, name := range names {
		var pair [2]*job
		for i, n := range []int{10, records} {
			root := filepath.Join(tmp, fmt.Sprintf("history-%d-%d", len(history), n))
			if err := workspace(root); err != nil {
				return err
			}
			if err := gen.History(root, 1, n); err != nil {
				return err
			}
			argv := []string{bins[name], "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect",
				"--topic", "Retry budget", "--non-blocking", "--json", "--question", ""}
			pair[i] = &job{name: fmt.Sprintf("%sask, %d records", name, n), root: root, argv: argv, question: len(argv) - 1}
			all = append(all, pair[i])
		}
		history = append(history, pair)
	}
	if err := rounds(all, asks); err != nil {
		return err
	}
	fmt.Printf("clarify ask --non-blocking, %d runs each, interleaved\n\n", asks)
	table(all, history)

	if startup > 0 {
		hello, err := helloWorld(tmp)
		if err != nil {
			return err
		}
		hw := &job{name: "hello world", argv: []string{hello}}
		jobs := []*job{hw}
		var pairs [][2]*job
		for _, name := range names {
			v := &job{name: name + "agentx version", argv: []string{bins[name], "version"}}
			jobs, pairs = append(jobs, v), append(pairs, [2]*job{hw, v})
		}
		if err := rounds(jobs, startup); err != nil {
			return err
		}
		fmt.Printf("\nstart-up, %d runs each, shuffled\n\n", startup)
		table(jobs, pairs)
	}
	return nil
}

func readLoad() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return string(b)
}

// rounds runs every job once, uncounted, then n rounds of them, each
// round in an order of its own (a program run right after itself starts
// warmer).
func rounds(jobs []*job, n int) error {
	for _, j := range jobs {
		if _, _, err := j.once(); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(len(jobs))))
	for range n {
		for _, i := range rng.Perm(len(jobs)) {
			wall, cpu, err := jobs[i].once()
			if err != nil {
				return err
			}
			jobs[i].wall, jobs[i].cpu = append(jobs[i].wall, wall), append(jobs[i].cpu, cpu)
		}
	}
	return nil
}

// once runs j and returns its wall and CPU time.
func (j *job) once() (wall, cpu time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	j.runs++
	if j.question > 0 {
		j.argv[j.question] = fmt.Sprintf("Which retry budget applies to call %d, and where is it configured?", j.runs)
	}
	cmd := exec.CommandContext(ctx, j.argv[0], j.argv[1:]...)
	cmd.Env = append(os.Environ(), "AGENTX_AGENT=", "NO_COLOR=1")
	if j.root != "" {
		cmd.Env, cmd.Dir = append(cmd.Env, "AGENTX_ROOT="+j.root), j.root
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall = time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v\n%s", j.name, err, out)
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// table prints each job's medians and 90th percentiles, then, for each
// pair, the ratio of the second's medians over the first's.
func table(jobs []*job, pairs [][2]*job) {
	fmt.Printf("%-36s %11s %11s %11s %11s\n", "", "wall p50", "wall p90", "CPU p50", "CPU p90")
	for _, j := range jobs {
		fmt.Printf("%-36s %8.2f ms %8.2f ms %8.2f ms %8.2f ms\n", j.name, ms(pct(j.wall, 50)), ms(pct(j.wall, 90)), ms(pct(j.cpu, 50)), ms(pct(j.cpu, 90)))
	}
	for _, p := range pairs {
		a, b := p[0], p[1]
		fmt.Printf("ratio (%s over %s): wall ×%.2f, CPU ×%.2f\n", b.name, a.name, ms(pct(b.wall, 50))/ms(pct(a.wall, 50)), ms(pct(b.cpu, 50))/ms(pct(a.cpu, 50)))
	}
}

func build(dir, pkg, out string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// helloWorld builds a hello-world Go program as agentx is built.
func helloWorld(tmp string) (string, error) {
	src := filepath.Join(tmp, "hello")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	for name, text := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.26\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello, world\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(tmp, "hello-bin")
	return bin, build(src, ".", bin)
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
