// Command memory measures what decision memory costs an ask, as a user
// runs one: the built agentx started as a process (`clarify ask
// --non-blocking`, each on an issue of its own) on a workspace with no
// resolved clarification, with 10, and with 10,000 (in 100 ledgers of a
// hundred, and in 1,000 of ten), the question one asked before on one of
// 24 topics; and on those with [memory] reuse = "off", which tells apart
// what decision memory costs from what the workspace's ledgers cost every
// ask anyway (the side monitor looks at each ledger that changed). The
// cases take turns, run after run, so that a busy machine slows them
// alike. It prints the median and 90th percentile of wall and CPU (user +
// system) time, and each median over the empty workspace's.
//
//	go run ./bench/memory [-runs 60] [-bin PATH [-no-off]]
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/agentx-cli/agentx/bench/internal/gen"
)

func main() {
	runs := flag.Int("runs", 60, "asks in each workspace")
	bin := flag.String("bin", "", "the agentx binary to measure (default: built from this tree)")
	noOff := flag.Bool("no-off", false, "leave out the cases with [memory] reuse = \"off\" (a binary of a version without [memory])")
	flag.Parse()
	if err := run(*runs, *bin, *noOff); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// workspace is one case: a generated workspace, and what an ask there costs.
type workspace struct {
	name      string
	root      string
	wall, cpu []time.Duration
}

func run(runs int, bin string, noOff bool) error {
	tmp, err := os.MkdirTemp("", "agentx-memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin == "" {
		bin = filepath.Join(tmp, "agentx")
		build := exec.Command("go", "build", "-o", bin, "./cmd/agentx")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	cases := []struct {
		name     string
		ledgers  int
		perIssue int
		config   string
	}{
		{"no resolved clarification", 0, 0, ""},
		{"10 resolved", 10, 1, ""},
		{"10,000 resolved in 100 ledgers", 100, 100, ""},
		{"10,000 resolved in 100 ledgers, reuse off", 100, 100, "\n[memory]\nreuse = \"off\"\n"},
		{"10,000 resolved in 1,000 ledgers", 1000, 10, ""},
		{"10,000 resolved in 1,000 ledgers, reuse off", 1000, 10, "\n[memory]\nreuse = \"off\"\n"},
	}
	// the question: one asked before, with a topic of the generated
	// workspaces (gen.Record: "Topic WORD")
	r := rand.New(rand.NewPCG(7, 7))
	topic, question := "Topic adapter", gen.Sentence(r, 12)
	var ws []*workspace
	for i, c := range cases {
		if noOff && c.config != "" {
			continue
		}
		w := &workspace{name: c.name, root: filepath.Join(tmp, "ws"+strconv.Itoa(i))}
		if err := gen.Workspace(w.root); err != nil {
			return err
		}
		if c.ledgers > 0 {
			if err := gen.Ledgers(w.root, gen.Shape{Ledgers: c.ledgers, PerLedger: c.perIssue}); err != nil {
				return err
			}
		}
		if c.config != "" {
			f, err := os.OpenFile(filepath.Join(w.root, ".agentx", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteString(c.config)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
		// a first ask makes the decision files (once per workspace)
		if _, _, err := ask(bin, w.root, 1_000_000, topic, question); err != nil {
			return err
		}
		ws = append(ws, w)
	}
	for i := 0; i < runs; i++ {
		for _, w := range ws {
			wall, cpu, err := ask(bin, w.root, 1_000_001+i, topic, question)
			if err != nil {
				return err
			}
			w.wall, w.cpu = append(w.wall, wall), append(w.cpu, cpu)
		}
	}
	fmt.Printf("agentx clarify ask --non-blocking, %d runs each, interleaved (an issue of its own each time)\n\n", runs)
	fmt.Printf("%-44s %12s %12s %12s %12s %8s %8s\n", "workspace", "wall p50", "wall p90", "CPU p50", "CPU p90", "wall ×", "CPU ×")
	base := ws[0]
	for _, w := range ws {
		fmt.Printf("%-44s %9.2f ms %9.2f ms %9.2f ms %9.2f ms %8.2f %8.2f\n", w.name,
			ms(pct(w.wall, 50)), ms(pct(w.wall, 90)), ms(pct(w.cpu, 50)), ms(pct(w.cpu, 90)),
			ms(pct(w.wall, 50))/ms(pct(base.wall, 50)), ms(pct(w.cpu, 50))/ms(pct(base.cpu, 50)))
	}
	return nil
}

// ask runs one ask in the workspace at root, and returns its wall and CPU
// time.
func ask(bin, root string, issue int, topic, question string) (wall, cpu time.Duration, err error) {
	cmd := exec.Command(bin, "clarify", "ask", "--issue", strconv.Itoa(issue), "--from", "engineer", "--to", "architect",
		"--topic", topic, "--question", question, "--non-blocking", "--json")
	cmd.Env = append(os.Environ(), "AGENTX_ROOT="+root, "AGENTX_AGENT=")
	cmd.Dir = root
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall = time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("ask in %s: %v\n%s", root, err, out)
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
