// Command remote measures the remote mode: H hosts (clones of one local
// bare repository), one agentx process on each, all asking on one issue at
// once through the remote. It prints asks per second, latency p50/p99 and
// failures per H, and checks the remote's chain afterwards (one record per
// acknowledged ask, ids dense).
//
//	go run ./bench/remote                 # H = 1, 4, 8; 15 asks per host
//	go run ./bench/remote -hosts 1,2 -k 10
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
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
	hostsFlag := flag.String("hosts", "1,4,8", "numbers of hosts to measure, comma-separated")
	k := flag.Int("k", 15, "asks per host, in a row")
	keep := flag.Bool("keep", false, "keep the temporary directories")
	flag.Parse()
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "agentx-bench-remote")
	check(err)
	if !*keep {
		defer os.RemoveAll(tmp)
	}
	bin := filepath.Join(tmp, "agentx")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/agentx").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v: %s\n", err, out)
		os.Exit(1)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	gitv, _ := exec.Command("git", "--version").Output()
	fmt.Printf("%d CPUs, %s, %s/%s, %s, load average %s\n", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		strings.TrimSpace(string(gitv)), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("\n| hosts | asks | ok | busy | wall s | ok/s | p50 ms | p99 ms | records | dense |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, f := range strings.Split(*hostsFlag, ",") {
		h, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		run(ctx, tmp, bin, h, *k)
	}
}

func run(ctx context.Context, tmp, bin string, hosts, k int) {
	dir := filepath.Join(tmp, fmt.Sprintf("h%d", hosts))
	bare := filepath.Join(dir, "remote.git")
	check(os.MkdirAll(dir, 0o755))
	git(dir, "init", "--quiet", "--bare", bare)
	var dirs []string
	for i := range hosts {
		h := filepath.Join(dir, fmt.Sprintf("host%d", i))
		git(dir, "init", "--quiet", h)
		git(h, "remote", "add", "origin", bare)
		cmd := exec.CommandContext(ctx, bin, "init")
		cmd.Dir = h
		check(cmd.Run())
		cfg := filepath.Join(h, ".agentx", "config.toml")
		data, err := os.ReadFile(cfg)
		check(err)
		data = append(data, []byte("\n[remote]\ngit = \"origin\"\n")...)
		check(os.WriteFile(cfg, data, 0o644))
		dirs = append(dirs, h)
	}
	var mu sync.Mutex
	var lat []time.Duration
	ok, busy := 0, 0
	start := time.Now()
	var wg sync.WaitGroup
	for i, h := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range k {
				cmd := exec.CommandContext(ctx, bin, "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect",
					"--topic", "Retry budget", "--question", fmt.Sprintf("host %d, ask %d: which retry budget applies?", i, n), "--non-blocking", "--json")
				cmd.Dir = h
				cmd.Env = append(os.Environ(), "AGENTX_NO_MONITOR=1")
				var errb bytes.Buffer
				cmd.Stderr = &errb
				t0 := time.Now()
				err := cmd.Run()
				d := time.Since(t0)
				mu.Lock()
				switch {
				case err == nil:
					ok++
					lat = append(lat, d)
				case strings.Contains(errb.String(), "remote_busy"):
					busy++
				default:
					fmt.Fprintf(os.Stderr, "ask failed: %v: %s\n", err, errb.String())
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	slices.Sort(lat)
	records, dense := verify(bare)
	fmt.Printf("| %d | %d | %d | %d | %.1f | %.1f | %.0f | %.0f | %d | %v |\n", hosts, hosts*k, ok, busy, wall.Seconds(),
		float64(ok)/wall.Seconds(), ms(pct(lat, 50)), ms(pct(lat, 99)), records, dense)
}

// verify reads the remote's ledger of issue 1: its record count, and
// whether the ids are dense.
func verify(bare string) (int, bool) {
	data, err := exec.Command("git", "-C", bare, "cat-file", "blob", "refs/agentx/clarifications/issue-1:issue-1.json").Output()
	if err != nil {
		return 0, false
	}
	l, err := ledger.Decode("remote", data)
	if err != nil {
		return 0, false
	}
	for i, c := range l.Clarifications {
		if c.ID != ledger.FormatID(1, i+1) {
			return len(l.Clarifications), false
		}
	}
	return len(l.Clarifications), true
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, (len(d)*p+99)/100-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func git(dir string, args ...string) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "git %v: %v: %s\n", args, err, out)
		os.Exit(1)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
