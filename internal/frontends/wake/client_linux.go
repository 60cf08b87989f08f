package wake

import (
	"os"
	"strconv"
	"strings"
)

// shell reports whether comm is a program a client may run a hook's
// command line through: the client is the first ancestor that is none.
func shell(comm string) bool {
	switch comm {
	case "sh", "bash", "dash", "zsh", "ash", "busybox", "fish", "ksh", "env", "timeout":
		return true
	}
	return false
}

// ClientPID is the process of the client that ran this hook: what
// CLAUDE_PID says when it names an ancestor (Claude Code sets it for its
// hooks), else the nearest ancestor that is not a shell (a hook's command
// line runs through one), found in /proc. 0 when it cannot be told.
func ClientPID() int {
	if pid, err := strconv.Atoi(os.Getenv("CLAUDE_PID")); err == nil && pid > 1 && ancestor(pid) {
		return pid
	}
	pid := os.Getppid()
	for range 8 {
		if pid <= 1 {
			return 0
		}
		comm, ppid, _, ok := procStat(pid)
		if !ok {
			return 0
		}
		if !shell(comm) {
			return pid
		}
		pid = ppid
	}
	return 0
}

// ancestor reports whether pid is a parent of this process, or its
// parent's, up to eight generations.
func ancestor(pid int) bool {
	p := os.Getppid()
	for range 8 {
		if p == pid {
			return true
		}
		if p <= 1 {
			return false
		}
		var ok bool
		if _, p, _, ok = procStat(p); !ok {
			return false
		}
	}
	return false
}

// zombie reports whether pid has exited and waits for its parent to reap
// it: a process killed under a terminal multiplexer may stay so for a
// while, and kill(pid, 0) still finds it.
func zombie(pid int) bool {
	_, _, state, ok := procStat(pid)
	return ok && state == "Z"
}

// procStat reads a process's command name, parent and state from
// /proc/PID/stat.
func procStat(pid int) (comm string, ppid int, state string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, "", false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, "", false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 2 {
		return "", 0, "", false
	}
	ppid, err = strconv.Atoi(f[1])
	return s[open+1 : end], ppid, f[0], err == nil
}
