package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
)

// SettingsFile, in the state directory's remote/, keeps what the last
// git config said of the settings a commit depends on (Git.settings), with
// what that answer depended on: the configuration files git read and the
// environment. A later process whose files and environment are the same
// takes the answer from it instead of starting git config (about 1.3 ms
// of CPU and a process on every write). Local to this machine, derived:
// without it git config runs.
const SettingsFile = "git-settings.json"

// settingsFor is how long a kept answer is taken at most, whatever the
// files say: a system configuration file at a place this code does not
// look (a git built with another prefix), made since, is seen within it.
const settingsFor = 10 * time.Minute

// keptSettings is SettingsFile's content.
type keptSettings struct {
	Dir   string      `json:"dir"`   // the workspace's root, as the process that read them had it
	Env   string      `json:"env"`   // envPrint when they were read
	Files []fileStamp `json:"files"` // every file git read them from, or may read them from
	At    time.Time   `json:"at"`    // when they were read

	Signing   bool   `json:"signing"`
	FsyncSet  bool   `json:"fsyncSet"`
	SyncLoose bool   `json:"syncLoose"`
	ObjectDir string `json:"objectDir"`
}

// fileStamp is a file as it was: its identity, size and time of change,
// the link's and what it points at ("" for a file that was not there).
type fileStamp struct {
	Path  string `json:"path"`
	Stamp string `json:"stamp"`
}

// stamp is what a file at path is now, "" when there is none: the link's
// and its target's size, mode and time of change; and the later of those
// times. A file rewritten (git config writes a new file and renames it
// over), edited, or a link moved to another file, stamps differently.
func stamp(path string) (string, time.Time) {
	var parts []string
	var changed time.Time
	for _, stat := range []func(string) (os.FileInfo, error){os.Lstat, os.Stat} {
		fi, err := stat(path)
		if err != nil {
			if len(parts) > 0 {
				parts = append(parts, "dangling")
			}
			break
		}
		parts = append(parts, strconv.FormatInt(fi.Size(), 10)+":"+strconv.FormatUint(uint64(fi.Mode()), 8)+":"+strconv.FormatInt(fi.ModTime().UnixNano(), 10))
		if fi.ModTime().After(changed) {
			changed = fi.ModTime()
		}
	}
	return strings.Join(parts, "|"), changed
}

// envPrint is the environment git's reading of its configuration depends
// on, hashed (it may hold secrets: GIT_CONFIG_VALUE_n, askpass helpers):
// every GIT_ variable, and where the home directory (USERPROFILE on
// Windows without HOME) and the XDG one are.
func envPrint() string {
	var kept []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") || strings.HasPrefix(kv, "USERPROFILE=") {
			kept = append(kept, kv)
		}
	}
	slices.Sort(kept)
	h := sha256.Sum256([]byte(strings.Join(kept, "\x00")))
	return hex.EncodeToString(h[:])
}

// standardConfigs are the files git reads its configuration from besides
// the repository's, whether or not they are there now: the system file,
// and the two global ones.
func standardConfigs() []string {
	files := []string{"/etc/gitconfig"}
	home := os.Getenv("HOME")
	if home == "" {
		home = os.Getenv("USERPROFILE") // git for Windows without HOME
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	return files
}

// loadSettings takes the settings from SettingsFile when what they
// depend on is as it was; it reports whether it did.
func (g *Git) loadSettings() bool {
	if g.settingsCache == "" {
		return false
	}
	data, err := atomicfile.ReadFile(g.settingsCache)
	if err != nil {
		return false
	}
	var k keptSettings
	if json.Unmarshal(data, &k) != nil || k.Dir != g.Dir || k.Env != envPrint() || len(k.Files) == 0 {
		return false
	}
	if age := time.Since(k.At); age < 0 || age > settingsFor {
		return false
	}
	for _, f := range k.Files {
		if now, _ := stamp(f.Path); now != f.Stamp {
			return false
		}
	}
	if k.ObjectDir != "" && !k.beside(k.ObjectDir) {
		return false
	}
	g.signing, g.fsyncSet, g.syncLoose, g.objectDir = k.Signing, k.FsyncSet, k.SyncLoose, k.ObjectDir
	return true
}

// beside reports whether dir is the objects directory of a repository
// configuration file k was read from, and is a directory: where objects
// may be written is never taken from the file alone.
func (k *keptSettings) beside(dir string) bool {
	for _, f := range k.Files {
		if f.Stamp != "" && filepath.Base(f.Path) == "config" && filepath.IsAbs(f.Path) &&
			filepath.Join(filepath.Dir(f.Path), "objects") == dir && !slices.Contains(standardConfigs(), f.Path) {
			st, err := os.Stat(dir)
			return err == nil && st.IsDir()
		}
	}
	return false
}

// keepSettings writes the settings just read to SettingsFile, with the
// files they came from (origins: git's names for them, less "file:") and those git may
// read them from. git config started at start: a file changed less than
// a second before it (the file system's clock is coarse) may have changed
// while git read it, so then nothing is kept. Nor where git's reading
// cannot be followed from here (followable false: an include, a
// worktree's own configuration, no repository configuration seen); an
// answer kept before is removed then.
func (g *Git) keepSettings(origins []string, followable bool, start time.Time) {
	if g.settingsCache == "" {
		return
	}
	k := keptSettings{Dir: g.Dir, Env: envPrint(), At: start,
		Signing: g.signing, FsyncSet: g.fsyncSet, SyncLoose: g.syncLoose, ObjectDir: g.objectDir}
	paths := standardConfigs()
	for _, o := range origins {
		if p := g.configPath(o); p != "" && !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		s, changed := stamp(p)
		if !changed.Before(start.Add(-time.Second)) && s != "" {
			followable = false
			break
		}
		k.Files = append(k.Files, fileStamp{Path: p, Stamp: s})
	}
	if !followable {
		_ = os.Remove(g.settingsCache)
		return
	}
	data, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(g.settingsCache), 0o755); err != nil {
		return
	}
	_ = atomicfile.WriteWith(g.settingsCache, append(data, '\n'), 0o644, atomicfile.Options{})
}
