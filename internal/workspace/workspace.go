package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/lock"
)

// Dir is the name of the workspace directory inside a repository.
const Dir = ".agentx"

// NotFoundError means no .agentx directory was found.
type NotFoundError struct {
	Start string // where the search began
	Root  string // the root that was given explicitly, if any
}

func (e *NotFoundError) Error() string {
	if e.Root != "" {
		return fmt.Sprintf("no agentx workspace at %s or any parent directory", e.Root)
	}
	return fmt.Sprintf("no agentx workspace in %s or any parent directory", e.Start)
}

// Hint says how to go on, in no front end's words: each front end words
// how one makes a workspace or names its directory (the command line: its
// init command, its root flag and variable).
func (e *NotFoundError) Hint() string {
	return "make a workspace in the repository's top directory, or name the directory that holds one"
}

// Find returns the root to use: the nearest directory holding .agentx at or
// above explicit if given (--root, AGENTX_ROOT: a hook may pass a project
// directory that is a subdirectory of the repository), else at or above
// start.
func Find(explicit, start string) (string, error) {
	from := start
	if explicit != "" {
		from = explicit
	}
	dir, err := filepath.Abs(from)
	if err != nil {
		return "", fmt.Errorf("find workspace from %s: %w", from, err)
	}
	for d := dir; ; {
		if isDir(filepath.Join(d, Dir)) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			if explicit != "" {
				return "", &NotFoundError{Root: dir}
			}
			return "", &NotFoundError{Start: start}
		}
		d = parent
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// ExistsError is returned by Init when the workspace already has files it
// would overwrite.
type ExistsError struct{ Paths []string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already exists; agentx init will not overwrite it", e.Paths[0])
}

// Hint says how to go on, in no front end's words (the command line names
// its flag).
func (e *ExistsError) Hint() string {
	return "replace the default files to start them afresh (your state/ directory is kept)"
}

// StateGitignore is state/.gitignore: of the state directory a team
// commits only the record (the ledgers, the event log, the proposals and
// the evaluations); every other file is this machine's: transient (locks,
// questions handed to a lock's holder, temp files), derived and rebuilt when missing (indexes, caches, memos,
// agent-status.json), or about this machine's processes, agents and hosts
// (hook records, inbox marks, wake records, the remote's, GitHub's and
// Slack's sync state). docs/file-formats.md says the same, file by file.
const StateGitignore = "# agentx: a team commits the record (clarifications/issue-N.json, events.jsonl,\n" +
	"# proposals.json, evaluations/issue-N.json); the rest is this machine's\n" +
	"# lock files are transient and never committed\n*.lock\n*.lock.takeover\n*.lock.queue\n*.lock.tmp-*\n" +
	"# questions handed to the holder of a ledger's lock, and what it made of them\nclarifications/*.asks/\n" +
	"# temp files of writes in progress, and caches and memos derived per machine\n.*.tmp-*\ncache/\nledgers/\nmonitor/\ndoctor/\nevaluations/revise/\n# where this machine's agents can be reached, and their resume logs\nwake/\n" +
	"# derived from the ledgers and hook records, rebuilt when missing\nindex/\nagent-status.json\n" +
	"# this machine's agents and hosts: their runs, what they were delivered, sync state\nhooks/\ninbox/\nremote/\ngithub/\nslack/\n" +
	"# copies set aside: a ledger before the shared one replaced it, a file that did not parse\nclarifications/*.local\n*.corrupt\n*.corrupt-*\n"

// Init writes the default files (relative path → content) under
// root/.agentx, plus state/.gitignore. Without force it refuses if any of
// them exists, and writes nothing. With force it replaces them, but never
// through a symbolic link: if one of them, or a directory on the way from
// root (.agentx included), is a link, it refuses with an
// *atomicfile.SymlinkError and writes nothing. It returns the paths written.
func Init(root string, files map[string][]byte, force bool) ([]string, error) {
	base := filepath.Join(root, Dir)
	all := make(map[string][]byte, len(files)+1)
	for k, v := range files {
		all[k] = v
	}
	all[filepath.Join("state", ".gitignore")] = []byte(StateGitignore)
	var exists []string
	for _, rel := range slices.Sorted(maps.Keys(all)) {
		p := filepath.Join(base, rel)
		if err := atomicfile.CheckNoLinks(root, p); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		if _, err := os.Lstat(p); err == nil {
			exists = append(exists, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("init %s: %w", p, err)
		}
	}
	if len(exists) > 0 && !force {
		return nil, &ExistsError{Paths: exists}
	}
	var written []string
	for _, rel := range slices.Sorted(maps.Keys(all)) {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, fmt.Errorf("init: %w", err)
		}
		if err := atomicfile.Write(p, all[rel], 0o644); err != nil {
			return written, fmt.Errorf("init: %w", err)
		}
		written = append(written, p)
	}
	if err := os.MkdirAll(filepath.Join(base, "state", "clarifications"), 0o755); err != nil {
		return written, fmt.Errorf("init: %w", err)
	}
	// Build the index now (of no ledgers, in a new workspace), so that
	// readers trust it from the first question on.
	if _, _, err := ledger.NewStore(filepath.Join(base, StateDir), lock.Options{}, nil).RebuildIndex(context.Background()); err != nil {
		return written, fmt.Errorf("init: %w", err)
	}
	return written, nil
}
