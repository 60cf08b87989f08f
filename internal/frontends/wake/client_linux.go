package wake

import (
	"os"
	"strconv"
	"strings"
)

// shells are the programs a client may run a hook's command line through:
// the client is the first ancestor that is none of them.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ash": true, "busybox": true, "fish": true, "ksh": true, "env": true, "timeout": true}

// ClientPID is the process of the client that ran this hook: the nearest
// ancestor that is not a shell (a hook's command line runs through one),
// found in /proc. 0 when it cannot be told.
func ClientPID() int {
	pid := os.Getppid()
	for range 8 {
		if pid <= 1 {
			return 0
		}
		comm, ppid, ok := procStat(pid)
		if !ok {
			return 0
		}
		if !shells[comm] {
			return pid
		}
		pid = ppid
	}
	return 0
}

// procStat reads a process's command name and parent from /proc/PID/stat.
func procStat(pid int) (comm string, ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return s[open+1 : end], ppid, err == nil
}
