package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentx-cli/agentx/internal/testenv"
	"github.com/agentx-cli/agentx/internal/trust"
	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/workflow"
)

// TestMain lets testscript run this test binary as the agentx command.
func TestMain(m *testing.M) {
	testenv.QuickRaceExit()
	// `agentx demo` run in-process by a test configures the running binary
	// (this test binary) as its responder: act as agentx for that call.
	if len(os.Args) > 1 && os.Args[1] == "demo-responder" {
		os.Exit(Main())
	}
	// A command a test runs in-process has a person at its terminal who
	// answers yes: no test asks the developer running it. The paths with
	// no terminal, or a no, are stories (person_terminal.txtar), whose
	// processes get the terminal they ask for.
	ttyOpen := openTerminal
	openTerminal = func() (io.ReadWriteCloser, error) { return fakeTerminal("yes"), nil }
	// git reads no configuration of the developer's: the tests' git (the
	// remote mode's, and the person's name agentx asks git for) sees one
	// identity of their own, whoever runs them
	if err := hermeticGit(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// a story runs agentx as it is installed
	testscript.Main(m, map[string]func(){
		"agentx": func() {
			openTerminal = ttyOpen
			storyTerminal()
			os.Exit(Main())
		},
	})
}

// TestScripts runs the user stories under testdata/script, one per file.
// Run with -update to rewrite the expected output in the scripts.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":   cmdExitcode,
			"envq":       cmdEnvq,
			"envrepeat":  cmdEnvRepeat,
			"repeat":     cmdRepeat,
			"maxbytes":   cmdMaxBytes,
			"setcontext": cmdSetContext,
			"ghfake":     cmdGHFake,
			"slackfake":  cmdSlackFake,
		},
		Setup: func(e *testscript.Env) error {
			e.Setenv("NO_COLOR", "")
			e.Setenv("AGENTX_ROOT", "")
			e.Setenv("HOME", e.WorkDir)
			e.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(e.WorkDir, ".gitconfig")) // the story's own, as its HOME's
			e.Setenv("GORACE", testenv.RaceEnv)                                   // -race children: no 1 s sleep at exit
			e.Setenv("GITHUB_TOKEN", "")                                          // GitHub mode: scripts use the fake's token
			e.Setenv("GH_TOKEN", "")
			e.Setenv("SLACK_BOT_TOKEN", "") // Slack mode: scripts use the fake's token
			e.Setenv("SLACK_APP_TOKEN", "")
			e.Setenv("XDG_CONFIG_HOME", "")   // trust records under $HOME/.config, in the story's $WORK
			e.Setenv(envStoryTerminal, "yes") // a person at the terminal confirms (see storyTerminal)
			setupGitHub(e)
			setupSlack(e)
			return nil
		},
	})
}

// envStoryTerminal is read by the test binary only, never by agentx: it
// says what the story's terminal answers when agentx asks a person to
// confirm ("yes", "no"), or "" for no terminal at all.
const envStoryTerminal = "AGENTX_TEST_TERMINAL"

// storyTerminal gives a story's agentx process the terminal the story
// asks for. The process is first detached from the terminal go test may
// have been run from (a story never asks a developer), so that with ""
// it has none, as under an agent's tool shell; "yes" or "no" stand for a
// person at a terminal answering that. The product reads no such
// variable: openTerminal is replaced in this test binary only.
func storyTerminal() {
	detachTerminal()
	switch ans := os.Getenv(envStoryTerminal); ans {
	case "yes", "no":
		openTerminal = func() (io.ReadWriteCloser, error) { return fakeTerminal(ans), nil }
	}
}

// fakeTerminal is a terminal whose person answers ans to every question.
type fakeTerminal string

func (f fakeTerminal) Read(p []byte) (int, error) { return copy(p, string(f)+"\n"), nil }
func (fakeTerminal) Write(p []byte) (int, error)  { return len(p), nil }
func (fakeTerminal) Close() error                 { return nil }

// cmdExitcode runs a program and checks its exit status:
//
//	exitcode 7 agentx workflow validate bad.toml
//
// stdout and stderr are kept for the following stdout/stderr checks.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Logf("stdout:\n%s", ts.ReadFile("stdout"))
		ts.Logf("stderr:\n%s", ts.ReadFile("stderr"))
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// cmdEnvq sets an environment variable to a Go-quoted string, so a script
// can pass control characters and line breaks in an argument:
//
//	envq TOPIC '"Cache\nCLR-42-999\x1b[2J"'
//	exec agentx clarify ask --topic $TOPIC ...
func cmdEnvq(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envq NAME QUOTED")
	}
	v, err := strconv.Unquote(args[1])
	if err != nil {
		ts.Fatalf("envq %s: %v", args[0], err)
	}
	ts.Setenv(args[0], v)
}

// result is what an in-process command run produced.
type result struct {
	code           int
	stdout, stderr string
}

// runCmd runs agentx in-process with buffers, in dir, with env.
func runCmd(t *testing.T, dir string, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	if dir != "" {
		t.Chdir(dir)
	}
	var out, errb bytes.Buffer
	a := &App{
		stdin:  strings.NewReader(stdin),
		stdout: &out,
		stderr: &errb,
		getenv: testGetenv(env),
	}
	code := run(context.Background(), a, args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// testGetenv is env as the environment of a command a test runs
// in-process. AGENTX_TRUST, unless env sets it, is the hash of the
// commands the workspace names when the command asks: such a test trusts
// the workspace it built itself. Stories trust theirs with agentx trust
// --yes; the trust checks are tested in trust_clone.txtar and cmd_trust_test.go.
// hermeticGit points git, for this process and what it starts, at a
// global configuration of the tests' own (a fixed identity) and at no
// system one.
//
// A story's agentx process (this binary, started by testscript) keeps the
// configuration its story set up (see TestScripts' Setup).
func hermeticGit() error {
	if os.Getenv(envStoryTerminal) != "" {
		return nil
	}
	cfg := filepath.Join(os.TempDir(), fmt.Sprintf("agentx-cli-test-gitconfig-%d", os.Getuid()))
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Test Person\n\temail = person@example.com\n"), 0o644); err != nil {
		return err
	}
	os.Setenv("GIT_CONFIG_GLOBAL", cfg)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return nil
}

func testGetenv(env map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok || k != trust.EnvTrust {
			return v
		}
		cwd, err := os.Getwd()
		if err != nil {
			return ""
		}
		root, err := workspace.Find(env["AGENTX_ROOT"], cwd)
		if err != nil {
			return ""
		}
		return commandsHash(root)
	}
}

// commandsHash is the hash of the commands the workspace at root names
// (what AGENTX_TRUST pins), or "" when it cannot be worked out.
func commandsHash(root string) string {
	rules, err := workflow.Load(filepath.Join(root, workspace.Dir))
	if err != nil {
		return ""
	}
	canon, err := trust.Canonical(root)
	if err != nil {
		return ""
	}
	cmds, err := trust.Commands(rules, canon)
	if err != nil {
		return ""
	}
	return trust.Hash(cmds)
}
