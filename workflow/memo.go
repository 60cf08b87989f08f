package workflow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentx-cli/agentx/internal/buildid"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/fstime"
)

// A memo lets a command parse only the workflow it uses. Load checks every
// file of a workspace (config.toml and workflows/*.toml, all together: a
// workflow name defined twice, a default_workflow that names none), and a
// command that asks a question uses one workflow of them. LoadMemo writes,
// after a Load that found no problem, which file holds which workflow and
// what each file was (size and modification time). A later LoadMemo that
// finds every file as the memo says parses config.toml and, when asked for
// it, the one workflow: the others were checked when they were as they
// are. Any difference (a file edited, added, removed or renamed) and it is
// a full Load again. The memo is derived: deleting it costs one Load.

// memoFile is one file as the memo knows it.
type memoFile struct {
	name  string // relative to the .agentx directory
	size  int64
	mtime int64  // ns
	wf    string // the workflow it defines ("" for config.toml)
}

func (f memoFile) line() string {
	return strconv.Quote(f.name) + " " + strconv.FormatInt(f.size, 10) + " " + strconv.FormatInt(f.mtime, 10) + " " + strconv.Quote(f.wf) + "\n"
}

// sources lists config.toml (absent: none) and the workflow files Load
// reads, as they are now, in Load's order.
func sources(agentxDir string) ([]memoFile, error) {
	var out []memoFile
	add := func(name string, fi fs.FileInfo) {
		out = append(out, memoFile{name: name, size: fi.Size(), mtime: fi.ModTime().UnixNano()})
	}
	if fi, err := os.Stat(filepath.Join(agentxDir, "config.toml")); err == nil {
		add("config.toml", fi)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	names, err := workflowFiles(filepath.Join(agentxDir, "workflows"))
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(agentxDir, "workflows", name))
		if err != nil {
			return nil, err
		}
		add(filepath.Join("workflows", name), fi)
	}
	return out, nil
}

// memoHeader is the memo's first line: its format and the build that
// wrote it (a memo of another build is not trusted: its checks may differ).
func memoHeader() string { return "agentx workflow memo v1 " + buildid.ID() }

// readMemo reads the memo at path: the files it vouches for, in order.
func readMemo(path string) ([]memoFile, bool) {
	b, err := atomicfile.ReadFile(path)
	if err != nil {
		return nil, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 2 || lines[0] != memoHeader() || lines[len(lines)-1] != "" {
		return nil, false
	}
	var out []memoFile
	for _, l := range lines[1 : len(lines)-1] {
		var f memoFile
		name, rest, ok := cutQuoted(l)
		if !ok {
			return nil, false
		}
		nums := strings.SplitN(rest, " ", 3)
		if len(nums) != 3 {
			return nil, false
		}
		f.name = name
		if f.size, err = strconv.ParseInt(nums[0], 10, 64); err != nil {
			return nil, false
		}
		if f.mtime, err = strconv.ParseInt(nums[1], 10, 64); err != nil {
			return nil, false
		}
		if f.wf, err = strconv.Unquote(nums[2]); err != nil {
			return nil, false
		}
		if f.line() != l+"\n" {
			return nil, false
		}
		out = append(out, f)
	}
	return out, true
}

// cutQuoted splits a line that starts with a Go-quoted string.
func cutQuoted(l string) (string, string, bool) {
	q, err := strconv.QuotedPrefix(l)
	if err != nil || !strings.HasPrefix(l[len(q):], " ") {
		return "", "", false
	}
	s, err := strconv.Unquote(q)
	return s, l[len(q)+1:], err == nil
}

// LoadMemo is LoadPartial through the memo at memoPath (see above): with
// the memo vouching for every file as it is, config.toml is parsed and
// each workflow only when Workflow asks for it. Otherwise it is
// LoadPartial, and the memo is written when it found no problem (no file
// left out) and every file is old enough to vouch for. The memo is never
// written through a symbolic link.
func LoadMemo(agentxDir, memoPath string) (*Set, error) {
	now, err := sources(agentxDir)
	if err != nil {
		return LoadPartial(agentxDir)
	}
	if memo, ok := readMemo(memoPath); ok && sameSources(memo, now) {
		if set, err := lazySet(agentxDir, memo); err == nil {
			return set, nil
		}
	}
	set, err := LoadPartial(agentxDir)
	if err != nil {
		return nil, err
	}
	if len(set.broken) == 0 {
		writeMemo(agentxDir, memoPath, set, now)
	}
	return set, nil
}

// sameSources reports whether the memo's files are the files now, as they
// are now.
func sameSources(memo, now []memoFile) bool {
	if len(memo) != len(now) {
		return false
	}
	for i := range memo {
		m, n := memo[i], now[i]
		if m.name != n.name || m.size != n.size || m.mtime != n.mtime {
			return false
		}
	}
	return true
}

// lazySet is the Set the memo vouches for: config.toml parsed, the
// workflows known by name and parsed when asked for.
func lazySet(agentxDir string, memo []memoFile) (*Set, error) {
	set := &Set{Workflows: map[string]*Workflow{}, lazy: map[string]string{}, mu: new(sync.Mutex)}
	for _, f := range memo {
		if f.name == "config.toml" {
			cfg, err := LoadConfigFile(filepath.Join(agentxDir, f.name))
			if err != nil {
				return nil, err
			}
			set.Config = cfg
			continue
		}
		set.lazy[f.wf] = filepath.Join(agentxDir, f.name)
	}
	if set.Config == nil {
		set.Config = DefaultConfig()
	}
	set.full = func() (*Set, error) { return LoadPartial(agentxDir) }
	return set, nil
}

// writeMemo records set's files, when the change of every one of them
// has settled (fstime: a file rewritten within the file system clock's
// step in which it was read, with the same size, would look unchanged).
func writeMemo(agentxDir, memoPath string, set *Set, files []memoFile) {
	now := time.Now()
	var b strings.Builder
	b.WriteString(memoHeader() + "\n")
	byFile := map[string]string{}
	for name, w := range set.Workflows {
		if rel, err := filepath.Rel(agentxDir, w.File); err == nil {
			byFile[rel] = name
		}
	}
	for _, f := range files {
		if !fstime.Default.Settled(time.Unix(0, f.mtime), now) {
			return
		}
		if f.name != "config.toml" {
			wf, ok := byFile[f.name]
			if !ok {
				return
			}
			f.wf = wf
		}
		b.WriteString(f.line())
	}
	_ = atomicfile.WriteDerived(agentxDir, memoPath, []byte(b.String())) // a failure only means the next command loads all
}

// parseLazy parses the workflow name of a lazy Set, once, under its lock.
// A file that no longer holds what the memo said makes the Set whole by a
// full LoadPartial.
func (s *Set) parseLazy(name string) (*Workflow, error) {
	path, ok := s.lazy[name]
	if !ok {
		return nil, nil
	}
	w, err := LoadWorkflowFile(path)
	if err == nil && w.Name == name {
		s.Workflows[name] = w
		return w, nil
	}
	if err := s.unlazy(); err != nil {
		return nil, err
	}
	return s.Workflows[name], nil
}

// unlazy makes a lazy Set whole, under its lock: every workflow parsed and
// checked. Its Config stays as read (others read it without the lock).
func (s *Set) unlazy() error {
	if s.lazy == nil {
		return nil
	}
	full, err := s.full()
	if err != nil {
		return fmt.Errorf("workflows changed while agentx ran: %w", err)
	}
	s.Workflows, s.broken, s.lazy = full.Workflows, full.broken, nil
	return nil
}

// Watch tells a long-lived process whether the files Load reads
// (config.toml and workflows/*.toml) changed since it last looked: one
// edited, added, removed or renamed. Not safe for concurrent use.
type Watch struct {
	Dir    string // the .agentx directory
	seen   []memoFile
	looked bool
}

// Changed reports whether the files differ from when Changed last looked
// (the first look only takes note). A directory that cannot be read now is
// no change: the rules already read stay.
func (w *Watch) Changed() bool {
	now, err := sources(w.Dir)
	if err != nil {
		return false
	}
	changed := w.looked && !sameSources(w.seen, now)
	w.seen, w.looked = now, true
	return changed
}
