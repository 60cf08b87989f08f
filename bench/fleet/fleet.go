//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/bench/internal/gen"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// fleetRun is one fleet: Procs processes each asking PerProc questions in
// a row, all on issue 1 (Issues "one") or each on its own (Issues "own").
type fleetRun struct {
	Issues   string     `json:"issues"`
	Procs    int        `json:"procs"`
	PerProc  int        `json:"asks_per_proc"`
	Asks     int        `json:"asks"`
	OK       int        `json:"ok"`
	WallMS   float64    `json:"wall_ms"`
	OKPerSec float64    `json:"ok_per_sec"`
	Latency  dist       `json:"latency"`
	CPU      dist       `json:"cpu"`
	Failures []failure  `json:"failures"`
	Writes   writeCheck `json:"writes"`
}

// workspace runs `agentx init` in a new directory dir.
func (b *bench) workspace(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := b.r.must(ctx, job{argv: []string{b.agentx, "init"}, dir: dir}); err != nil {
		return err
	}
	// The bench measures writes, not the per-run question cap: lift it.
	cfg := filepath.Join(dir, ".agentx", "config.toml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		return err
	}
	lifted := bytes.Replace(data, []byte("\nmax_questions = 3"), []byte("\nmax_questions = 0"), 1)
	if bytes.Equal(lifted, data) {
		return fmt.Errorf("%s: no max_questions = 3 to lift", cfg)
	}
	return os.WriteFile(cfg, lifted, 0o644)
}

// ask is the argv of one non-blocking ask, in JSON, on issue; n makes the
// question different from the others.
func (b *bench) ask(issue int, n string) []string {
	return []string{b.agentx, "clarify", "ask", "--issue", strconv.Itoa(issue), "--from", "engineer", "--to", "architect",
		"--topic", "Retry budget", "--question", "Which retry budget applies to call " + n + ", and where is it configured?",
		"--non-blocking", "--json"}
}

// fleet runs procs processes at once, each asking k questions in a row on a
// fresh workspace, on one issue or each on its own, then reads the ledgers
// back.
func (b *bench) fleet(ctx context.Context, procs, k int, oneIssue bool) (fleetRun, error) {
	fr := fleetRun{Issues: "own", Procs: procs, PerProc: k, Asks: procs * k}
	if oneIssue {
		fr.Issues = "one"
	}
	root := filepath.Join(b.tmp, fmt.Sprintf("fleet-%s-%d", fr.Issues, procs))
	if err := b.workspace(ctx, root); err != nil {
		return fr, err
	}
	issueOf := func(w int) int {
		if oneIssue {
			return 1
		}
		return w + 1
	}
	results := make([][]proc, procs)
	var wg sync.WaitGroup
	startGun := make(chan struct{})
	for w := range procs {
		wg.Go(func() {
			<-startGun
			for i := range k {
				if ctx.Err() != nil {
					return
				}
				p := b.r.run(ctx, job{argv: b.ask(issueOf(w), fmt.Sprintf("%d.%d", w, i)), root: root, out: true})
				results[w] = append(results[w], p)
			}
		})
	}
	start := time.Now()
	close(startGun)
	wg.Wait()
	wall := time.Since(start)
	if err := ctx.Err(); err != nil {
		return fr, err
	}

	var all []proc
	var lat, cpu []time.Duration
	var acked []string
	for _, ps := range results {
		for _, p := range ps {
			all = append(all, p)
			lat, cpu = append(lat, p.Wall), append(cpu, p.CPU)
			if p.Exit == 0 {
				acked = append(acked, printedID(p.Stdout))
			}
		}
	}
	var issues []int
	for w := range procs {
		if w == 0 || !oneIssue {
			issues = append(issues, issueOf(w))
		}
	}
	records, err := recordIDs(root, issues)
	if err != nil {
		return fr, err
	}
	fr.OK = len(acked)
	fr.WallMS = ms(wall)
	fr.OKPerSec = math.Round(float64(fr.OK)/wall.Seconds()*100) / 100
	fr.Latency, fr.CPU = summarize(lat), summarize(cpu)
	fr.Failures = tally(all)
	fr.Writes = checkWrites(acked, records)
	return fr, nil
}

// printedID is data.id of an agentx --json answer, or "".
func printedID(stdout []byte) string {
	var v struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(stdout, &v) != nil {
		return ""
	}
	return v.Data.ID
}

// recordIDs lists the ids of every record in the issues' ledgers.
func recordIDs(root string, issues []int) ([]string, error) {
	store := ledger.NewStore(gen.StateDir(root), lock.Options{}, nil)
	var ids []string
	for _, n := range issues {
		l, err := store.Read(n)
		if err != nil {
			return nil, err
		}
		for _, c := range l.Clarifications {
			ids = append(ids, c.ID)
		}
	}
	return ids, nil
}
