//go:build !unix

package atomicfile

import "os"

// ReadFile is os.ReadFile (see the Unix version).
func ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }
