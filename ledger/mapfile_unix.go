//go:build unix

package ledger

import (
	"syscall"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// mapFile maps the file at path into memory, read-only, for a reader that
// looks at every byte once: no copy of it is made, and release unmaps it
// (nothing read from it may be kept past that: copy what is kept). A
// small file (under 64 KiB, where reading costs less than mapping), or one
// that cannot be mapped, is read instead. A file
// truncated in place while it is mapped faults on access: the caller reads
// it with debug.SetPanicOnFault set, and recovers.
func mapFile(path string) (data []byte, release func(), err error) {
	fd, err := atomicfile.OpenRead(path)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = syscall.Close(fd) }()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size < 64<<10 || st.Size >= 1<<31 {
		data, err := atomicfile.ReadAll(fd, path, 16<<10)
		return data, func() {}, err
	}
	data, err = syscall.Mmap(fd, 0, int(st.Size), syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	if err != nil {
		data, err := atomicfile.ReadAll(fd, path, st.Size+1)
		return data, func() {}, err
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
