//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// rssFlag makes this program run the rest of its command line as a child
// and report the child's CPU and peak resident set on file descriptor 3.
//
// Why: Linux counts in a process's peak resident set the memory of the
// process it was started from, when that one shared its memory until the
// exec (os/exec starts children with CLONE_VFORK|CLONE_VM). A child of
// this benchmark, whose own memory holds the generated workspaces, would
// report this benchmark's peak, not its own. Started from a fresh copy of
// this program, small, it reports its own.
const rssFlag = "-measure-child"

// measureChild is the child side of rssFlag.
func measureChild(argv []string) int {
	report := os.NewFile(3, "report")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 127
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && report != nil {
		fmt.Fprintf(report, "%d %d\n", ru.Utime.Nano()+ru.Stime.Nano(), ru.Maxrss)
		_ = report.Close()
	}
	if code < 0 {
		code = 128 + int(syscall.SIGKILL)
	}
	return code
}

// measured reads what measureChild reported: CPU in ns and peak RSS.
func measured(r *os.File) (cpu, rss int64, ok bool) {
	sc := bufio.NewScanner(r)
	if !sc.Scan() {
		return 0, 0, false
	}
	_, err := fmt.Sscanf(sc.Text(), "%d %d", &cpu, &rss)
	return cpu, rss, err == nil
}
