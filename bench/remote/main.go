package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/ledger"
)

func main() {
	runsFlag := flag.String("runs", "1/1,4/1,8/1,8/8", "rows to measure, comma-separated HOSTS/ISSUES: ISSUES is 1 (every host on one issue) or HOSTS (each host on its own)")
	k := flag.Int("k", 15, "asks (and floor rounds) per host, in a row")
	kAlone := flag.Int("k1", 60, "asks (and floor rounds) of the one host in a row of one host: its p50 is the figure compared with the floor, so it takes more rounds than -k")
	block := flag.Int("block", 5, "rounds per host in one go: the floor and agentx take turns, block by block, so that both see the same load")
	binFlag := flag.String("bin", "", "measure this agentx binary (default: build ./cmd/agentx with CGO_ENABLED=0, as the README installs it)")
	baseFlag := flag.String("base", "", "also measure this agentx binary (an earlier build), in the same run, taking turns with the other")
	ledgerMB := flag.Int("ledger-mb", 0, "instead: measure the memory of ready on a host with no local copy when an issue's shared ledger is a body of this many MiB")
	keep := flag.Bool("keep", false, "keep the temporary directories")
	sequences = flag.Int("sequences", 0, "also list, for each row, the N most common runs of git commands one ask made (each agentx process's, in order), and how many asks made each")
	slowest = flag.Int("slowest", 0, "also list the N slowest asks of each row: host, round (0: each host's first), latency, and each git command the ask ran, with when it started and ended (ms from the ask's start) and its exit code when not 0")
	answers = flag.Bool("answers", false, "also time, once each row's asks are made, every host answering its questions at once on the same issue (changes other than asks)")
	assumptions = flag.Bool("assumptions", false, "also time, once each row's asks are made (before -answers), every host recording an assumption on its questions at once (a change to agentx's own key alone)")
	resolutions = flag.Bool("resolutions", false, "with -answers: also time, once the answers are made, every host resolving its questions at once (a change that closes the record)")
	together = flag.Bool("together", false, "with -assumptions and -answers: make both at the same moment, the next host answering each question as its asker records an assumption on it")
	procs = flag.Int("procs", 1, "agentx processes of each host asking at once in one workspace (several agents in one clone), each making the row's rounds: asks = hosts × procs × rounds; the floor stays one a host")
	latency := flag.Duration("latency", 0, "added to every exchange with the remote (each upload-pack and receive-pack, the floor's too), as a remote across a network adds")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	tmp, err := os.MkdirTemp("", "agentx-bench-remote")
	check(err)
	if !*keep {
		defer os.RemoveAll(tmp)
	}
	bin := *binFlag
	if bin == "" {
		bin = filepath.Join(tmp, "agentx")
		// as the README installs it: a static binary, which starts in
		// about 1.4 ms less CPU than one linked against the C library
		build := exec.Command("go", "build", "-o", bin, "./cmd/agentx")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "go build: %v: %s\n", err, out)
			os.Exit(1)
		}
	}
	gitv, _ := exec.Command("git", "--version").Output()
	fmt.Printf("%d CPUs, %s, %s/%s, %s, load average %s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		strings.TrimSpace(string(gitv)), loadavg())
	if *ledgerMB > 0 {
		memory(ctx, filepath.Join(tmp, "memory"), bin, *ledgerMB)
		return
	}
	builds := []build{{name: "this", bin: bin}}
	if *baseFlag != "" {
		builds = append(builds, build{name: "base", bin: *baseFlag})
	}
	if *latency > 0 {
		fmt.Printf("%s added to every exchange with the remote\n", *latency)
	}
	fmt.Printf("\n| build | hosts | issues | asks | ok | busy | failed | rounds/ask | git/ask | p50 ms | p99 ms | floor p50 | floor p99 | p50 ÷ floor | p99 ÷ floor | ledger floor p50 | ledger floor p99 | p50 ÷ ledger floor | ok/s | floor/s | records | dense | load |\n")
	fmt.Printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|\n")
	for i, f := range strings.Split(*runsFlag, ",") {
		h, is, ok := strings.Cut(strings.TrimSpace(f), "/")
		hosts, err1 := strconv.Atoi(h)
		issues, err2 := strconv.Atoi(is)
		if !ok || err1 != nil || err2 != nil || hosts < 1 || (issues != 1 && issues != hosts) {
			fmt.Fprintf(os.Stderr, "-runs: %q is not HOSTS/1 or HOSTS/HOSTS\n", f)
			os.Exit(2)
		}
		row := builds
		if hosts == 1 { // and the ask without the remote
			row = append(slices.Clone(builds), build{name: "this, no [remote]", bin: bin, local: true})
		}
		rounds := *k
		if hosts == 1 {
			rounds = *kAlone
		}
		run(ctx, filepath.Join(tmp, strconv.Itoa(i)), row, hosts, issues, rounds, max(*block, 1), *latency)
	}
}

// build is an agentx binary measured, and its name in the table; local:
// without [remote], what the ask costs on one machine.
type build struct {
	name, bin string
	local     bool
}

// world is a bare repository and its clones, each an agentx workspace
// whose [remote] is the bare repository.
type world struct {
	bare   string
	hosts  []string
	pushes string // where the receive-pack wrapper counts pushes
	pack   string // the wrapper
	// floorPack is the same wrapper for the floor's pushes, counting
	// them apart
	floorPack string
	upload    string // the upload-pack wrapper (fetch, ls-remote): the added latency, if any
	// gitDir holds a git wrapper, first on agentx's PATH, that logs each
	// git command to gitLog: git commands per ask, and which
	gitDir, gitLog string
	// asks maps each ask's "host H round N" to its agentx process and
	// start, for the slowest asks' git commands (-slowest)
	asksMu sync.Mutex
	asks   map[string]askRun
}

// askRun is one ask's agentx process and when it started.
type askRun struct {
	pid   int
	start time.Time
}

func newWorld(ctx context.Context, dir, bin string, hosts int, remote bool, latency time.Duration) *world {
	w := &world{bare: filepath.Join(dir, "remote.git"), pushes: filepath.Join(dir, "pushes"), pack: filepath.Join(dir, "receive-pack"),
		floorPack: filepath.Join(dir, "receive-pack-floor"), upload: filepath.Join(dir, "upload-pack"),
		gitDir: filepath.Join(dir, "gitbin"), gitLog: filepath.Join(dir, "git.log"), asks: map[string]askRun{}}
	check(os.MkdirAll(w.gitDir, 0o755))
	git(dir, "init", "--quiet", "--bare", w.bare)
	// Each push reaching the remote appends a byte: rounds per ask. The
	// floor's pushes go through the same wrapper, counted apart, so that
	// both pay its shell. Every exchange, the floor's too, waits the
	// latency added first.
	delay := ""
	if latency > 0 {
		delay = fmt.Sprintf("sleep %.3f\n", latency.Seconds())
	}
	check(os.WriteFile(w.pack, []byte("#!/bin/sh\n"+delay+"printf x >> '"+w.pushes+"'\nexec git-receive-pack \"$@\"\n"), 0o755))
	check(os.WriteFile(w.floorPack, []byte("#!/bin/sh\n"+delay+"printf x >> '"+w.pushes+".floor'\nexec git-receive-pack \"$@\"\n"), 0o755))
	check(os.WriteFile(w.upload, []byte("#!/bin/sh\n"+delay+"exec git-upload-pack \"$@\"\n"), 0o755))
	realGit, err := exec.LookPath("git")
	check(err)
	// the subcommand is the first argument not an option (agentx runs
	// git -C DIR -c K=V ... SUBCOMMAND)
	check(os.WriteFile(filepath.Join(w.gitDir, "git"), []byte(`#!/bin/sh
sub=
skip=
for a in "$@"; do
  if [ -n "$skip" ]; then skip=; continue; fi
  case "$a" in
    -C|-c) skip=1 ;;
    -*) ;;
    *) sub=$a; break ;;
  esac
done
echo "$PPID $sub" >> '`+w.gitLog+`'
`+timed(realGit, w.gitLog+".times")+`
`), 0o755))
	for i := range hosts {
		h := filepath.Join(dir, fmt.Sprintf("host%d", i))
		git(dir, "init", "--quiet", h)
		git(h, "remote", "add", "origin", w.bare)
		cmd := exec.CommandContext(ctx, bin, "init")
		cmd.Dir = h
		check(cmd.Run())
		cfg := filepath.Join(h, ".agentx", "config.toml")
		data, err := os.ReadFile(cfg)
		check(err)
		// Every ask counts: no cap on one agent's questions.
		data = bytes.Replace(data, []byte("\nmax_questions = 3\n"), []byte("\nmax_questions = 0\n"), 1)
		if remote {
			data = append(data, []byte("\n[remote]\ngit = \"origin\"\n")...)
		}
		check(os.WriteFile(cfg, data, 0o644))
		w.hosts = append(w.hosts, h)
	}
	return w
}

// timed is the git wrapper's last lines: git run, with -slowest each
// command's start and end (Unix ns) and exit code logged to times first
// (two date processes a command: only when asked).
func timed(realGit, times string) string {
	if *slowest == 0 {
		return "exec '" + realGit + "' \"$@\""
	}
	return "t0=$(date +%s%N)\n'" + realGit + "' \"$@\"\nrc=$?\necho \"$PPID $t0 $(date +%s%N) $sub $rc\" >> '" + times + "'\nexit $rc"
}

// timeline is the git commands agentx process pid ran, each with its
// start and end in ms from start, and its exit code when not 0, from the
// wrapper's times log.
func timeline(times string, pid int, start time.Time) string {
	data, _ := os.ReadFile(times)
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 5 || f[0] != strconv.Itoa(pid) {
			continue
		}
		t0, err1 := strconv.ParseInt(f[1], 10, 64)
		t1, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		rel := func(ns int64) float64 { return ms(time.Unix(0, ns).Sub(start)) }
		c := fmt.Sprintf("%s %.0f-%.0f", f[3], rel(t0), rel(t1))
		if f[4] != "0" {
			c += " exit " + f[4]
		}
		out = append(out, c)
	}
	return strings.Join(out, ", ")
}

// result is one side of a row: latencies of the operations that succeeded,
// and how many were refused as busy.
type result struct {
	lat    []time.Duration
	slow   []string // the slowest operations: host, round, latency (slowest)
	busy   int      // refused as remote_busy: nothing written
	failed int      // any other failure
	wall   time.Duration
}

// each runs op for rounds from to to (excluded) in a row on every host,
// all hosts at once, adding to r.
func each(w *world, r *result, from, to, procs int, op func(host, n int) (time.Duration, error)) {
	var mu sync.Mutex
	start := time.Now()
	var wg sync.WaitGroup
	for i := range w.hosts {
		for j := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				eachRound(&mu, r, from, to, func(n int) (time.Duration, error) { return op(i, n*procs+j) }, i, j, procs)
			}()
		}
	}
	wg.Wait()
	r.wall += time.Since(start)
}

// eachRound is process j (of procs) of host i making rounds from to to,
// each ask's round numbered n*procs+j, into r.
func eachRound(mu *sync.Mutex, r *result, from, to int, op func(n int) (time.Duration, error), i, j, procs int) {
	for n := from; n < to; n++ {
		d, err := op(n)
		mu.Lock()
		switch {
		case err == nil:
			r.lat = append(r.lat, d)
			r.slow = append(r.slow, fmt.Sprintf("%08d host %d round %d: %.0f ms", d.Microseconds(), i, n*procs+j, ms(d)))
		case errors.Is(err, errBusy):
			r.busy++
		case errors.Is(err, errSkip):
		default:
			r.failed++
			fmt.Fprintln(os.Stderr, err)
		}
		mu.Unlock()
	}
}

func run(ctx context.Context, dir string, builds []build, hosts, issues, k, block int, latency time.Duration) {
	worlds := make([]*world, len(builds))
	for i, b := range builds {
		worlds[i] = newWorld(ctx, filepath.Join(dir, strconv.Itoa(i)), b.bin, hosts, !b.local, latency)
	}
	w := worlds[0] // the floor's
	// The floor: k trivial commits per host, made before the clock runs,
	// then per round a fetch of the host's own ref and a push of the next.
	commits := make([][]string, hosts)
	for i, h := range w.hosts {
		empty := strings.TrimSpace(gitOut(h, "hash-object", "-t", "tree", "-w", "--stdin"))
		parent := ""
		for n := range k {
			args := []string{"commit-tree", empty, "-m", fmt.Sprintf("floor %d", n)}
			if parent != "" {
				args = append(args, "-p", parent)
			}
			parent = strings.TrimSpace(gitOut(h, args...))
			commits[i] = append(commits[i], parent)
		}
	}
	// The ledger floor: the same fetch and push, of commits whose tree
	// holds the ledger agentx writes at that ask (made beforehand by the
	// same asks in a workspace without [remote]), so that git carries
	// the same bytes, and computes the same deltas, as agentx's push.
	versions := ledgerVersions(ctx, filepath.Join(dir, "ledgers"), builds[0].bin, hosts, issues, k)
	ledgerCommits := make([][]string, hosts)
	for i, h := range w.hosts {
		parent := ""
		for n := range k {
			var v []byte
			if issues > 1 {
				v = versions[n]
			} else {
				v = versions[n*hosts+i]
			}
			blob := strings.TrimSpace(gitIn(h, string(v), "hash-object", "-w", "--stdin"))
			tree := strings.TrimSpace(gitIn(h, "100644 blob "+blob+"\tissue-1.json\n", "mktree"))
			args := []string{"commit-tree", tree, "-m", fmt.Sprintf("ledger floor %d", n)}
			if parent != "" {
				args = append(args, "-p", parent)
			}
			parent = strings.TrimSpace(gitOut(h, args...))
			ledgerCommits[i] = append(ledgerCommits[i], parent)
		}
	}
	pushFloor := func(prefix string, chains [][]string) func(i, n int) (time.Duration, error) {
		return func(i, n int) (time.Duration, error) {
			ref := fmt.Sprintf("%s/host%d", prefix, i)
			t0 := time.Now()
			err := exec.CommandContext(ctx, "git", "-C", w.hosts[i], "-c", "remote.origin.uploadpack="+w.upload, "fetch", "--quiet", "--no-tags", "origin", "+"+ref+":"+ref).Run()
			if n == 0 {
				err = nil // the ref is not there yet: git fetch fails, as it costs
			}
			if err == nil {
				err = exec.CommandContext(ctx, "git", "-C", w.hosts[i], "-c", "remote.origin.receivepack="+w.floorPack, "push", "--quiet", "origin", chains[i][n]+":"+ref).Run()
			}
			if err != nil {
				err = fmt.Errorf("floor %s, host %d round %d: %w", prefix, i, n, err)
			}
			return time.Since(t0), err
		}
	}
	ledgerFloorOp := pushFloor("refs/floor-ledger", ledgerCommits)
	floorOp := pushFloor("refs/floor", commits)
	askOp := func(bin string, w *world) func(i, n int) (time.Duration, error) {
		return func(i, n int) (time.Duration, error) {
			issue := 1
			if issues > 1 {
				issue = i + 1
			}
			return onHost(ctx, w, i, "ask", w.started(i, n), bin, "clarify", "ask", "--issue", strconv.Itoa(issue), "--from", "engineer", "--to", "architect",
				"--topic", "Retry budget", "--question", fmt.Sprintf("host %d, ask %d: which retry budget applies?", i, n), "--non-blocking", "--json")
		}
	}
	load := loadavg()
	var floor, ledgerFloor result
	asks := make([]result, len(builds))
	for b := 0; b < k; b += block {
		each(w, &floor, b, min(b+block, k), 1, floorOp)
		each(w, &ledgerFloor, b, min(b+block, k), 1, ledgerFloorOp)
		for j, bd := range builds {
			each(worlds[j], &asks[j], b, min(b+block, k), *procs, askOp(bd.bin, worlds[j]))
		}
	}
	slices.Sort(floor.lat)
	slices.Sort(ledgerFloor.lat)
	for j, bd := range builds {
		a := asks[j]
		slices.Sort(a.lat)
		pushes, _ := os.ReadFile(worlds[j].pushes)
		records, dense := 0, true
		for issue := 1; issue <= issues; issue++ {
			n, ok := verify(worlds[j].bare, issue)
			records += n
			dense = dense && ok
		}
		ok := len(a.lat)
		gitPerAsk, which := gitCommands(worlds[j].gitLog, ok)
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %d | %.2f | %.2f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.0f | %.0f | %.2f | %.1f | %.1f | %d | %v | %s |\n",
			bd.name, hosts, issues, hosts*k**procs, ok, a.busy, a.failed, float64(len(pushes))/float64(max(ok, 1)), gitPerAsk,
			ms(pct(a.lat, 50)), ms(pct(a.lat, 99)), ms(pct(floor.lat, 50)), ms(pct(floor.lat, 99)),
			ratio(pct(a.lat, 50), pct(floor.lat, 50)), ratio(pct(a.lat, 99), pct(floor.lat, 99)),
			ms(pct(ledgerFloor.lat, 50)), ms(pct(ledgerFloor.lat, 99)), ratio(pct(a.lat, 50), pct(ledgerFloor.lat, 50)),
			float64(ok)/a.wall.Seconds(), float64(len(floor.lat))/floor.wall.Seconds(), records, dense, strings.Fields(load)[0])
		defer fmt.Printf("  %s, %d/%d: git commands per ask: %s\n", bd.name, hosts, issues, which)
		if *sequences > 0 {
			defer fmt.Printf("  %s, %d/%d: the git commands of one ask, most common first: %s\n", bd.name, hosts, issues, gitSequences(worlds[j].gitLog, *sequences))
		}
		defer fmt.Print(slowestLines(bd.name, worlds[j], &a))
	}
	// each build's changes one after the other, so that one build's slow
	// phase does not leave the other's issue quiet (a host that has seen
	// no other host's change for 30 s writes as on a quiet issue)
	var chs []change
	if *assumptions {
		chs = append(chs, assuming)
	}
	if *answers {
		chs = append(chs, answering)
	}
	if *resolutions && *answers {
		chs = append(chs, resolving)
	}
	for j, bd := range builds {
		switch {
		case bd.local || len(chs) == 0:
		case *together:
			changeAll(ctx, slices.DeleteFunc(slices.Clone(chs), func(c change) bool { return c.verb == resolving.verb }), bd.name, bd.bin, worlds[j], hosts, issues, k, *procs)
			if *resolutions && *answers {
				changeAll(ctx, []change{resolving}, bd.name, bd.bin, worlds[j], hosts, issues, k, *procs) // on the answered records
			}
		default:
			for _, ch := range chs {
				changeAll(ctx, []change{ch}, bd.name, bd.bin, worlds[j], hosts, issues, k, *procs)
			}
		}
	}
	if floor.failed > 0 || ledgerFloor.failed > 0 {
		fmt.Fprintf(os.Stderr, "floor: %d and %d of %d rounds failed\n", floor.failed, ledgerFloor.failed, hosts*k)
	}
}

// ledgerVersions runs, in a workspace of its own without [remote], the
// asks a row makes (hosts x k, in the order of the rounds; with an issue
// per host, k on one issue) and returns the ledger file after each.
func ledgerVersions(ctx context.Context, dir, bin string, hosts, issues, k int) [][]byte {
	w := newWorld(ctx, dir, bin, 1, false, 0)
	n := hosts * k
	if issues > 1 {
		n = k
	}
	var out [][]byte
	for a := range n {
		cmd := exec.CommandContext(ctx, bin, "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect",
			"--topic", "Retry budget", "--question", fmt.Sprintf("host %d, ask %d: which retry budget applies?", a%hosts, a/hosts), "--non-blocking", "--json")
		cmd.Dir = w.hosts[0]
		cmd.Env = append(os.Environ(), "AGENTX_NO_MONITOR=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			check(fmt.Errorf("ledger floor: ask: %w: %s", err, out))
		}
		data, err := os.ReadFile(filepath.Join(w.hosts[0], ".agentx", "state", "clarifications", "issue-1.json"))
		check(err)
		out = append(out, data)
	}
	return out
}

// onHost runs argv, an agentx command (what), on host i of w, telling
// started (when not nil) its process and start, and returns how long it
// took; errBusy when it was refused as remote_busy.
func onHost(ctx context.Context, w *world, i int, what string, started func(pid int, t0 time.Time), argv ...string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = w.hosts[i]
	cmd.Env = hostEnv(w)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	err := cmd.Start()
	if err == nil {
		if started != nil {
			started(cmd.Process.Pid, t0)
		}
		err = cmd.Wait()
	}
	d := time.Since(t0)
	switch {
	case err != nil && strings.Contains(errb.String(), "remote_busy"):
		err = errBusy
	case err != nil:
		err = fmt.Errorf("%s failed: %w: %s", what, err, errb.String())
	}
	return d, err
}

// hostEnv is the environment of agentx on a host of w: no side monitor,
// and only agentx's pushes counted (its git runs with the wrapper).
func hostEnv(w *world) []string {
	return append(os.Environ(), "AGENTX_NO_MONITOR=1", "GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=remote.origin.receivepack", "GIT_CONFIG_VALUE_0="+w.pack,
		"GIT_CONFIG_KEY_1=remote.origin.uploadpack", "GIT_CONFIG_VALUE_1="+w.upload,
		"PATH="+w.gitDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// verify reads the remote's ledger of issue: its record count, and
// whether the ids are dense.
func verify(bare string, issue int) (int, bool) {
	l := remoteLedger(bare, issue)
	if l == nil {
		return 0, false
	}
	for i, c := range l.Clarifications {
		if c.ID != ledger.FormatID(issue, i+1) {
			return len(l.Clarifications), false
		}
	}
	return len(l.Clarifications), true
}

// gitCommands reads the git wrapper's log: git commands per ask (ok asks
// acknowledged), and per subcommand, most first.
func gitCommands(log string, ok int) (float64, string) {
	data, _ := os.ReadFile(log)
	count := map[string]int{}
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		// each line: the agentx process, the subcommand
		if f := strings.Fields(l); len(f) == 2 {
			count[f[1]]++
			n++
		}
	}
	subs := make([]string, 0, len(count))
	for c := range count {
		subs = append(subs, c)
	}
	slices.SortFunc(subs, func(a, b string) int { return count[b] - count[a] })
	var parts []string
	for _, c := range subs {
		parts = append(parts, fmt.Sprintf("%s %.2f", c, float64(count[c])/float64(max(ok, 1))))
	}
	return float64(n) / float64(max(ok, 1)), strings.Join(parts, ", ")
}

// slowestLines are, with -slowest N, the N slowest operations of r (asks,
// or changes: changeAll) and the git commands each ran, read from the git
// log now (changeAll starts it afresh).
func slowestLines(name string, w *world, r *result) string {
	if *slowest <= 0 {
		return ""
	}
	slices.Sort(r.slow)
	var b strings.Builder
	for _, l := range r.slow[max(len(r.slow)-*slowest, 0):] {
		which, _, _ := strings.Cut(l[9:], ":")
		run := w.asks[which]
		fmt.Fprintf(&b, "    %s, slow: %s: %s\n", name, l[9:], timeline(w.gitLog+".times", run.pid, run.start))
	}
	return b.String()
}

// started records, for -slowest, when host i's operation of round n
// started and its process.
func (w *world) started(i, n int) func(pid int, t0 time.Time) {
	return func(pid int, t0 time.Time) {
		w.asksMu.Lock()
		w.asks[fmt.Sprintf("host %d round %d", i, n)] = askRun{pid: pid, start: t0}
		w.asksMu.Unlock()
	}
}

// slowest is -slowest, sequences -sequences.
var (
	slowest, sequences, procs                   *int
	answers, assumptions, resolutions, together *bool
)

// gitSequences reads the git wrapper's log: the n most common runs of
// subcommands one agentx process made, in order ("push fetch fetch"),
// each with how many processes made it.
func gitSequences(log string, n int) string {
	data, _ := os.ReadFile(log)
	var order []string
	runs := map[string][]string{}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		if _, ok := runs[f[0]]; !ok {
			order = append(order, f[0])
		}
		runs[f[0]] = append(runs[f[0]], f[1])
	}
	count := map[string]int{}
	for _, pid := range order {
		count[strings.Join(runs[pid], " ")]++
	}
	seqs := slices.Collect(maps.Keys(count))
	slices.SortFunc(seqs, func(a, b string) int {
		if c := count[b] - count[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, q := range seqs[:min(n, len(seqs))] {
		parts = append(parts, fmt.Sprintf("%d× %s", count[q], q))
	}
	return strings.Join(parts, "; ")
}

// errBusy is an ask refused as remote_busy.
var errBusy = errors.New("remote_busy")

func loadavg() string {
	load, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(load))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, (len(d)*p+99)/100-1)]
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func git(dir string, args ...string) { gitOut(dir, args...) }

func gitOut(dir string, args ...string) string { return gitIn(dir, "", args...) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
