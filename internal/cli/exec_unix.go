//go:build unix

package cli

import (
	"fmt"
	"syscall"
)

// execProcess replaces this process with path run on args: the same pid,
// streams and environment, so its exit code is the command's.
func execProcess(path string, args, env []string) (int, error) {
	argv := append([]string{path}, args...)
	if err := syscall.Exec(path, argv, env); err != nil {
		return 0, fmt.Errorf("run %s: %w", path, err)
	}
	return 0, nil // not reached
}
