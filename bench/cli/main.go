package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/workflow"
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
	if _, err := workspace.Init(root, workflow.DefaultFiles(), false); err != nil {
		return err
	}
	start := time.Now()
	if err := generate(filepath.Join(root, workspace.Dir, workspace.StateDir), issues, perIssue); err != nil {
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

// generate writes ledgers through the store, so they are what agentx writes:
// most clarifications resolved, one in ten still open.
func generate(stateDir string, issues, perIssue int) error {
	s := ledger.NewStore(stateDir, lock.Options{}, nil)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for i := 1; i <= issues; i++ {
		_, err := s.Update(ctx, i, func(l *ledger.Ledger) error {
			for j := 0; j < perIssue; j++ {
				at := ledger.T(t0.Add(time.Duration(i*perIssue+j) * time.Minute))
				c := &ledger.Clarification{
					ID: l.NextID(), From: "engineer", To: "architect", Topic: "Topic " + strconv.Itoa(j),
					Blocking: true, Status: ledger.Resolved, Round: 1, MaxRounds: 5, Created: at, StaleAfter: at,
					Thread: []ledger.ThreadEntry{
						{Round: 1, From: "engineer", Type: ledger.Question, Body: "Which approach for part " + strconv.Itoa(j) + "?", Timestamp: at},
						{Round: 1, From: "architect", Type: ledger.Answer, Body: "The simple one.", Timestamp: at},
						{Round: 1, From: "engineer", Type: ledger.Resolution, Body: "Done.", Timestamp: at},
					},
					ResolvedAt: &at,
				}
				if (i*perIssue+j)%10 == 0 {
					// open and not yet stale, so the monitor has nothing to do
					c.Status, c.Thread, c.ResolvedAt = ledger.Pending, c.Thread[:1], nil
					c.StaleAfter = ledger.T(time.Now().Add(24 * time.Hour))
				}
				l.Clarifications = append(l.Clarifications, c)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
