package lock

import (
	"os"
	"strconv"
	"strings"
)

// pidStopped reports whether the process pid is stopped (paused by a
// signal, SIGSTOP or Ctrl-Z, or by a debugger), as /proc says; known false
// when it cannot be read.
func pidStopped(pid int) (stopped, known bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false, false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return false, false
	}
	st := b[i+2]
	return st == 'T' || st == 't', true
}
