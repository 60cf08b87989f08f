package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// statePath resolves a state file name (a relative path under the state
// directory, such as "agent-status.json" or "inbox/engineer.json").
func (s *Store) statePath(name string) (string, error) {
	clean := filepath.Clean(name)
	if name == "" || filepath.IsAbs(clean) || clean == "." || strings.HasPrefix(clean, "..") {
		return "", fmt.Errorf("state file %q: not a relative path inside the state directory", name)
	}
	return filepath.Join(s.dir, clean), nil
}

// ReadState decodes the JSON state file name into v without locking. A
// missing file leaves v as it is; one that does not parse is a *CorruptError.
func (s *Store) ReadState(name string, v any) error {
	path, err := s.statePath(name)
	if err != nil {
		return err
	}
	data, err := atomicfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		ce := corrupt(path, data, err)
		ce.Derived = true
		return ce
	}
	return nil
}

// UpdateState changes a JSON state file other than a ledger (agent
// statuses, inbox marks, indexes): under its lock it decodes the file into
// v, calls fn, and writes v back atomically. If fn fails nothing is written;
// a file that does not parse is never overwritten.
//
// These files are derived or advisory (a ledger is the record), so they are
// written without fsync: agent-status.json is updated by every change on
// every issue, and fsyncs there would lengthen the hottest lock in agentx.
// After a power loss one may hold its previous content.
func (s *Store) UpdateState(ctx context.Context, name string, v any, fn func() error) error {
	path, err := s.statePath(name)
	if err != nil {
		return err
	}
	return s.locked(ctx, path, func() ([]byte, error) {
		if err := s.ReadState(name, v); err != nil {
			return nil, err
		}
		if err := fn(); err != nil {
			return nil, err
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", path, err)
		}
		return append(b, '\n'), nil
	})
}
