package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentx-cli/agentx/internal/atomicfile"
	"github.com/agentx-cli/agentx/ledger"
	"github.com/agentx-cli/agentx/workflow"
)

// EnvTrust names the environment variable that trusts command sets by their
// hash without a record: one or more Hash values separated by commas.
const EnvTrust = "AGENTX_TRUST"

// The kinds of command a workspace names.
const (
	KindResponder = "responder" // [agents.NAME] command
	KindResume    = "resume"    // [agents.NAME] resume
	KindQueue     = "queue"     // [agents.NAME] queue
	KindNotify    = "notify"    // [notify] command
	KindCheck     = "check"     // [[steps.evaluate]] command
	KindEndpoint  = "endpoint"  // [github] or [slack] api_url other than the public one
)

// Command is one command a workspace's files name.
type Command struct {
	Kind string   `json:"kind"`
	Name string   `json:"name"` // the agent (responder, resume), "workflow/step/check" (check), "" (notify)
	Argv []string `json:"argv"`
	// Files are the files of the workspace the arguments name (a script
	// the command runs), by the argument, with the SHA-256 of their
	// content: a script changed under the same command line is a changed
	// command.
	Files map[string]string `json:"files,omitempty"`
}

// Responder is the command of agent's responder.
func Responder(agent string, argv []string) Command {
	return Command{Kind: KindResponder, Name: agent, Argv: argv}
}

// Resume is the resume template of agent, as written (placeholders unfilled).
func Resume(agent string, tmpl []string) Command {
	return Command{Kind: KindResume, Name: agent, Argv: tmpl}
}

// Queue is the queue template of agent, as written.
func Queue(agent string, tmpl []string) Command {
	return Command{Kind: KindQueue, Name: agent, Argv: tmpl}
}

// Notify is the [notify] command.
func Notify(argv []string) Command { return Command{Kind: KindNotify, Argv: argv} }

// CheckCommand is the evaluation check named check of step in workflow wf.
func CheckCommand(wf, step, check string, argv []string) Command {
	return Command{Kind: KindCheck, Name: wf + "/" + step + "/" + check, Argv: argv}
}

// Endpoint is the address a channel ("github", "slack") sends its
// token to, when the workspace names one other than the public API: a
// cloned repository's api_url receives the user's token only once a person
// trusted it, as a command would run only then.
func Endpoint(channel, apiURL string) Command {
	return Command{Kind: KindEndpoint, Name: channel, Argv: []string{apiURL}}
}

// What says in a few words which command c is, for a person.
func (c Command) What() string {
	switch c.Kind {
	case KindResponder:
		return "the " + c.Name + " responder"
	case KindResume:
		return "the " + c.Name + " resume command"
	case KindQueue:
		return "the " + c.Name + " queue command"
	case KindNotify:
		return "the notify command"
	case KindCheck:
		return "the evaluation check " + c.Name
	case KindEndpoint:
		return "the [" + c.Name + "] api_url, which receives the " + c.Name + " token"
	}
	return c.Kind + " " + c.Name
}

// Line is the command line, each argument quoted when it needs to be.
func (c Command) Line() string {
	out := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?;&|<>(){}[]#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func (c Command) key() string { return c.Kind + "\x00" + c.Name }

// Commands lists every command rules name, sorted by kind and name, with
// the files under root their arguments name (see Command.Files). It
// parses every workflow; one that does not parse is an error, since what it
// would run cannot be known.
func Commands(rules *workflow.Set, root string) ([]Command, error) {
	var out []Command
	if cfg := rules.Config; cfg != nil {
		for name, a := range cfg.Agents {
			if len(a.Command) > 0 {
				out = append(out, Responder(name, a.Command))
			}
			if len(a.Resume) > 0 {
				out = append(out, Resume(name, a.Resume))
			}
			if len(a.Queue) > 0 {
				out = append(out, Queue(name, a.Queue))
			}
		}
		if n := cfg.Notify; n != nil && len(n.Command) > 0 {
			out = append(out, Notify(n.Command))
		}
		if g := cfg.GitHub; g != nil && g.APIURL != workflow.DefaultGitHubAPI {
			out = append(out, Endpoint("github", g.APIURL))
		}
		if sl := cfg.Slack; sl != nil && sl.APIURL != workflow.DefaultSlackAPI {
			out = append(out, Endpoint("slack", sl.APIURL))
		}
	}
	for _, name := range rules.Names() {
		w, err := rules.Workflow(name)
		if err != nil {
			return nil, err
		}
		for _, s := range w.Steps {
			for _, c := range s.Evaluate {
				out = append(out, CheckCommand(w.Name, s.ID, c.Name, c.Command))
			}
		}
	}
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.key(), b.key()) })
	for i := range out {
		if out[i].Kind != KindEndpoint {
			out[i].Files = files(root, out[i].Argv)
		}
	}
	return out, nil
}

// maxFile bounds what is read of one file a command names; past it the
// digest covers the first maxFile bytes and the size.
const maxFile = 64 << 20

// files digests the regular files under root that the arguments of argv
// name: as a path relative to root (./notify.sh, scripts/check.py), or an
// absolute path inside it. A link is followed, as running it would.
func files(root string, argv []string) map[string]string {
	var out map[string]string
	for _, a := range argv {
		if a == "" || strings.ContainsRune(a, 0) {
			continue
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		if rel, err := filepath.Rel(root, p); err != nil || rel == "." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || rel == ".." {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		h := sha256.New()
		n, _ := io.Copy(h, io.LimitReader(f, maxFile))
		f.Close()
		if fi.Size() > n {
			fmt.Fprintf(h, "\x00size %d", fi.Size())
		}
		if out == nil {
			out = map[string]string{}
		}
		out[a] = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	return out
}

// Hash names a set of commands: "sha256:" and the hex digest of their JSON
// (kind, name and argv of each, in the order Commands sorts them). Any
// change to a command, or a command added or removed, changes it.
func Hash(cmds []Command) string {
	if cmds == nil {
		cmds = []Command{}
	}
	b, _ := json.Marshal(cmds) // strings and slices of strings always encode
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Record is what a Store keeps for one workspace.
type Record struct {
	Root      string      `json:"root"`
	Hash      string      `json:"hash"`
	Commands  []Command   `json:"commands"`
	TrustedAt ledger.Time `json:"trustedAt"`
}

// Store keeps the trusted hashes of this machine, one file per workspace.
type Store struct {
	Dir string // UserConfigDir/agentx/trusted
}

// DefaultStore is the store under the user's configuration directory
// (os.UserConfigDir: $XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application
// Support on macOS, %AppData% on Windows), read through getenv.
func DefaultStore(getenv func(string) string) (Store, error) {
	dir, err := userConfigDir(getenv)
	if err != nil {
		return Store{}, fmt.Errorf("trust: no configuration directory for this user: %w", err)
	}
	return Store{Dir: filepath.Join(dir, "agentx", "trusted")}, nil
}

// Canonical is the absolute path a workspace is known by: links resolved
// where they resolve.
func Canonical(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("trust: %w", err)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return abs, nil
}

// path is the file that keeps root's record: named by a digest of the
// canonical path, so any path makes a plain file name.
func (s Store) path(root string) string {
	if s.Dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:16])+".json")
}

// maxRecord bounds the record read back: a file this size is not one agentx wrote.
const maxRecord = 4 << 20

// Lookup returns the record for root (canonical); ok is false when there is none.
// A record that does not parse, or belongs to another path, is no record.
func (s Store) Lookup(root string) (rec Record, ok bool, err error) {
	if s.Dir == "" {
		return Record{}, false, nil
	}
	b, err := atomicfile.ReadAtMost(s.path(root), maxRecord)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, fmt.Errorf("trust: read %s: %w", s.path(root), err)
	}
	if json.Unmarshal(b, &rec) != nil || rec.Root != root || rec.Hash == "" {
		return Record{}, false, nil
	}
	return rec, true, nil
}

// Trust records cmds as trusted for root (canonical), replacing any earlier
// record. The file is the user's alone (0600 in a 0700 directory) and is
// never written through a link.
func (s Store) Trust(root string, cmds []Command, now time.Time) (Record, error) {
	if cmds == nil {
		cmds = []Command{}
	}
	rec := Record{Root: root, Hash: Hash(cmds), Commands: cmds, TrustedAt: ledger.T(now)}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return Record{}, fmt.Errorf("trust: %w", err)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return Record{}, fmt.Errorf("trust: %w", err)
	}
	if err := atomicfile.Write(s.path(root), append(b, '\n'), 0o600); err != nil {
		return Record{}, fmt.Errorf("trust: %w", err)
	}
	return rec, nil
}

// Revoke removes root's record; it reports whether there was one.
func (s Store) Revoke(root string) (bool, error) {
	err := os.Remove(s.path(root))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("trust: %w", err)
	}
	return true, nil
}

// The states of a workspace's commands on this machine.
const (
	StateNone      = "none"      // the workspace names no command: nothing to trust
	StateTrusted   = "trusted"   // trusted: recorded here, or pinned by AGENTX_TRUST
	StateUntrusted = "untrusted" // never trusted here
	StateChanged   = "changed"   // trusted once, and the commands changed since
	StateInvalid   = "invalid"   // a workflow does not parse: what would run is unknown
)

// Status is what this machine trusts of a workspace's commands.
type Status struct {
	Root        string      `json:"root"`
	State       string      `json:"state"`
	Hash        string      `json:"hash,omitempty"`        // the commands as they are now
	TrustedHash string      `json:"trustedHash,omitempty"` // the commands as they were trusted
	TrustedAt   ledger.Time `json:"trustedAt,omitzero"`
	Pinned      bool        `json:"pinned,omitempty"` // trusted by AGENTX_TRUST
	Commands    []Command   `json:"commands"`
	// Changed lists the commands added or changed since they were trusted (changed only).
	Changed []Command `json:"changed,omitempty"`
	Store   string    `json:"store"` // the file that keeps the record
	Err     string    `json:"error,omitempty"`
}

// Trusted reports whether the commands may run.
func (s Status) Trusted() bool { return s.State == StateTrusted || s.State == StateNone }

// Examine works out root's status against the store and the pinned hashes
// (AGENTX_TRUST, as read through getenv).
func Examine(s Store, root string, rules *workflow.Set, getenv func(string) string) Status {
	st := Status{Root: root, Store: s.path(root), Commands: []Command{}}
	cmds, err := Commands(rules, root)
	if err != nil {
		st.State, st.Err = StateInvalid, err.Error()
		return st
	}
	if len(cmds) == 0 {
		st.State = StateNone
		return st
	}
	st.Commands, st.Hash = cmds, Hash(cmds)
	for _, h := range strings.Split(getenv(EnvTrust), ",") {
		if strings.TrimSpace(h) == st.Hash {
			st.State, st.Pinned = StateTrusted, true
			return st
		}
	}
	rec, ok, err := s.Lookup(root)
	switch {
	case err != nil:
		st.State, st.Err = StateUntrusted, err.Error()
	case !ok:
		st.State = StateUntrusted
	case rec.Hash == st.Hash:
		st.State, st.TrustedHash, st.TrustedAt = StateTrusted, rec.Hash, rec.TrustedAt
	default:
		st.State, st.TrustedHash, st.TrustedAt = StateChanged, rec.Hash, rec.TrustedAt
		st.Changed = changed(rec.Commands, cmds)
	}
	return st
}

// changed lists the commands of now that were not in was as they are.
func changed(was, now []Command) []Command {
	old := make(map[string]Command, len(was))
	for _, c := range was {
		old[c.key()] = c
	}
	var out []Command
	for _, c := range now {
		if a, ok := old[c.key()]; !ok || Hash([]Command{a}) != Hash([]Command{c}) {
			out = append(out, c)
		}
	}
	return out
}
