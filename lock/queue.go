package lock

import (
	"bytes"
	"strconv"
)

// parseQueue reads /proc/locks content for the waiters blocked on inode
// ino (lines "N: -> FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END",
// listed in the order they blocked): how many there are besides pid, and
// how many of those come before pid's line (-1 when pid is not listed).
func parseQueue(data []byte, ino uint64, pid int) (waiting, ahead int) {
	suffix := []byte(":" + strconv.FormatUint(ino, 10))
	me := []byte(strconv.Itoa(pid))
	ahead = -1
	for line := range bytes.Lines(data) {
		f := bytes.Fields(line)
		if len(f) < 7 || !bytes.Equal(f[1], []byte("->")) || !bytes.HasSuffix(f[6], suffix) {
			continue
		}
		if bytes.Equal(f[5], me) {
			if ahead < 0 {
				ahead = waiting
			}
			continue
		}
		waiting++
	}
	return waiting, ahead
}
