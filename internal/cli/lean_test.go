package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runLean runs the lean binary's command line in-process: no Extra, and
// an exec that records what it would run instead of replacing the test.
func runLean(t *testing.T, dir string, env map[string]string, args ...string) (result, *[]string) {
	t.Helper()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	var ran []string
	a := &App{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return env[k] },
		exec: func(path string, args, _ []string) (int, error) {
			ran = append([]string{path}, args...)
			return 0, nil
		},
	}
	code := run(context.Background(), a, args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}, &ran
}

// TestLeanRunsFull: the lean binary hands the full binary's commands, and
// in a workspace with [github] or [slack] the commands that reach them, to
// agentx-full with the command line unchanged; everything else it runs
// itself. Without agentx-full it says so (no_full_binary) and what to do.
func TestLeanRunsFull(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	fake := filepath.Join(t.TempDir(), "agentx-full")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755))
	env := map[string]string{EnvFull: fake, "AGENTX_AGENT": "engineer"}

	for _, args := range [][]string{
		{"doctor", "--fix"},
		{"mcp", "--max-wait", "5s"},
		{"github", "status", "--json"},
		{"slack", "sync"},
		{"skills", "list"},
	} {
		r, ran := runLean(t, dir, env, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		require.Equal(t, append([]string{fake}, args...), *ran, "%v", args)
	}

	r, ran := runLean(t, dir, env, "help", "github")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []string{fake, "help", "github"}, *ran, "help for a full command is agentx-full's")
	for _, args := range [][]string{{"__complete", "github", ""}, {"__complete", "doctor", "--"}} {
		r, ran = runLean(t, dir, env, args...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, append([]string{fake}, args...), *ran, "a shell's completion of a full command is agentx-full's")
	}

	// no [github] or [slack]: the everyday commands run here
	ask := []string{"clarify", "ask", "--issue", "3", "--to", "architect", "--topic", "t", "--question", "q?", "--non-blocking"}
	for _, args := range [][]string{ask, {"clarify", "list"}, {"ready", "--issue", "3"}, {"version"}} {
		r, ran := runLean(t, dir, env, args...)
		require.Contains(t, []int{0, 9}, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, *ran, "%v ran agentx-full", args)
	}

	// with [github], those that reach GitHub go to agentx-full before
	// doing anything (nothing asked here); the others still run here
	appendConfig(t, dir, "\n[github]\nrepo = \"octo-org/octo-repo\"\n")
	for _, args := range [][]string{ask, {"clarify", "list"}, {"ready", "--issue", "3"}, {"hook", "start", "--issue", "3", "--agent", "engineer"}} {
		r, ran := runLean(t, dir, env, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		require.Equal(t, append([]string{fake}, args...), *ran, "%v", args)
	}
	for _, args := range [][]string{{"workflow", "list"}, {"proposals", "list"}} {
		r, ran = runLean(t, dir, env, args...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Empty(t, *ran, "%v reaches neither GitHub nor Slack", args)
	}
	r, ran = runLean(t, dir, env, "proposals", "create", "--type", "tool_fix", "--title", "t", "--rationale", "r", "--action", "a")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotEmpty(t, *ran, "a proposal is posted: agentx-full")
	recs := runCmd(t, dir, env, "", "clarify", "list", "--issue", "3", "--json")
	require.Equal(t, 1, strings.Count(recs.stdout, `"id": "CLR-3-`), "the ask handed over must not also have run here: %s", recs.stdout)

	// [github] but no agentx-full: the ask runs here without GitHub, with a
	// warning (what GitHub mode would send stays queued in the event log)
	noFull := map[string]string{EnvFull: filepath.Join(dir, "missing"), "AGENTX_AGENT": "engineer"}
	r, ran = runLean(t, dir, noFull, ask...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, *ran)
	require.Contains(t, r.stderr, "warning: GitHub and Slack modes run in agentx-full, which is not installed")
	recs = runCmd(t, dir, env, "", "clarify", "list", "--issue", "3", "--json")
	require.Equal(t, 2, strings.Count(recs.stdout, `"id": "CLR-3-`), recs.stdout)

	// no agentx-full: exit 1, no_full_binary, and how to install it
	r, _ = runLean(t, dir, map[string]string{EnvFull: filepath.Join(dir, "missing")}, "doctor", "--json")
	require.Equal(t, 1, r.code)
	var doc struct {
		Error struct{ Code, Message, Hint string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &doc), r.stderr)
	require.Equal(t, "no_full_binary", doc.Error.Code)
	require.Contains(t, doc.Error.Message, EnvFull)

	r, _ = runLean(t, dir, map[string]string{EnvFull: filepath.Join(dir, "missing")}, "help", "slack")
	require.Equal(t, 1, r.code, "help that agentx-full cannot give fails as the command would")
	require.Contains(t, r.stderr, "needs agentx-full")

	t.Setenv("PATH", t.TempDir())
	r, _ = runLean(t, dir, nil, "mcp")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "needs agentx-full")
	require.Contains(t, r.stderr, "go install github.com/agentx-cli/agentx/cmd/...@latest")
}

// TestValidateTrustsNoMemo: agentx workflow validate parses every file,
// even while the workflow memo vouches for them (here a file changed
// behind it, keeping its size and time).
func TestValidateTrustsNoMemo(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	old := time.Now().Add(-time.Hour)
	bug := filepath.Join(dir, ".agentx", "workflows", "bug.toml")
	for _, p := range []string{filepath.Join(dir, ".agentx", "config.toml"), bug,
		filepath.Join(dir, ".agentx", "workflows", "feature.toml"), filepath.Join(dir, ".agentx", "workflows", "story.toml")} {
		require.NoError(t, os.Chtimes(p, old, old))
	}
	require.Equal(t, 0, runCmd(t, dir, nil, "", "workflow", "list").code)
	require.FileExists(t, filepath.Join(dir, ".agentx", "state", "cache", "workflows"))

	data, err := os.ReadFile(bug)
	require.NoError(t, err)
	broken := []byte(strings.Replace(string(data), "[workflow]", "[workflox]", 1))
	require.Len(t, broken, len(data))
	require.NoError(t, os.WriteFile(bug, broken, 0o644))
	require.NoError(t, os.Chtimes(bug, old, old))

	r := runCmd(t, dir, nil, "", "workflow", "validate")
	require.Equal(t, 7, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "bug.toml")
}
