package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// memory measures what a command costs on a host with no local copy when
// an issue's shared ledger is a body of mb MiB: a commit pushed onto the
// issue's ref, on top of an ordinary one. Each command runs in a fresh
// clone, under /usr/bin/time (a small C program: a child of this one would
// count this program's memory in its peak), which reports its peak
// resident set.
func memory(ctx context.Context, dir, bin string, mb int) {
	const issue = 5
	w := newWorld(ctx, dir, bin, 1, true, 0)
	cmd := exec.CommandContext(ctx, bin, "clarify", "ask", "--issue", strconv.Itoa(issue), "--from", "engineer", "--to", "architect",
		"--topic", "Retry budget", "--question", "which retry budget applies?", "--non-blocking")
	cmd.Dir = w.hosts[0]
	check(cmd.Run())
	ref := fmt.Sprintf("refs/agentx/clarifications/issue-%d", issue)
	parent := strings.TrimSpace(gitOut(w.bare, "rev-parse", ref))

	// The body: a ledger padded to mb MiB, written by git from a pipe.
	hash := exec.CommandContext(ctx, "git", "-C", w.bare, "hash-object", "-w", "--stdin")
	in, err := hash.StdinPipe()
	check(err)
	var out strings.Builder
	hash.Stdout = &out
	check(hash.Start())
	bw := bufio.NewWriterSize(in, 1<<20)
	head := fmt.Sprintf(`{"issueNumber": %d, "clarifications": [], "pad": "`, issue)
	_, _ = bw.WriteString(head)
	pad := strings.Repeat("x", 1<<16)
	for n := len(head) + 2; n < mb<<20; n += len(pad) {
		_, _ = io.WriteString(bw, pad[:min(len(pad), mb<<20-n)])
	}
	_, _ = bw.WriteString(`"}`)
	check(bw.Flush())
	check(in.Close())
	check(hash.Wait())
	tree := strings.TrimSpace(gitIn(w.bare, fmt.Sprintf("100644 blob %s\tissue-%d.json\n", strings.TrimSpace(out.String()), issue), "mktree"))
	c := strings.TrimSpace(gitIn(w.bare, "a body of "+strconv.Itoa(mb)+" MiB\n\nhost: elsewhere\n", "-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", tree, "-p", parent))
	git(w.bare, "update-ref", ref, c)

	fmt.Printf("\nissue %d's shared ledger: a body of %d MiB (commit %.12s), each command in a fresh clone with no local copy.\n", issue, mb, c)
	fmt.Printf("The remote is a local path: its git upload-pack is the command's own child, counted in its peak, unless\n")
	fmt.Printf("the bare repository streams big objects (core.bigFileThreshold = 64m) as a server's own memory would not count.\n\n")
	fmt.Printf("| command | remote's side | exit | peak RSS MiB | wall s |\n|---|---|--:|--:|--:|\n")
	n := 0
	for _, server := range []string{"counted", "streams"} {
		if server == "streams" {
			git(w.bare, "config", "core.bigFileThreshold", "64m")
		}
		for _, args := range [][]string{{"ready", "--issue", strconv.Itoa(issue)}, {"ready"}, {"git fetch of the ref"}} {
			n++
			fresh := newWorld(ctx, filepath.Join(dir, "fresh"+strconv.Itoa(n)), bin, 1, true, 0)
			git(fresh.hosts[0], "remote", "set-url", "origin", w.bare)
			argv := append([]string{bin}, args...)
			if args[0] == "git fetch of the ref" {
				argv = []string{"git", "fetch", "--quiet", "origin", "+" + ref + ":" + ref}
			}
			code, kb, wall := peak(ctx, fresh.hosts[0], argv)
			fmt.Printf("| `%s` | %s | %d | %.0f | %.1f |\n", strings.Join(args, " "), server, code, kb/1024, wall)
		}
	}
}

// peak runs argv in dir under /usr/bin/time: its exit code, peak resident
// set (KiB, the largest of the process and the children it waited for)
// and wall time.
func peak(ctx context.Context, dir string, argv []string) (code int, kb, wall float64) {
	cmd := exec.CommandContext(ctx, "/usr/bin/time", append([]string{"-f", "\nRSS %M %e"}, argv...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTX_NO_MONITOR=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		check(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "RSS" {
			kb, _ = strconv.ParseFloat(f[1], 64)
			wall, _ = strconv.ParseFloat(f[2], 64)
		}
	}
	return code, kb, wall
}

func gitIn(dir, stdin string, args ...string) string {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "git %v: %v\n", args, err)
		os.Exit(1)
	}
	return string(out)
}
