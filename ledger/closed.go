package ledger

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/buildid"
	"github.com/agentx-cli/agentx/internal/fstime"
)

// The index lists the issues with open clarifications, one file each. A
// ledger another tool wrote (the AgentX extension or PowerShell CLI: a new
// issue, or a question added to an issue where agentx had nothing open)
// has no index file, and would go unseen until a rebuild. So readers also
// list the ledgers, and each ledger with no index file is accounted for by
// the closed record: the stamp its ledger had when a reader last found
// nothing open in it. A ledger with no index file and another stamp (or
// none recorded) is read: it may hold open questions. The cost is one
// directory listing and one stat per such ledger; a ledger is read only
// when it changed.

// The sweep (listing the ledgers, a stat each) is skipped while the ledger
// directory is as swept-v1 has it: no file was created, renamed or removed
// there since a reader that may write last accounted for every ledger. A
// tool that writes a ledger takes its lock, a file it creates and removes
// in that directory, so its write moves the directory's time too; only a
// writer that takes no lock and writes in place (the extension's current
// writer, unsafe anyway: docs/file-formats.md) can change a ledger unseen,
// until the next write of any kind.

// sweptFile is the note of the ledger directory at the last sweep, in the
// index directory.
const sweptFile = "swept-v1"

func (s *Store) sweptPath() string { return filepath.Join(s.dir, IndexDir, sweptFile) }

// ledgerDir is the ledger directory's stamp now, and its modification
// time; ok false when it cannot be looked at.
func (s *Store) ledgerDir() (st stamp, mtime time.Time, ok bool) {
	fi, err := os.Stat(filepath.Join(s.dir, ClarificationsDir))
	if err != nil {
		return stamp{}, time.Time{}, false
	}
	return stampOf(fi), fi.ModTime(), true
}

// swept reports whether the ledger directory is as the last sweep noted.
func (s *Store) swept(dir stamp) bool {
	data, err := atomicfile.ReadAtMost(s.sweptPath(), 256)
	return err == nil && string(data) == sweptLine(dir)
}

func sweptLine(dir stamp) string {
	return fmt.Sprintf("v1 %s %d %d %d\n", buildid.ID(), dir.Ino, dir.Size, dir.MTime)
}

// noteSwept notes the ledger directory as it was (dir, taken before the
// sweep) once a sweep accounted for every ledger, when its time had
// settled: a change made within the file system's time resolution of it
// could otherwise carry the same time.
func (s *Store) noteSwept(dir stamp, mtime time.Time) {
	if fstime.Default.Settled(mtime, time.Now()) { // file times are the real clock's, whatever the store's says
		_ = atomicfile.WriteVolatile(s.sweptPath(), []byte(sweptLine(dir)), perm)
	}
}

// closedFile is the closed record's name in the index directory: it is not
// an index file (IssueOfFile does not take it).
const closedFile = "closed-v1"

// maxClosed bounds what is read of the closed record: one line per issue.
const maxClosed = 64 << 20

func (s *Store) closedPath() string { return filepath.Join(s.dir, IndexDir, closedFile) }

// readClosed reads the closed record: issue → the stamp its ledger had
// when it was found with nothing open. A record that cannot be read is
// empty: every ledger without an index file is read, nothing is missed.
func (s *Store) readClosed() map[int]stamp {
	out := map[int]stamp{}
	data, err := atomicfile.ReadAtMost(s.closedPath(), maxClosed)
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 {
			continue
		}
		n, e1 := strconv.Atoi(f[0])
		ino, e2 := strconv.ParseUint(f[1], 10, 64)
		size, e3 := strconv.ParseInt(f[2], 10, 64)
		mtime, e4 := strconv.ParseInt(f[3], 10, 64)
		if e1 == nil && e2 == nil && e3 == nil && e4 == nil && ValidateIssue(n) == nil {
			out[n] = stamp{Ino: ino, Size: size, MTime: mtime}
		}
	}
	return out
}

// writeClosed replaces the closed record. It is derived data, as the
// index files are: written without fsync, never through a link, and a
// write lost to a race with another reader costs a ledger read later, never
// a question missed (a stamp recorded is compared with the ledger's).
func (s *Store) writeClosed(closed map[int]stamp) error {
	var b bytes.Buffer
	for _, n := range slices.Sorted(maps.Keys(closed)) {
		st := closed[n]
		fmt.Fprintf(&b, "%d %d %d %d\n", n, st.Ino, st.Size, st.MTime)
	}
	if err := os.MkdirAll(s.IndexPath(), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteVolatile(s.closedPath(), b.Bytes(), perm)
}

// unaccounted lists the issues with a ledger and no index file (indexed
// lists those with one) whose ledger is not as the closed record has it:
// written by another tool, or by agentx since (its last question closed).
// Each costs a stat of the ledger, taken from its open directory.
func (s *Store) unaccounted(indexed []int, closed map[int]stamp) ([]int, error) {
	all, err := s.Issues()
	if err != nil || len(all) == 0 {
		return nil, err
	}
	lg, err := os.Open(filepath.Join(s.dir, ClarificationsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list ledgers: %w", err)
	}
	defer func() { _ = lg.Close() }()
	var out []int
	for _, n := range all {
		if _, ok := slices.BinarySearch(indexed, n); ok {
			continue
		}
		st, err := stampAt(lg, "issue-"+strconv.Itoa(n)+".json")
		if err != nil {
			continue // gone since it was listed
		}
		if was, ok := closed[n]; !ok || was != st {
			out = append(out, n)
		}
	}
	return out, nil
}

// noteClosed adds one ledger found with nothing open to the closed
// record (a reader that healed its stale index file).
func (s *Store) noteClosed(issue int, st stamp) {
	closed := s.readClosed()
	if closed[issue] != st {
		closed[issue] = st
		_ = s.writeClosed(closed)
	}
}
