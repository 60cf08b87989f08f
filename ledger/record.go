package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// UpdateRecord is UpdateState for a JSON file that is a record, not
// derived (the gate's evaluations, proposals): under the file's lock it
// decodes the file into v, calls fn, and writes v back as a ledger is
// written, atomically and durably (temp file, fsync, a check that the lock
// is still ours, rename, fsync of the directory). If fn fails nothing is
// written; a file that does not parse is never overwritten, and a symbolic
// link is never written through.
func (s *Store) UpdateRecord(ctx context.Context, name string, v any, fn func() error) error {
	path, err := s.statePath(name)
	if err != nil {
		return err
	}
	lk, err := s.acquire(ctx, path)
	if err != nil {
		return err
	}
	defer func() { _ = lk.Release() }()
	if err := s.ReadState(name, v); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return atomicfile.WriteWith(path, append(b, '\n'), perm, atomicfile.Options{Durable: true,
		BeforeRename: func(os.FileInfo) error { return lk.Check() }})
}
