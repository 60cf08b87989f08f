//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

// openShadow: shadows need leases and an atomic exchange of two names,
// which agentx uses on Linux only; elsewhere every write is a new file.
func openShadow(shadow, path string, perm os.FileMode) (*os.File, bool) { return nil, false }

func publish(f *os.File, name, path string) error { return errors.ErrUnsupported }
