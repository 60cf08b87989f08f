package ledger

import (
	"context"
)

// UpdateRecord is UpdateState for a JSON file that is a record, not
// derived (the gate's evaluations, proposals): under the file's lock it
// decodes the file into v, calls fn, and writes v back as a ledger is
// written, atomically and durably (temp file, fsync, a check that the lock
// is still ours, rename, fsync of the directory). If fn fails nothing is
// written; a file that does not parse is never overwritten, and a symbolic
// link is never written through.
func (s *Store) UpdateRecord(ctx context.Context, name string, v any, fn func() error) error {
	return s.updateJSON(ctx, name, v, fn, true, nil)
}

// UpdateRecordThen is UpdateRecord that runs then after the write, still
// under the file's lock: for what must follow the record's change, such as
// removing a mark that said the record holds something. An error from
// then is returned; the record is written by then.
func (s *Store) UpdateRecordThen(ctx context.Context, name string, v any, fn, then func() error) error {
	return s.updateJSON(ctx, name, v, fn, true, then)
}
