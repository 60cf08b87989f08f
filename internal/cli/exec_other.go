//go:build !unix

package cli

import (
	"errors"
	"os"
	"os/exec"
)

// execCommand runs argv with this process's streams and waits for it:
// where a process cannot become another, the step stays its parent.
func execCommand(argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return &codedError{Code: ExitFailure, Msg: err.Error(), Quiet: true}
	}
	return err
}
