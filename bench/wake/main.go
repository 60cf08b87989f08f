// Command wake measures how fast an answer comes back to the agent that
// asked: from the answering command's end to the agent's resume command
// starting (the agent's turn had ended), to agentx hook stop returning
// with the answer (the turn was held), and to agentx hook rewake exiting 2
// with it (an idle session's live waiter, which had slept -idle first:
// Claude Code wakes the session in place the moment it exits). Run from
// the repository root:
//
//	go run ./bench/wake [-runs 20] [-idle 3s]
//
// It prints the machine's load beside the figures. The real Claude Code's
// request to the model after a rewake is timed by the test
// TestLoopClaudeInteractive (internal/testenv/realclient), which logs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("runs", 20, "questions answered in each measurement")
	idle := flag.Duration("idle", 3*time.Second, "how long a live waiter sleeps before its answer lands")
	flag.Parse()
	if err := run(*runs, *idle); err != nil {
		fmt.Fprintln(os.Stderr, "bench/wake:", err)
		os.Exit(1)
	}
}

func run(runs int, idle time.Duration) error {
	tmp, err := os.MkdirTemp("", "agentx-bench-wake-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "agentx")
	build := exec.Command("go", "build", "-o", bin, "./cmd/agentx")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %w\n%s", err, out)
	}
	root := filepath.Join(tmp, "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	stamp := filepath.Join(tmp, "resumed")
	ax := func(agent string, stdin string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "AGENTX_AGENT="+agent)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil {
			return "", fmt.Errorf("agentx %s: %w\n%s", strings.Join(args, " "), err, errb.String())
		}
		return strings.TrimSpace(out.String()), nil
	}
	if _, err := ax("", "", "init"); err != nil {
		return err
	}
	// the resume command writes the time it started, in nanoseconds
	cfg := fmt.Sprintf("\n[agents.engineer]\nresume = [\"sh\", \"-c\", \"date +%%s%%N >> %s; cat > /dev/null\"]\n", stamp)
	f, err := os.OpenFile(filepath.Join(root, ".agentx", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(cfg); err != nil {
		return err
	}
	f.Close()
	if _, err := ax("", "", "trust", "--yes"); err != nil { // the resume command runs once trusted
		return err
	}
	stop := `{"session_id":"bench","hook_event_name":"Stop","stop_hook_active":false}`

	var resumed, held, answerCmd []time.Duration
	for i := 1; i <= runs; i++ {
		issue := strconv.Itoa(i)
		id, err := ax("engineer", "", "clarify", "ask", "--issue", issue, "--to", "architect", "--topic", "T", "--question", "Q?")
		if err != nil {
			return err
		}
		if _, err := ax("engineer", stop, "hook", "stop", "--issue", issue, "--hold", "0s"); err != nil {
			return err
		}
		before := countLines(stamp)
		start := time.Now()
		if _, err := ax("architect", "", "clarify", "answer", id, "--body", "A."); err != nil {
			return err
		}
		end := time.Now()
		answerCmd = append(answerCmd, end.Sub(start))
		at, err := waitLine(stamp, before+1, 10*time.Second)
		if err != nil {
			return err
		}
		resumed = append(resumed, at.Sub(end))
	}

	for i := runs + 1; i <= 2*runs; i++ {
		issue := strconv.Itoa(i)
		id, err := ax("engineer", "", "clarify", "ask", "--issue", issue, "--to", "architect", "--topic", "T", "--question", "Q?")
		if err != nil {
			return err
		}
		hook := exec.Command(bin, "hook", "stop", "--issue", issue, "--hold", "60s")
		hook.Dir, hook.Env, hook.Stdin = root, append(os.Environ(), "AGENTX_AGENT=engineer"), strings.NewReader(stop)
		var out bytes.Buffer
		hook.Stdout = &out
		if err := hook.Start(); err != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond) // the hook is holding
		if _, err := ax("architect", "", "clarify", "answer", id, "--body", "A."); err != nil {
			return err
		}
		end := time.Now()
		if err := hook.Wait(); err != nil {
			return fmt.Errorf("hook stop: %w", err)
		}
		held = append(held, time.Since(end))
		if !strings.Contains(out.String(), `"decision":"block"`) {
			return fmt.Errorf("hook stop did not deliver the answer: %s", out.String())
		}
	}

	var rewoken []time.Duration
	for i := 2*runs + 1; i <= 3*runs; i++ {
		issue := strconv.Itoa(i)
		id, err := ax("engineer", "", "clarify", "ask", "--issue", issue, "--to", "architect", "--topic", "T", "--question", "Q?")
		if err != nil {
			return err
		}
		session := `{"session_id":"bench-` + issue + `","hook_event_name":"Stop","stop_hook_active":false}`
		hook := exec.Command(bin, "hook", "rewake", "--issue", issue)
		hook.Dir, hook.Env, hook.Stdin = root, append(os.Environ(), "AGENTX_AGENT=engineer"), strings.NewReader(session)
		var errb bytes.Buffer
		hook.Stderr = &errb
		if err := hook.Start(); err != nil {
			return err
		}
		time.Sleep(idle) // the session sits idle; the waiter sleeps
		if _, err := ax("architect", "", "clarify", "answer", id, "--body", "A."); err != nil {
			return err
		}
		end := time.Now()
		err = hook.Wait()
		rewoken = append(rewoken, time.Since(end))
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(errb.String(), id) {
			return fmt.Errorf("hook rewake did not wake with the answer (%v): %s", err, errb.String())
		}
	}

	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("Answers coming back (%d questions each; medians and worst; load %s)\n\n", runs, strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	fmt.Printf("| measurement | median | worst |\n|---|--:|--:|\n")
	row := func(name string, ds []time.Duration) {
		slices.Sort(ds)
		fmt.Printf("| %s | %s | %s |\n", name, ms(ds[len(ds)/2]), ms(ds[len(ds)-1]))
	}
	row("`clarify answer`, the whole command", answerCmd)
	row("resume command started, after the answering command exited (negative: before)", resumed)
	row("`hook stop` holding the turn returns with the answer, after the answering command exited", held)
	row(fmt.Sprintf("`hook rewake` (an idle session's waiter, asleep %s) exits 2 with the answer, after the answering command exited", idle), rewoken)
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

// waitLine waits for path to hold n lines and returns the time the n-th
// holds (nanoseconds since the epoch).
func waitLine(path string, n int, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(b) > 0 && len(lines) >= n {
			ns, err := strconv.ParseInt(lines[n-1], 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("%s: %w", path, err)
			}
			return time.Unix(0, ns), nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("no resume within %s", limit)
}
