package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentx-cli/agentx/bench/internal/gen"
	"github.com/agentx-cli/agentx/ledger"
)

// shape is one generated workspace.
type shape struct {
	name string
	gen.Shape
}

func main() {
	runs := flag.Int("runs", 25, "runs of each command (the median of these is reported)")
	keep := flag.Bool("keep", false, "keep the generated workspaces and print where they are")
	bin := flag.String("agentx", "", "agentx binary to measure (default: build ./cmd/agentx)")
	flag.Parse()
	if err := run(*runs, *keep, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "monitorbench:", err)
		os.Exit(1)
	}
}

func run(runs int, keep bool, bin string) error {
	tmp, err := os.MkdirTemp("", "agentx-monitorbench-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(tmp)
	}
	if bin == "" {
		bin = filepath.Join(tmp, "agentx")
		build := exec.Command("go", "build", "-o", bin, "./cmd/agentx")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build agentx (run from the repository root): %w", err)
		}
	}
	shapes := []shape{
		{"large: 10,000 ledgers, 100,000 clarifications, 500 open", gen.Shape{Ledgers: 10_000, PerLedger: 10, Open: 500}},
		{"small: 100 ledgers, 1,000 clarifications, 5 open", gen.Shape{Ledgers: 100, PerLedger: 10, Open: 5}},
		{"small, as many open: 100 ledgers, 1,000 clarifications, 500 open", gen.Shape{Ledgers: 100, PerLedger: 10, Open: 500}},
	}
	fmt.Printf("agentx monitor benchmark: %d runs per command, wall time of the whole process\n\n", runs)
	for _, s := range shapes {
		dir := filepath.Join(tmp, fmt.Sprintf("ws-%d-%d", s.Ledgers, s.Open))
		start := time.Now()
		if err := gen.Workspace(dir); err != nil {
			return err
		}
		if err := gen.Ledgers(dir, s.Shape); err != nil {
			return err
		}
		ixSize, ledgerBytes := sizes(dir)
		fmt.Printf("%s\n  generated in %s; ledgers %.1f MB, index %.1f KB\n", s.name, time.Since(start).Round(time.Millisecond),
			float64(ledgerBytes)/1e6, float64(ixSize)/1e3)
		cases := []struct {
			label string
			env   []string
			args  []string
		}{
			{"agentx version (process start, no workspace)", nil, []string{"version"}},
			{"agentx hook start, AGENTX_NO_MONITOR=1 (status write only)", []string{"AGENTX_NO_MONITOR=1"}, []string{"hook", "start", "--issue", "1", "--agent", "ux-designer"}},
			{"agentx hook start (status write + monitor)", nil, []string{"hook", "start", "--issue", "1", "--agent", "ux-designer"}},
			{"agentx ready (index + monitor)", nil, []string{"ready"}},
			{"agentx ready, AGENTX_NO_MONITOR=1", []string{"AGENTX_NO_MONITOR=1"}, []string{"ready"}},
		}
		for _, c := range cases {
			st, err := measure(bin, dir, c.env, c.args, runs)
			if err != nil {
				return fmt.Errorf("%s: %w", c.label, err)
			}
			fmt.Printf("  %-62s median %6.1f ms  p90 %6.1f ms  min %6.1f ms\n", c.label, ms(st.median), ms(st.p90), ms(st.min))
		}
		fmt.Println()
	}
	if keep {
		fmt.Println("workspaces kept under", tmp)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

type stats struct{ median, p90, min time.Duration }

// measure runs the command once to warm up (the page cache, and any first
// action of the monitor), then runs times, and summarises the wall times.
func measure(bin, dir string, env, args []string, runs int) (stats, error) {
	var ds []time.Duration
	for i := 0; i <= runs; i++ {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), "AGENTX_ROOT="+dir, "NO_COLOR=1"), env...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 9 { // 9: a gate said blocked, which is output
				return stats{}, fmt.Errorf("%v: %s", err, out)
			}
		}
		if i > 0 {
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	return stats{median: ds[len(ds)/2], p90: ds[len(ds)*9/10], min: ds[0]}, nil
}

func sizes(dir string) (index, ledgers int64) {
	state := gen.StateDir(dir)
	ixs, _ := os.ReadDir(filepath.Join(state, ledger.IndexDir))
	for _, e := range ixs {
		if fi, err := e.Info(); err == nil {
			index += fi.Size()
		}
	}
	ents, _ := os.ReadDir(filepath.Join(state, ledger.ClarificationsDir))
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			ledgers += fi.Size()
		}
	}
	return index, ledgers
}
