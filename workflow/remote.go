package workflow

import (
	"strings"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"
)

// Defaults of the [remote] table.
const (
	// DefaultRemoteRefs is where the ledgers live on the remote: one ref per
	// issue, refs/agentx/clarifications/issue-N.
	DefaultRemoteRefs = "refs/agentx/clarifications"
	// DefaultRemoteInterval is how often ready, hooks and the monitor fetch
	// the refs at most.
	DefaultRemoteInterval = 10 * time.Second
	// DefaultRemoteTimeout bounds one exchange with the remote; past it the
	// change goes to the outbox.
	DefaultRemoteTimeout = 30 * time.Second
	// DefaultRemoteAttempts bounds the tries of one write that others keep
	// overtaking.
	DefaultRemoteAttempts = 20
	// DefaultRemoteMaxSkew is how far the times of the commits a host
	// fetches may be from its own clock before the two are taken to
	// disagree.
	DefaultRemoteMaxSkew = 5 * time.Minute
)

// RemoteConfig is the [remote] table: the ledgers are shared through git
// refs on one of the repository's remotes.
type RemoteConfig struct {
	Git      string   `json:"git"`      // the remote's name (or URL) as git knows it
	Branch   string   `json:"branch"`   // "": custom refs; else branches BRANCH/issue-N
	Interval Duration `json:"interval"` // reads fetch at most once per interval
	Timeout  Duration `json:"timeout"`  // one exchange with the remote
	Attempts int      `json:"attempts"` // tries of one write
	// MaxSkew is how far a commit's time may be from when this host's
	// clock says it was made: past it the clocks disagree, and this host
	// takes no time-based action on other hosts' questions.
	MaxSkew Duration `json:"max_skew"`
	// RequireSigned has every commit pulled verified with git
	// verify-commit: one git cannot verify is refused.
	RequireSigned bool `json:"require_signed"`
}

// Refs is the ref prefix the ledgers live under: refs/agentx/clarifications,
// or refs/heads/BRANCH with a branch.
func (r *RemoteConfig) Refs() string {
	if r.Branch != "" {
		return "refs/heads/" + r.Branch
	}
	return DefaultRemoteRefs
}

// remote decodes the [remote] table.
func (d *doc) remote(prim toml.Primitive) *RemoteConfig {
	p := []string{"remote"}
	t, ok := d.table(prim, p, p)
	if !ok {
		return nil
	}
	r := &RemoteConfig{Interval: Duration{DefaultRemoteInterval}, Timeout: Duration{DefaultRemoteTimeout}, Attempts: DefaultRemoteAttempts,
		MaxSkew: Duration{DefaultRemoteMaxSkew}}
	def := d.decodeTable(t, p, p, []field{
		{"git", &r.Git, "a string"},
		{"branch", &r.Branch, "a string"},
		{"interval", &r.Interval, "a duration string"},
		{"timeout", &r.Timeout, "a duration string"},
		{"attempts", &r.Attempts, "an integer"},
		{"require_signed", &r.RequireSigned, "true or false"},
		{"max_skew", &r.MaxSkew, "a duration string"},
	})
	if _, present := t["git"]; !present {
		d.addf(with(p, "git"), with(p, "git"), `the git remote the ledgers are shared on, e.g. git = "origin"`, "required")
	} else if def["git"] && !ValidGitRemote(r.Git) {
		d.addf(with(p, "git"), with(p, "git"), `a remote's name as git remote -v lists it, e.g. "origin", or a URL`, "%q is not a git remote", r.Git)
	}
	if def["branch"] && !validBranch(r.Branch) {
		d.addf(with(p, "branch"), with(p, "branch"), `a branch prefix for hosts that refuse custom refs, e.g. "agentx/clarifications" (each issue is then the branch agentx/clarifications/issue-N)`, "%q is not a branch name", r.Branch)
	}
	if def["interval"] && r.Interval.Duration < 0 {
		d.addf(with(p, "interval"), with(p, "interval"), `"0s" fetches on every command`, "must not be negative, got %q", r.Interval.String())
	}
	d.positive(def["timeout"], r.Timeout, with(p, "timeout"))
	d.positive(def["max_skew"], r.MaxSkew, with(p, "max_skew"))
	if def["attempts"] && (r.Attempts < 1 || r.Attempts > 100) {
		d.addf(with(p, "attempts"), with(p, "attempts"), "", "must be from 1 to 100, got %d", r.Attempts)
	}
	return r
}

// ValidGitRemote reports whether s can be passed to git as a remote: a
// name or URL that does not start with "-" (never an option), with no
// space or control character.
func ValidGitRemote(s string) bool {
	if s == "" || len(s) > 1024 || strings.HasPrefix(s, "-") {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}

// validBranch is a conservative subset of git check-ref-format: path
// segments of letters, digits, '-', '_' and '.', none starting with '.' or
// '-', none ending in ".lock", no "..".
func validBranch(s string) bool {
	if s == "" || len(s) > 200 || strings.Contains(s, "..") {
		return false
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == "" || seg[0] == '.' || seg[0] == '-' || strings.HasSuffix(seg, ".lock") {
			return false
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
				return false
			}
		}
	}
	return true
}

// ParseConfig validates config.toml content as if read from file.
func ParseConfig(file string, data []byte) (*Config, error) { return parseConfig(file, data) }
