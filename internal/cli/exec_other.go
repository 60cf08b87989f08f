//go:build !unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// execProcess runs path on args with this process's streams and
// environment and returns its exit code: where a process cannot be
// replaced (Windows), the nearest thing.
func execProcess(path string, args, env []string) (int, error) {
	c := exec.Command(path, args...)
	c.Stdin, c.Stdout, c.Stderr, c.Env = os.Stdin, os.Stdout, os.Stderr, env
	err := c.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("run %s: %w", path, err)
	}
	return 0, nil
}
