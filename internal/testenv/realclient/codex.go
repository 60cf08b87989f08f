//go:build linux

package realclient

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// CodexKeyEnv is the environment variable the fake provider's API key is
// read from (the provider's env_key); CodexEnv sets it.
const CodexKeyEnv = "AGENTX_FAKE_OPENAI_KEY"

// CodexEnv makes a CODEX_HOME for the real Codex in a temporary
// directory: a config.toml whose model provider "agentxfake" is the
// Responses API at apiURL+"/v1" (an OpenAI's URL), with approvals off
// (approval_policy = "never"), no sandbox (sandbox_mode =
// "danger-full-access": Codex runs the model's commands as is), no update
// check, no analytics nor feedback, no request compression, and no
// retries. It returns the directory and the environment to run codex with:
// this process's, less every CODEX_*, OPENAI_*, HOME and XDG_* variable,
// plus CODEX_HOME, a temporary HOME, the provider's key (CodexKeyEnv),
// and TERM=xterm-256color when TERM is not set (for the TUI).
//
// Tests append to CODEX_HOME/config.toml what they need
// (AppendCodexConfig: MCP servers, hooks; TrustCodexProject,
// TrustCodexHooks). Codex keeps its sessions (rollouts), state databases
// (queue_1.sqlite...) and, for the interactive codex's background server,
// a copy of itself (about 400 MB, under packages/) in CODEX_HOME.
func CodexEnv(t testing.TB, apiURL string) (codexHome string, env []string) {
	t.Helper()
	codexHome = filepath.Join(t.TempDir(), "codex-home")
	home := filepath.Join(t.TempDir(), "home")
	for _, d := range []string{codexHome, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf(`# Written by realclient.CodexEnv.
model = %[1]s
model_provider = "agentxfake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.agentxfake]
name = "agentx fake"
base_url = %[2]s
wire_api = "responses"
env_key = %[3]s
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[features]
enable_request_compression = false
`, strconv.Quote(CodexModel), strconv.Quote(apiURL+"/v1"), strconv.Quote(CodexKeyEnv))
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "CODEX_"), strings.HasPrefix(name, "OPENAI_"),
			strings.HasPrefix(name, "XDG_"), name == "HOME":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "CODEX_HOME="+codexHome, "HOME="+home, CodexKeyEnv+"=sk-agentx-fake")
	if os.Getenv("TERM") == "" {
		env = append(env, "TERM=xterm-256color")
	}
	return codexHome, env
}

// AppendCodexConfig appends text, on lines of its own, to
// CODEX_HOME/config.toml.
func AppendCodexConfig(codexHome, text string) error {
	path := filepath.Join(codexHome, "config.toml")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString("\n" + text + "\n"); err != nil {
		_ = f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Close()
}

// TrustCodexProject marks dir a trusted project in CODEX_HOME/config.toml
// ([projects."DIR"] trust_level = "trusted"), as codex exec --trust does.
// Codex 0.171 loads a project's .codex/config.toml (and so its MCP
// servers) and .codex/hooks.json only when the project is trusted. (Trust
// does not let codex exec run outside a git repository: that takes
// --skip-git-repo-check.)
func TrustCodexProject(codexHome, dir string) error {
	return AppendCodexConfig(codexHome, fmt.Sprintf("[projects.%s]\ntrust_level = \"trusted\"", strconv.Quote(dir)))
}

// CodexHookEvents are the hook events of Codex 0.171, each with the label
// its trust keys and hashes spell it with.
var CodexHookEvents = map[string]string{
	"PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request",
	"PostToolUse": "post_tool_use", "PreCompact": "pre_compact", "PostCompact": "post_compact",
	"SessionStart": "session_start", "SessionEnd": "session_end",
	"UserPromptSubmit": "user_prompt_submit", "SubagentStart": "subagent_start",
	"SubagentStop": "subagent_stop", "Stop": "stop", "Interrupt": "interrupt",
}

// CodexHookHash is the hash Codex 0.171 trusts a command hook by (the
// trusted_hash of its hooks.state entry): "sha256:" and the hex SHA-256 of
// the canonical JSON (keys sorted, compact, no HTML escaping) of
// {"event_name": LABEL, "matcher": MATCHER, "hooks": [{"type": "command",
// "command": COMMAND, "timeout": TIMEOUT, "async": false}]}, where LABEL
// is the event's snake_case label, the matcher is left out when empty or
// when the event ignores matchers (UserPromptSubmit, Stop, Interrupt), and
// TIMEOUT is the hook's timeout in seconds (0: the default, 600; SessionEnd
// and Interrupt clamp it to 1..3, default 1). Only hooks without async nor
// statusMessage are covered.
func CodexHookHash(event, matcher, command string, timeoutSec int) string {
	label := CodexHookEvents[event]
	switch label {
	case "session_end", "interrupt":
		if timeoutSec == 0 {
			timeoutSec = 1
		}
		timeoutSec = min(max(timeoutSec, 1), 3)
	default:
		if timeoutSec == 0 {
			timeoutSec = 600
		}
		timeoutSec = max(timeoutSec, 1)
	}
	switch label {
	case "user_prompt_submit", "stop", "interrupt":
		matcher = ""
	}
	identity := map[string]any{
		"event_name": label,
		"hooks":      []any{map[string]any{"type": "command", "command": command, "timeout": timeoutSec, "async": false}},
	}
	if matcher != "" {
		identity["matcher"] = matcher
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(identity) // maps of plain values: cannot fail; map keys come sorted
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// codexHookGroups are the hooks of a hooks.json, or of a config.toml's
// [hooks] table, by event.
type codexHookGroups map[string][]struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	} `json:"hooks"`
}

// TrustCodexHooks trusts every command hook of path, a hooks.json (a
// user's CODEX_HOME/hooks.json, a project's .codex/hooks.json) or a
// config.toml with [hooks] tables, as a person does with /hooks in the
// TUI: for each it appends to CODEX_HOME/config.toml
//
//	[hooks.state."PATH:LABEL:GROUP:HANDLER"]
//	trusted_hash = "sha256:..."
//
// with the event's label (CodexHookEvents), the indexes of the matcher
// group and of the handler in it, and CodexHookHash. Codex 0.171 runs a
// hook that is not managed (by an administrator) only when so trusted, or
// under --dangerously-bypass-hook-trust; a hook changed since it was
// trusted is "modified", and not run.
func TrustCodexHooks(codexHome, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var hooks json.RawMessage
	if strings.HasSuffix(path, ".toml") {
		var f map[string]any
		if _, err := toml.Decode(string(data), &f); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		table, _ := f["hooks"].(map[string]any)
		delete(table, "state")         // the trust entries, not hooks
		hooks, _ = json.Marshal(table) // decoded TOML: cannot fail
	} else {
		var f struct {
			Hooks json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		hooks = f.Hooks
	}
	var groups codexHookGroups
	if err := json.Unmarshal(hooks, &groups); err != nil {
		return fmt.Errorf("%s: hooks: %w", path, err)
	}
	var sb strings.Builder
	for event, gs := range groups {
		label, ok := CodexHookEvents[event]
		if !ok {
			return fmt.Errorf("%s: unknown hook event %q", path, event)
		}
		for gi, g := range gs {
			for hi, h := range g.Hooks {
				if h.Type != "command" {
					continue
				}
				key := fmt.Sprintf("%s:%s:%d:%d", path, label, gi, hi)
				fmt.Fprintf(&sb, "[hooks.state.%s]\ntrusted_hash = %q\n", strconv.Quote(key), CodexHookHash(event, g.Matcher, h.Command, h.Timeout))
			}
		}
	}
	return AppendCodexConfig(codexHome, sb.String())
}

// CodexRunTimeout bounds RunCodex.
const CodexRunTimeout = 60 * time.Second

// RunCodex runs the real codex (Binary) with args in dir with exactly env,
// stdin as its input (none: /dev/null), in a process group of its own
// that is killed when codex ends or CodexRunTimeout passes (so no MCP
// server it started outlives it). It returns codex's stdout and stderr,
// and the error of its run.
func RunCodex(t testing.TB, dir string, env []string, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	bin := Binary(t, "codex")
	ctx, cancel := context.WithTimeout(context.Background(), CodexRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what is left of the group
	}
	if ctx.Err() != nil {
		err = errors.Join(err, fmt.Errorf("codex %s: killed after %v", strings.Join(args, " "), CodexRunTimeout))
	}
	return out.String(), errb.String(), err
}

// CodexThreadID is the session (thread) id of a codex exec --json run:
// the thread_id of its first thread.started event; "" if none.
func CodexThreadID(jsonl string) string {
	sc := bufio.NewScanner(strings.NewReader(jsonl))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var ev struct {
			Type     string `json:"type"`
			ThreadID string `json:"thread_id"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "thread.started" {
			return ev.ThreadID
		}
	}
	return ""
}
