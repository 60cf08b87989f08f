package lock

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// queueDepth counts the processes blocked in the kernel on the queue file
// at qpath, from /proc/locks (lines "N: -> FLOCK ... MAJ:MIN:INODE ...").
// It returns -1 when that cannot be read.
func queueDepth(qpath string) int {
	fi, err := os.Stat(qpath)
	if err != nil {
		return -1
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return -1
	}
	defer f.Close()
	suffix := []byte(":" + strconv.FormatUint(st.Ino, 10))
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 7 || !bytes.Equal(fields[1], []byte("->")) {
			continue
		}
		// fields: N: -> FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END
		if bytes.HasSuffix(fields[6], suffix) {
			n++
		}
	}
	return n
}
