package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
// missing file leaves v as it is; one that does not parse is a
// *CorruptError that agentx doctor --fix may move aside (Derived).
func (s *Store) ReadState(name string, v any) error { return s.readJSON(name, v, true) }

// ReadRecord is ReadState for a file that is a record, not derived (the
// gate's evaluations, proposals, remote mode's sync states): one that does
// not parse is a *CorruptError for a person to fix or move aside.
func (s *Store) ReadRecord(name string, v any) error { return s.readJSON(name, v, false) }

func (s *Store) readJSON(name string, v any, derived bool) error {
	_, err := s.readJSONData(name, v, derived)
	return err
}

// readJSONData is readJSON, returning the bytes read (nil for no file).
func (s *Store) readJSONData(name string, v any, derived bool) ([]byte, error) {
	path, err := s.statePath(name)
	if err != nil {
		return nil, err
	}
	data, err := atomicfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		ce := corrupt(path, data, err)
		ce.Derived = derived
		return nil, ce
	}
	return data, nil
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
	return s.updateJSON(ctx, name, v, fn, false, nil)
}

// updateJSON is UpdateState, and with durable UpdateRecord: under the
// file's lock it decodes the file into v, calls fn, encodes v, and replaces
// the file unless it already holds exactly those bytes (with durable,
// fsynced before and after the rename), checking
// that the lock is still ours before the rename; then runs then, if set,
// still under the lock.
func (s *Store) updateJSON(ctx context.Context, name string, v any, fn func() error, durable bool, then func() error) error {
	path, err := s.statePath(name)
	if err != nil {
		return err
	}
	lk, err := s.acquire(ctx, path)
	if err != nil {
		return err
	}
	defer func() { _ = lk.Release() }()
	old, err := s.readJSONData(name, v, !durable)
	if err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	b = append(b, '\n')
	// The file already says it (a resolve leaves every agent's status as
	// it was): nothing to write.
	if old == nil || !bytes.Equal(old, b) {
		if err := atomicfile.WriteWith(path, b, perm, atomicfile.Options{Durable: durable,
			BeforeRename: func(os.FileInfo) error { return lk.Check() }}); err != nil {
			return err
		}
	}
	if then != nil {
		return then()
	}
	return nil
}
