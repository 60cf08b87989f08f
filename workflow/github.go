package workflow

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Defaults of the [github] table.
const (
	DefaultGitHubAPI = "https://api.github.com/"
	// DefaultGitHubInterval is how often an issue's comments are read at
	// most: hooks, ready and waits read them no more often than this.
	DefaultGitHubInterval = time.Minute
	// DefaultGitHubTimeout bounds the GitHub work one command does, so an
	// unreachable GitHub never holds up a hook or a gate for long.
	DefaultGitHubTimeout = 10 * time.Second
)

// GitHubConfig is the [github] table: mirror each issue's clarifications
// on the GitHub issue of the same number, and take answers from there.
type GitHubConfig struct {
	Repo      string   `json:"repo"`      // owner/name
	APIURL    string   `json:"api_url"`   // REST API base URL, with a trailing slash
	Mention   []string `json:"mention"`   // @login or @org/team, mentioned on escalations
	Answerers []string `json:"answerers"` // logins that may answer; empty: the repository's owners, members and collaborators
	Interval  Duration `json:"interval"`  // read an issue's comments at most this often
	Timeout   Duration `json:"timeout"`   // GitHub work one command may do
}

// Owner and Name split Repo.
func (g *GitHubConfig) Owner() string { o, _, _ := strings.Cut(g.Repo, "/"); return o }

// Name is the repository's name, the part of Repo after the slash.
func (g *GitHubConfig) Name() string { _, n, _ := strings.Cut(g.Repo, "/"); return n }

// The shapes of GitHub names, checked with plain code: regular expressions
// with these counted repeats would cost every agentx command hundreds of
// kilobytes at start-up.

// ValidGitHubLogin reports whether s has the shape of a GitHub login: 1 to
// 39 letters, digits and dashes, not starting with a dash.
func ValidGitHubLogin(s string) bool { return name(s, 39, "-", false) }

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// name checks 1 to max bytes of letters, digits and the bytes of extra,
// starting with a letter or digit unless anyStart.
func name(s string, max int, extra string, anyStart bool) bool {
	if s == "" || len(s) > max || (!anyStart && !isAlnum(s[0])) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && !strings.Contains(extra, s[i:i+1]) {
			return false
		}
	}
	return true
}

// validRepo: owner/name, a login and 1 to 100 letters, digits, '.', '_', '-'.
func validRepo(s string) bool {
	o, n, ok := strings.Cut(s, "/")
	return ok && ValidGitHubLogin(o) && name(n, 100, "._-", true)
}

// validMention: @login or @org/team.
func validMention(s string) bool {
	rest, ok := strings.CutPrefix(s, "@")
	if !ok {
		return false
	}
	org, team, isTeam := strings.Cut(rest, "/")
	return ValidGitHubLogin(org) && (!isTeam || name(team, 100, "_.-", false))
}

// github decodes the [github] table.
func (d *doc) github(prim toml.Primitive) *GitHubConfig {
	p := []string{"github"}
	t, ok := d.table(prim, p, p)
	if !ok {
		return nil
	}
	g := &GitHubConfig{APIURL: DefaultGitHubAPI, Mention: []string{}, Answerers: []string{},
		Interval: Duration{DefaultGitHubInterval}, Timeout: Duration{DefaultGitHubTimeout}}
	def := d.decodeTable(t, p, p, []field{
		{"repo", &g.Repo, "a string"},
		{"api_url", &g.APIURL, "a string"},
		{"mention", &g.Mention, "an array of strings"},
		{"answerers", &g.Answerers, "an array of strings"},
		{"interval", &g.Interval, "a duration string"},
		{"timeout", &g.Timeout, "a duration string"},
	})
	if _, present := t["repo"]; !present {
		d.addf(with(p, "repo"), with(p, "repo"), `the repository whose issues mirror the ledgers, e.g. repo = "octo-org/octo-repo"`, "required")
	} else if def["repo"] && !validRepo(g.Repo) {
		d.addf(with(p, "repo"), with(p, "repo"), `owner/name, e.g. "octo-org/octo-repo"`, "%q is not a repository", g.Repo)
	}
	d.apiURL(def["api_url"], &g.APIURL, with(p, "api_url"), `the REST API's base URL: "https://api.github.com/", or "https://HOST/api/v3/" for GitHub Enterprise Server`)
	if def["mention"] {
		for i, m := range g.Mention {
			switch {
			case !validMention(m):
				d.addf(with(p, "mention"), with(p, "mention"), `a login or a team with its @, e.g. ["@alice", "@octo-org/leads"]`, "%q is not a @login or @org/team", m)
			case slices.IndexFunc(g.Mention[:i], func(o string) bool { return strings.EqualFold(o, m) }) >= 0:
				d.addf(with(p, "mention"), with(p, "mention"), "", "%q is listed twice", m)
			}
		}
	}
	if def["answerers"] {
		for i, a := range g.Answerers {
			switch {
			case !ValidGitHubLogin(a):
				d.addf(with(p, "answerers"), with(p, "answerers"), `GitHub logins without the @, e.g. ["alice", "bob"]; leave answerers out to let the repository's owners, members and collaborators answer`, "%q is not a GitHub login", a)
			case slices.IndexFunc(g.Answerers[:i], func(o string) bool { return strings.EqualFold(o, a) }) >= 0:
				d.addf(with(p, "answerers"), with(p, "answerers"), "", "%q is listed twice", a)
			}
		}
	}
	if def["interval"] && g.Interval.Duration < 0 {
		d.addf(with(p, "interval"), with(p, "interval"), `"0s" reads the comments on every command`, "must not be negative, got %q", g.Interval.String())
	}
	d.positive(def["timeout"], g.Timeout, with(p, "timeout"))
	return g
}

// apiURL checks a service's base URL (an http(s) URL with no user,
// query or fragment) and ends it with a slash.
func (d *doc) apiURL(defined bool, v *string, p []string, hint string) {
	if !defined {
		return
	}
	u, err := url.Parse(*v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		d.addf(p, p, hint, "%q is not an http(s) URL", *v)
	} else if !strings.HasSuffix(*v, "/") {
		*v += "/"
	}
}
