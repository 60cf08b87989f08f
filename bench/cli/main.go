package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/agentx-cli/agentx/bench/internal/gen"
)

func main() {
	issues := flag.Int("issues", 1000, "issue ledgers in the generated workspace")
	perIssue := flag.Int("per-issue", 5, "clarifications per ledger")
	runs := flag.Int("runs", 30, "runs per command")
	keep := flag.String("keep", "", "generate the workspace in this directory and keep it")
	flag.Parse()
	if err := run(*issues, *perIssue, *runs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(issues, perIssue, runs int, keep string) error {
	tmp, err := os.MkdirTemp("", "agentx-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "agentx")
	build := exec.Command("go", "build", "-o", bin, "./cmd/agentx")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	root := filepath.Join(tmp, "repo")
	if keep != "" {
		root = keep
	}
	if err := gen.Workspace(root); err != nil {
		return err
	}
	start := time.Now()
	// one clarification in ten left open, as in a workspace in daily use
	if err := gen.Ledgers(root, gen.Shape{Ledgers: issues, PerLedger: perIssue, Open: issues * perIssue / 10}); err != nil {
		return err
	}
	fmt.Printf("workspace: %d ledgers, %d clarifications (generated in %s)\n", issues, issues*perIssue, time.Since(start).Round(time.Millisecond))

	env := append(os.Environ(), "AGENTX_ROOT="+root)
	n := 0
	measure := func(name string, args func() []string) error {
		var ds []time.Duration
		for i := 0; i < runs; i++ {
			cmd := exec.Command(bin, args()...)
			cmd.Env, cmd.Dir = env, root
			t := time.Now()
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %v\n%s", name, err, out)
			}
			ds = append(ds, time.Since(t))
		}
		slices.Sort(ds)
		fmt.Printf("%-44s median %7.2f ms   p90 %7.2f ms   (%d runs)\n", name, ms(ds[len(ds)/2]), ms(ds[len(ds)*9/10]), runs)
		return nil
	}
	ask := func() []string {
		n++
		return []string{"clarify", "ask", "--issue", strconv.Itoa(issues + 1 + n%50), "--from", "engineer", "--to", "architect", "--topic", "Bench", "--question", "Which cache TTL?"}
	}
	steps := []struct {
		name string
		args func() []string
	}{
		{"agentx version (process start)", func() []string { return []string{"version"} }},
		{"agentx clarify ask (no responder)", ask},
		{"agentx clarify list (open)", func() []string { return []string{"clarify", "list"} }},
		{"agentx clarify list --all", func() []string { return []string{"clarify", "list", "--all"} }},
		{"agentx clarify show --issue N", func() []string { return []string{"clarify", "show", "--issue", "500"} }},
		{"agentx ready", func() []string { return []string{"ready"} }},
	}
	for _, s := range steps {
		if err := measure(s.name, s.args); err != nil {
			return err
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
