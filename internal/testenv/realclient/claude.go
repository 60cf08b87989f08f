//go:build linux

package realclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ClaudeAPIKey is the API key ClaudeEnv gives Claude Code. The stand-in
// API takes any key; Claude Code asks whether to use a key found in its
// environment unless the key's last 20 characters are approved in
// ~/.claude.json, as ClaudeEnv does.
const ClaudeAPIKey = "sk-ant-api03-realclient-0000000000-stand-in-key-0123456789abcdefghij"

// ClaudeEnv makes a fresh HOME for Claude Code and the environment to run
// it with against the stand-in API at apiURL (an Anthropic's URL). Its
// ~/.claude.json says onboarding is done (else the first run shows a
// theme picker and checks it can reach api.anthropic.com) and approves
// ClaudeAPIKey (else a dialog asks); TrustProject trusts the directory it
// is run in (else a dialog asks).
//
// The environment is built, not inherited, so that nothing of the tests'
// own environment leaks in (CLAUDECODE and CLAUDE_CODE_* when they run
// under Claude Code): HOME, PATH, SHELL, LANG, TERM for tmux, the key and
// base URL, and the variables that turn off what needs the network: the
// auto-updater, telemetry, error reporting, and the rest of the
// "nonessential traffic" (the session title side request, the
// /api/hello probe...). Claude Code's temporary files and sockets go in a
// temporary directory of t (CLAUDE_CODE_TMPDIR and TMPDIR).
//
// Claude Code 2.1.328 starts in auto mode: a tool call that no rule allows
// goes to its safety check, a side request this stand-in cannot answer
// usefully, and a dialog then stops the session. Allow the tools a test
// calls (permissions.allow in the project's settings).
func ClaudeEnv(t testing.TB, apiURL string) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	tmp := t.TempDir()
	config := map[string]any{
		"hasCompletedOnboarding": true, // no theme picker, login or connectivity check
		"theme":                  "dark",
		"customApiKeyResponses": map[string]any{ // no "use this API key?" dialog
			"approved": []string{ClaudeAPIKey[len(ClaudeAPIKey)-20:]},
			"rejected": []string{},
		},
		"hasSeenAutoDefaultNotice":                true, // no "auto mode is now the default" banner
		"officialMarketplaceAutoInstallAttempted": true, // no plugin marketplace fetch
		"projects": map[string]any{},
	}
	if err := WriteJSON(filepath.Join(home, ".claude.json"), config); err != nil {
		t.Fatal(err)
	}
	shell := os.Getenv("SHELL")
	if shell == "" {
		shell = "/bin/sh"
	}
	env = []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"SHELL=" + shell,
		"LANG=C.UTF-8",
		"TERM=xterm-256color",
		"TMPDIR=" + tmp,
		"CLAUDE_CODE_TMPDIR=" + tmp,
		"ANTHROPIC_API_KEY=" + ClaudeAPIKey,
		"ANTHROPIC_BASE_URL=" + apiURL,
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}
	return home, env
}

// TrustProject marks dir trusted in home's ~/.claude.json, as accepting
// the "do you trust the files in this folder?" dialog does: the
// interactive Claude Code shows no such dialog, and the permissions.allow
// rules of the project's .claude/settings.json count (Claude Code ignores
// them in an untrusted folder, even with -p; it runs its hooks there with
// -p). dir is the directory Claude Code is run in; it is resolved as
// Claude Code sees it (symbolic links followed).
func TrustProject(home, dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("trust project: %w", err)
	}
	path := filepath.Join(home, ".claude.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("trust project: %w", err)
	}
	var config map[string]any
	if err := json.Unmarshal(data, &config); err != nil {
		return fmt.Errorf("trust project: %s: %w", path, err)
	}
	projects, _ := config["projects"].(map[string]any)
	if projects == nil {
		projects = map[string]any{}
	}
	project, _ := projects[real].(map[string]any)
	if project == nil {
		project = map[string]any{"allowedTools": []string{}}
	}
	project["hasTrustDialogAccepted"] = true
	projects[real] = project
	config["projects"] = projects
	if err := WriteJSON(path, config); err != nil {
		return fmt.Errorf("trust project: %w", err)
	}
	return nil
}

// WriteJSON writes v, indented, to path, making its directory: a
// settings.json, a .mcp.json.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ClaudeReady is on the interactive Claude Code's screen once it reads
// keys: its prompt. Keys typed before are echoed by the terminal, and
// then taken as pasted text, Enter included: wait for it before typing
// (Tmux.WaitScreen).
const ClaudeReady = "❯"

// Tmux runs one program in a window of a private tmux server, as a
// terminal for an interactive client: a test types into it and reads its
// screen. The window is TmuxWidth×TmuxHeight and stays, dead, when the
// program exits, so its last screen can be read.
type Tmux struct {
	t    testing.TB
	sock string // the private server's socket
	pane string // the program's pane, %N
	pid  int    // the program's process
}

// The size of a Tmux window.
const (
	TmuxWidth  = 200
	TmuxHeight = 50
)

// tmuxTimeout bounds each tmux command.
const tmuxTimeout = 10 * time.Second

// tmuxConf is the private server's configuration: a dead window stays;
// focus events are passed (Claude Code otherwise shows a hint about them).
const tmuxConf = `set -g remain-on-exit on
set -g focus-events on
set -g history-limit 10000
`

// StartTmux starts argv in dir with exactly env (nothing else is
// inherited) in a new tmux server of its own, with its socket in a
// temporary directory of t, and kills it (Kill) when t ends. It skips t
// when tmux is not installed, and fails it in CI.
func StartTmux(t testing.TB, dir string, env []string, argv ...string) *Tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tmux is not installed: %v", err)
		}
		t.Skipf("tmux is not installed: %v", err)
	}
	envBin, err := exec.LookPath("env")
	if err != nil {
		t.Fatalf("start tmux: %v", err)
	}
	sockDir := t.TempDir()
	conf := filepath.Join(sockDir, "tmux.conf")
	if err := os.WriteFile(conf, []byte(tmuxConf), 0o644); err != nil {
		t.Fatalf("start tmux: %v", err)
	}
	m := &Tmux{t: t, sock: filepath.Join(sockDir, "sock")}
	t.Cleanup(m.Kill)
	// Several arguments are run as they are, without a shell; env -i
	// replaces itself with argv[0], so the pane's process is the program.
	args := []string{"-f", conf, "new-session", "-d", "-x", strconv.Itoa(TmuxWidth), "-y", strconv.Itoa(TmuxHeight), "-c", dir, "--", envBin, "-i"}
	args = append(append(args, env...), argv...)
	if _, err := m.run(args...); err != nil {
		t.Fatalf("start tmux: %v", err)
	}
	out, err := m.run("display-message", "-p", "#{pane_id} #{pane_pid}")
	if err != nil {
		t.Fatalf("start tmux: %v", err)
	}
	pane, pid, _ := strings.Cut(strings.TrimSpace(out), " ")
	if m.pid, err = strconv.Atoi(pid); err != nil {
		t.Fatalf("start tmux: pane %q: %v", out, err)
	}
	m.pane = pane
	return m
}

// run runs the tmux command args on m's server and returns its output.
func (m *Tmux) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-S", m.sock}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // no TMUX: not nested
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("tmux %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// PID is the program's process id (claude's, for a Tmux running claude).
func (m *Tmux) PID() int { return m.pid }

// SendKeys sends keys, each a tmux key name: "Enter", "Escape", "C-c",
// "Up"... (see Type for text).
func (m *Tmux) SendKeys(keys ...string) error {
	_, err := m.run(append([]string{"send-keys", "-t", m.pane}, keys...)...)
	return err
}

// Type types text as it is, no key names.
func (m *Tmux) Type(text string) error {
	_, err := m.run("send-keys", "-t", m.pane, "-l", "--", text)
	return err
}

// Submit types text, waits for it on the screen, so that Enter does not
// come with it and is not taken for pasted text, and presses Enter. Wait
// for the program to read keys first (see ClaudeReady): the terminal
// echoes what is typed before.
func (m *Tmux) Submit(ctx context.Context, text string) error {
	if err := m.Type(text); err != nil {
		return err
	}
	if _, err := m.WaitScreen(ctx, text); err != nil {
		return fmt.Errorf("submit %q: %w", text, err)
	}
	return m.SendKeys("Enter")
}

// Capture is the window's screen, its lines joined where they wrapped;
// "" once the server is gone.
func (m *Tmux) Capture() string {
	out, err := m.run("capture-pane", "-p", "-J", "-t", m.pane)
	if err != nil {
		return ""
	}
	return out
}

// WaitScreen waits until the screen shows substr and returns the screen;
// or ctx's error, with the last screen, when ctx ends first. It looks
// every 100 ms: tmux tells no one when a screen changes.
func (m *Tmux) WaitScreen(ctx context.Context, substr string) (string, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		screen := m.Capture()
		if strings.Contains(screen, substr) {
			return screen, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return screen, fmt.Errorf("the screen does not show %q: %w; it shows:\n%s", substr, ctx.Err(), screen)
		}
	}
}

// Alive tells whether the program still runs: its pane is not dead and
// it is not a zombie (tmux may be slow to wait for a killed program).
func (m *Tmux) Alive() bool {
	out, err := m.run("display-message", "-p", "-t", m.pane, "#{pane_dead}")
	return err == nil && strings.TrimSpace(out) == "0" && processAlive(m.pid)
}

// killGrace is how long Kill lets the program end on the SIGHUP of its
// terminal closing before it kills it.
const killGrace = 5 * time.Second

// Kill ends the tmux server, which hangs up on the program, and kills the
// program (SIGKILL) if it has not ended killGrace later. It may be called
// more than once.
func (m *Tmux) Kill() {
	_, _ = m.run("kill-server") // fails once the server is gone: nothing to do
	if m.pid == 0 {
		return
	}
	grace := time.NewTimer(killGrace)
	defer grace.Stop()
	tick := time.NewTicker(50 * time.Millisecond) // not our child: no wait
	defer tick.Stop()
	for processAlive(m.pid) {
		select {
		case <-tick.C:
		case <-grace.C:
			m.t.Logf("tmux: pid %d still runs %v after its terminal closed: killed", m.pid, killGrace)
			if p, err := os.FindProcess(m.pid); err == nil {
				_ = p.Kill() // gone meanwhile: fine
			}
			return
		}
	}
}

// processAlive tells whether pid runs (and is not a zombie), from
// /proc/PID/stat: a process not ours is not waited for, and one orphaned
// stays a zombie until its new parent reaps it.
func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && i+2 < len(data) && data[i+2] != 'Z' && data[i+2] != 'X'
}
