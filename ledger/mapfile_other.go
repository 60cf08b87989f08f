//go:build !unix

package ledger

import "github.com/agentx-cli/agentx/internal/atomicfile"

// mapFile reads the file at path (see the unix version, which maps it).
func mapFile(path string) (data []byte, release func(), err error) {
	data, err = atomicfile.ReadFile(path)
	return data, func() {}, err
}
