package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/internal/buildid"
	"github.com/agentx-cli/agentx/internal/fstime"
	"github.com/agentx-cli/agentx/ledger"
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
	Build string      `json:"build"` // the build that read them (buildid): another's may read them otherwise
	Dir   string      `json:"dir"`   // the workspace's root, as the process that read them had it
	Env   string      `json:"env"`   // envPrint when they were read
	Files []fileStamp `json:"files"` // every file git read them from, or may read them from
	At    time.Time   `json:"at"`    // when they were read

	Signing   bool   `json:"signing"`
	FsyncSet  bool   `json:"fsyncSet"`
	SyncLoose bool   `json:"syncLoose"`
	ObjectDir string `json:"objectDir"`
}

// fileStamp is a file as it was: the path itself and, when that is a
// link, what it points at (ledger.Stamp: inode, size, time of change;
// zero for no file there). A file rewritten (git config writes a new file
// and renames it over), edited, or a link moved to another file, stamps
// differently.
type fileStamp struct {
	Path   string       `json:"path"`
	Link   ledger.Stamp `json:"link"`
	Target ledger.Stamp `json:"target"`
}

// stampFile is what the file at path is now, and the later of the times
// of change of the path and of what it points at.
func stampFile(path string) (fileStamp, time.Time) {
	f := fileStamp{Path: path}
	var changed time.Time
	if fi, err := os.Lstat(path); err == nil {
		f.Link, changed = ledger.StampOf(fi), fi.ModTime()
	}
	if fi, err := os.Stat(path); err == nil {
		f.Target = ledger.StampOf(fi)
		if fi.ModTime().After(changed) {
			changed = fi.ModTime()
		}
	}
	return f, changed
}

// there reports whether the file was there (not a dangling link).
func (f fileStamp) there() bool { return f.Target != ledger.Stamp{} }

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
// the repository's, whether or not they are there now: the system file
// (GIT_CONFIG_SYSTEM, else /etc/gitconfig), and the global ones
// (GIT_CONFIG_GLOBAL alone when it is set, else the XDG one and
// ~/.gitconfig).
func standardConfigs() []string {
	system := "/etc/gitconfig"
	if p := os.Getenv("GIT_CONFIG_SYSTEM"); p != "" {
		system = p
	}
	files := []string{system}
	if p, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		if p != "" {
			files = append(files, p)
		}
		return files
	}
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

// settingsFile is where SettingsFile is.
func (g *Git) settingsFile() string { return filepath.Join(g.settingsState, SyncDir, SettingsFile) }

// loadSettings takes the settings from SettingsFile when what they
// depend on is as it was; it reports whether it did.
func (g *Git) loadSettings() bool {
	if g.settingsState == "" {
		return false
	}
	data, err := atomicfile.ReadFile(g.settingsFile())
	if err != nil {
		return false
	}
	var k keptSettings
	if json.Unmarshal(data, &k) != nil || k.Build != buildid.ID() || k.Dir != g.Dir || k.Env != envPrint() || len(k.Files) == 0 {
		return false
	}
	if age := time.Since(k.At); age < 0 || age > settingsFor {
		return false
	}
	for _, f := range k.Files {
		if now, _ := stampFile(f.Path); now != f {
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
	standard := standardConfigs()
	for _, f := range k.Files {
		if f.there() && filepath.Base(f.Path) == "config" && filepath.IsAbs(f.Path) &&
			filepath.Join(filepath.Dir(f.Path), "objects") == dir && !slices.Contains(standard, f.Path) {
			st, err := os.Stat(dir)
			return err == nil && st.IsDir()
		}
	}
	return false
}

// keepSettings writes the settings just read to SettingsFile, with the
// files they came from (origins: git's names for them, less "file:") and
// those git may read them from; git config started at start. Nothing is
// kept where git's reading cannot be followed from here (followable
// false: an include, a worktree's own configuration, no repository
// configuration seen), nor when a file's change had not settled when git
// read it (fstime: it could change again unseen); an answer kept before
// is removed then.
func (g *Git) keepSettings(origins []string, followable bool, start time.Time) {
	if g.settingsState == "" {
		return
	}
	path := g.settingsFile()
	k := keptSettings{Build: buildid.ID(), Dir: g.Dir, Env: envPrint(), At: start,
		Signing: g.signing, FsyncSet: g.fsyncSet, SyncLoose: g.syncLoose, ObjectDir: g.objectDir}
	if followable {
		paths := standardConfigs()
		for _, o := range origins {
			if p := g.configPath(o); p != "" && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
		for _, p := range paths {
			f, changed := stampFile(p)
			if f.Link != (ledger.Stamp{}) && !fstime.Default.Settled(changed, start) {
				followable = false
				break
			}
			k.Files = append(k.Files, f)
		}
	}
	if !followable {
		_ = os.Remove(path)
		return
	}
	data, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return
	}
	_ = atomicfile.WriteDerived(g.settingsState, path, append(data, '\n')) // a failure costs the next write a git config
}
