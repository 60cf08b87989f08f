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
// back; with -assumptions, on one issue, the same processes then each
// record an assumption on each question they asked (a second row).
func (b *bench) fleet(ctx context.Context, procs, k int, oneIssue bool) ([]fleetRun, error) {
	fr := fleetRun{Issues: "own", Procs: procs, PerProc: k, Asks: procs * k}
	if oneIssue {
		fr.Issues = "one"
	}
	root := filepath.Join(b.tmp, fmt.Sprintf("fleet-%s-%d", fr.Issues, procs))
	if err := b.workspace(ctx, root); err != nil {
		return nil, err
	}
	issueOf := func(w int) int {
		if oneIssue {
			return 1
		}
		return w + 1
	}
	results, wall, err := b.together(ctx, root, procs, k, func(w, i int) []string {
		return b.ask(issueOf(w), fmt.Sprintf("%d.%d", w, i))
	})
	if err != nil {
		return nil, err
	}
	var issues []int
	for w := range procs {
		if w == 0 || !oneIssue {
			issues = append(issues, issueOf(w))
		}
	}
	records, err := recordIDs(root, issues)
	if err != nil {
		return nil, err
	}
	acked := fr.tally(results, wall, func(_, _ int, stdout []byte) string { return printedID(stdout) })
	fr.Writes = checkWrites(acked, records)
	out := []fleetRun{fr}
	if !oneIssue || !b.assumptions {
		return out, nil
	}
	// each process's acknowledged questions, in the order it asked them
	mine := make([][]string, procs)
	for w, ps := range results {
		for _, p := range ps {
			if id := printedID(p.Stdout); p.Exit == 0 && id != "" {
				mine[w] = append(mine[w], id)
			}
		}
	}
	ar := fleetRun{Issues: "one, assume", Procs: procs, PerProc: k}
	body := func(w, i int) string { return fmt.Sprintf("Proceeding on three tries, %d.%d.", w, i) }
	results, wall, err = b.together(ctx, root, procs, k, func(w, i int) []string {
		if i >= len(mine[w]) {
			return nil
		}
		ar.Asks++
		return []string{b.agentx, "clarify", "assume", mine[w][i], "--from", "engineer", "--assumption", body(w, i), "--json"}
	})
	if err != nil {
		return nil, err
	}
	made, err := assumptionBodies(root)
	if err != nil {
		return nil, err
	}
	ar.Writes = checkWrites(ar.tally(results, wall, func(w, i int, _ []byte) string { return body(w, i) }), made)
	return append(out, ar), nil
}

// together runs procs processes at once, process w running argv(w, i) for
// i from 0 to k-1 in a row (an empty argv: nothing), in the workspace at
// root, and returns each one's runs and the wall time of them all.
func (b *bench) together(ctx context.Context, root string, procs, k int, argv func(w, i int) []string) ([][]proc, time.Duration, error) {
	argvs := make([][][]string, procs)
	for w := range procs {
		for i := range k {
			argvs[w] = append(argvs[w], argv(w, i))
		}
	}
	results := make([][]proc, procs)
	var wg sync.WaitGroup
	startGun := make(chan struct{})
	for w := range procs {
		wg.Go(func() {
			<-startGun
			for _, a := range argvs[w] {
				if ctx.Err() != nil {
					return
				}
				if a == nil {
					results[w] = append(results[w], proc{Exit: -2})
					continue
				}
				results[w] = append(results[w], b.r.run(ctx, job{argv: a, root: root, out: true}))
			}
		})
	}
	start := time.Now()
	close(startGun)
	wg.Wait()
	return results, time.Since(start), ctx.Err()
}

// tally sets fr's figures from the runs of a fleet (wall: all of them) and
// returns what each acknowledged run wrote (key: process w's i-th run, of
// its output), in the order of results; runs that did nothing (exit -2)
// are left out.
func (fr *fleetRun) tally(results [][]proc, wall time.Duration, key func(w, i int, stdout []byte) string) []string {
	var all []proc
	var lat, cpu []time.Duration
	var acked []string
	for w, ps := range results {
		for i, p := range ps {
			if p.Exit == -2 {
				continue
			}
			k := key(w, i, p.Stdout)
			all = append(all, p)
			lat, cpu = append(lat, p.Wall), append(cpu, p.CPU)
			if p.Exit == 0 {
				acked = append(acked, k)
			}
		}
	}
	fr.OK = len(acked)
	fr.WallMS = ms(wall)
	fr.OKPerSec = math.Round(float64(fr.OK)/wall.Seconds()*100) / 100
	fr.Latency, fr.CPU = summarize(lat), summarize(cpu)
	fr.Failures = tally(all)
	return acked
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

// assumptionBodies lists the body of every assumption in issue 1's
// ledger.
func assumptionBodies(root string) ([]string, error) {
	l, err := ledger.NewStore(gen.StateDir(root), lock.Options{}, nil).Read(1)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range l.Whole() {
		if c.X != nil {
			for _, a := range c.X.Assumptions {
				out = append(out, a.Body)
			}
		}
	}
	return out, nil
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
