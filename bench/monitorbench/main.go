package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
	"github.com/agentx-cli/agentx/workflow"
)

// shape is one generated workspace.
type shape struct {
	name    string
	ledgers int
	perLed  int // clarifications per ledger
	open    int // open clarifications, spread two per issue
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
		{"large: 10,000 ledgers, 100,000 clarifications, 500 open", 10_000, 10, 500},
		{"small: 100 ledgers, 1,000 clarifications, 5 open", 100, 10, 5},
		{"small, as many open: 100 ledgers, 1,000 clarifications, 500 open", 100, 10, 500},
	}
	fmt.Printf("agentx monitor benchmark: %d runs per command, wall time of the whole process\n\n", runs)
	for _, s := range shapes {
		dir := filepath.Join(tmp, fmt.Sprintf("ws-%d-%d", s.ledgers, s.open))
		start := time.Now()
		if err := generate(dir, s); err != nil {
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

var (
	askers    = []string{"engineer", "architect", "reviewer"}
	targets   = map[string][]string{"engineer": {"architect", "product-manager"}, "architect": {"product-manager"}, "reviewer": {"engineer", "architect"}}
	words     = strings.Fields("adapter schema cache queue retry tenant billing export import index migration rollout flag token session pool shard replica timeout budget quota audit webhook report")
	openState = []ledger.Status{ledger.Pending, ledger.Answered, ledger.Pending, ledger.Stale}
)

func sentence(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[r.IntN(len(words))]
	}
	return "Should the " + strings.Join(ws, " ") + " change for this issue?"
}

// generate writes a workspace: the default config and workflows, s.ledgers
// ledgers of s.perLed clarifications each (history: resolved, with a
// question, an answer and a resolution), s.open of them left open (the last
// two, or more, of the first issues; due a year from now so the monitor has
// nothing to do), and then builds the index from them as agentx would.
func generate(dir string, s shape) error {
	agentx := filepath.Join(dir, ".agentx")
	for name, data := range workflow.DefaultFiles() {
		p := filepath.Join(agentx, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	state := filepath.Join(agentx, "state")
	if err := os.MkdirAll(filepath.Join(state, ledger.ClarificationsDir), 0o755); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(1, uint64(s.ledgers)))
	now := time.Now().UTC()
	past := now.Add(-90 * 24 * time.Hour)
	open := s.open
	perIssue := max(2, (s.open+s.ledgers-1)/s.ledgers) // open ones per issue, on the first issues
	store := ledger.NewStore(state, lock.Options{}, nil)
	for n := 1; n <= s.ledgers; n++ {
		l := &ledger.Ledger{IssueNumber: n}
		for i := 1; i <= s.perLed; i++ {
			from := askers[r.IntN(len(askers))]
			to := targets[from][r.IntN(len(targets[from]))]
			t := past.Add(time.Duration(n*s.perLed+i) * time.Minute)
			c := &ledger.Clarification{
				ID: ledger.FormatID(n, i), From: from, To: to, Topic: "Topic " + words[r.IntN(len(words))],
				Blocking: r.IntN(3) > 0, Status: ledger.Resolved, Round: 1, MaxRounds: 5,
				Created: ledger.T(t), StaleAfter: ledger.T(t.Add(30 * time.Minute)),
				Thread: []ledger.ThreadEntry{{Round: 1, From: from, Type: ledger.Question, Body: sentence(r, 12), Timestamp: ledger.T(t)}},
			}
			last := i > s.perLed-perIssue && open > 0
			if last {
				open--
				c.Status = openState[open%len(openState)]
				c.Created = ledger.T(now.Add(-time.Minute))
				c.Thread[0].Timestamp = c.Created
				c.StaleAfter = ledger.T(now.Add(365 * 24 * time.Hour))
			}
			if c.Status != ledger.Pending && c.Status != ledger.Stale {
				c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 1, From: to, Type: ledger.Answer, Body: sentence(r, 30), Timestamp: ledger.T(t.Add(2 * time.Minute))})
			}
			if c.Status == ledger.Resolved {
				rt := ledger.T(t.Add(3 * time.Minute))
				c.ResolvedAt = &rt
				c.Thread = append(c.Thread, ledger.ThreadEntry{Round: 1, From: from, Type: ledger.Resolution, Body: "Proceeding with that.", Timestamp: rt})
			}
			l.Clarifications = append(l.Clarifications, c)
		}
		data, err := ledger.Encode(l)
		if err != nil {
			return err
		}
		if err := os.WriteFile(store.Path(n), data, 0o644); err != nil {
			return err
		}
	}
	_, skipped, err := store.RebuildIndex(context.Background())
	if err != nil {
		return err
	}
	if len(skipped) > 0 {
		return fmt.Errorf("generated ledgers did not read back: %v", skipped[0])
	}
	return nil
}

func sizes(dir string) (index, ledgers int64) {
	state := filepath.Join(dir, ".agentx", "state")
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
