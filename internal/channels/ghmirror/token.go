package ghmirror

import (
	"context"
	"errors"
	"net/url"
	"os/exec"
	"strings"
	"time"
)

// Token finds the token GitHub mode authenticates with: GITHUB_TOKEN, else
// GH_TOKEN, else what `gh auth token` prints when the GitHub CLI is
// installed and logged in (for apiURL's host). source names where it came
// from, never the token. No token at all is an error saying how to give
// one.
func Token(ctx context.Context, getenv func(string) string, apiURL string) (token, source string, err error) {
	for _, name := range []string{"GITHUB_TOKEN", "GH_TOKEN"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v, name, nil
		}
	}
	if path, lerr := exec.LookPath("gh"); lerr == nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		args := []string{"auth", "token"}
		if u, perr := url.Parse(apiURL); perr == nil && u.Host != "" && u.Host != "api.github.com" {
			args = append(args, "--hostname", u.Hostname())
		}
		out, cerr := exec.CommandContext(ctx, path, args...).Output() // stderr is not kept: it is not shown
		if v := strings.TrimSpace(string(out)); cerr == nil && v != "" && !strings.ContainsAny(v, " \n") {
			return v, "gh auth token", nil
		}
	}
	return "", "", ErrNoToken
}

// ErrNoToken is GitHub mode configured with no token to use.
var ErrNoToken = errors.New("no GitHub token: set GITHUB_TOKEN or GH_TOKEN, or log in with `gh auth login`")
