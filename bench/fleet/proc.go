//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// proc is one finished process.
type proc struct {
	Exit   int           // exit code; -1 when it was killed or did not start
	Wall   time.Duration // from start to exit, as the caller waited
	CPU    time.Duration // user + system time (rusage)
	MaxRSS int64         // peak resident set size, KiB
	Stdout []byte        // when the job asked for it
	Stderr string        // what it said on stderr, in one line (errorLine)
}

// job is a process to run.
type job struct {
	argv []string
	dir  string   // working directory; "" is ours
	root string   // AGENTX_ROOT, when not ""
	env  []string // more environment, NAME=value
	out  bool     // keep stdout (else it goes to /dev/null)
	rss  bool     // measure its peak resident set (see rssFlag)
}

// runner starts processes with one environment and a time limit each.
type runner struct {
	env     []string      // the environment, without any AGENTX_ variable
	timeout time.Duration // per process
}

func newRunner(timeout time.Duration) runner {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTX_") && !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	return runner{env: append(env, "NO_COLOR=1"), timeout: timeout}
}

// run runs j to completion, or kills it (and anything it started) at the
// time limit or when ctx is done. It never fails: what went wrong is in
// the proc's Exit and Stderr.
func (r runner) run(ctx context.Context, j job) proc {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, j.argv[0], j.argv[1:]...)
	cmd.Dir = j.dir
	cmd.Env = r.env
	if j.root != "" {
		cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], "AGENTX_ROOT="+j.root)
	}
	cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], j.env...)
	var report *os.File
	if j.rss {
		self, err := os.Executable()
		pr, pw, perr := os.Pipe()
		if err == nil && perr == nil {
			cmd.Path, cmd.Args = self, append([]string{self, rssFlag}, j.argv...)
			cmd.ExtraFiles = []*os.File{pw}
			report = pr
			defer func() { _ = pr.Close() }()
			defer func() { _ = pw.Close() }()
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	if j.out {
		cmd.Stdout = &stdout
	}
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		if len(cmd.ExtraFiles) > 0 {
			_ = cmd.ExtraFiles[0].Close() // the child has it: EOF once it exits
		}
		err = cmd.Wait()
	}
	p := proc{Exit: -1, Wall: time.Since(start), Stdout: stdout.Bytes(), Stderr: errorLine(stderr.Bytes())}
	if st := cmd.ProcessState; st != nil {
		p.Exit = st.ExitCode()
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			p.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			p.MaxRSS = ru.Maxrss
		}
		if report != nil {
			if cpu, rss, ok := measured(report); ok {
				p.CPU, p.MaxRSS = time.Duration(cpu), rss
			}
		}
		if runtime.GOOS == "darwin" {
			p.MaxRSS /= 1024 // bytes there, KiB on Linux
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		p.Exit, p.Stderr = -1, fmt.Sprintf("killed after the %s time limit; %s", r.timeout, p.Stderr)
	case ctx.Err() != nil:
		p.Exit, p.Stderr = -1, "interrupted"
	case p.Exit == -1 && err != nil:
		p.Stderr = cut(err.Error(), 200)
	}
	if j.root != "" { // paths in messages, relative to the workspace
		p.Stderr = strings.ReplaceAll(p.Stderr, j.root+string(filepath.Separator), "")
	}
	return p
}

// must runs j and fails unless it exits 0.
func (r runner) must(ctx context.Context, j job) (proc, error) {
	p := r.run(ctx, j)
	if p.Exit != 0 {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		return p, fmt.Errorf("%s: exit %d: %s", strings.Join(j.argv, " "), p.Exit, p.Stderr)
	}
	return p, nil
}

// build compiles the package pkg (run in dir) to out, statically
// (CGO_ENABLED=0): a dynamically linked binary spends milliseconds more
// starting up, which is not agentx's cost.
func build(ctx context.Context, dir, pkg, out string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// buildAt builds agentx from the tree at the git revision rev, under dir,
// and agentx-full beside it when that revision has one (before agentx was
// one binary); it returns agentx's path.
func buildAt(ctx context.Context, rev, dir string) (string, error) {
	src, bin := filepath.Join(dir, "src"), filepath.Join(dir, "bin")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	tar := filepath.Join(dir, "src.tar")
	if out, err := exec.CommandContext(ctx, "git", "archive", "-o", tar, rev).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git archive %s: %w\n%s", rev, err, out)
	}
	if out, err := exec.CommandContext(ctx, "tar", "-xf", tar, "-C", src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("tar: %w\n%s", err, out)
	}
	for _, pkg := range []string{"./cmd/agentx", "./cmd/agentx-full"} {
		if _, err := os.Stat(filepath.Join(src, pkg)); err != nil && pkg != "./cmd/agentx" {
			continue
		}
		if err := build(ctx, src, pkg, filepath.Join(bin, filepath.Base(pkg))); err != nil {
			return "", err
		}
	}
	return filepath.Join(bin, "agentx"), nil
}

// helloWorld writes a hello-world Go program into dir and builds it as
// agentx is built, to compare start-up with.
func helloWorld(ctx context.Context, dir string) (string, error) {
	src := filepath.Join(dir, "hello")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	files := map[string]string{
		"go.mod":  "module hello\n\ngo 1.26\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello, world\") }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, "hello-bin")
	return bin, build(ctx, src, ".", bin)
}
