package realclient

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// CodexModel is the model CodexEnv configures; OpenAI lists it on
// GET /v1/models.
const CodexModel = "gpt-agentx-fake"

// CodexKeyEnv is the environment variable the fake provider's API key is
// read from (the provider's env_key); CodexEnv sets it.
const CodexKeyEnv = "AGENTX_FAKE_OPENAI_KEY"

// CodexEnv makes a CODEX_HOME for the real Codex in a temporary
// directory: a config.toml whose model provider "agentxfake" is the
// Responses API at apiURL+"/v1" (an OpenAI's URL), with approvals off
// (approval_policy = "never"), no sandbox (sandbox_mode =
// "danger-full-access": Codex runs the model's commands as is), no update
// check, no analytics nor feedback, and no retries. It returns the
// directory and the environment to run codex with: this process's, less
// every CODEX_* and OPENAI_* variable, plus CODEX_HOME, a temporary HOME
// and the provider's key (CodexKeyEnv).
//
// Tests append to CODEX_HOME/config.toml what they need (MCP servers,
// hooks, TrustCodexProject).
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
			name == "HOME", name == "XDG_CONFIG_HOME", name == "XDG_DATA_HOME", name == "XDG_STATE_HOME", name == "XDG_CACHE_HOME":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "CODEX_HOME="+codexHome, "HOME="+home, CodexKeyEnv+"=sk-agentx-fake")
	return codexHome, env
}

// AppendCodexConfig appends text to CODEX_HOME/config.toml.
func AppendCodexConfig(t testing.TB, codexHome, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(codexHome, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n" + text + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TrustCodexProject marks dir a trusted project in CODEX_HOME/config.toml
// (projects."DIR".trust_level = "trusted"), so Codex loads dir's
// .codex/config.toml and runs without asking.
func TrustCodexProject(t testing.TB, codexHome, dir string) {
	t.Helper()
	AppendCodexConfig(t, codexHome, fmt.Sprintf("[projects.%s]\ntrust_level = \"trusted\"", strconv.Quote(dir)))
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

// codexHooksFile is a hooks.json.
type codexHooksFile struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int    `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// TrustCodexHooks trusts every command hook of the hooks.json at path (a
// user's CODEX_HOME/hooks.json or a project's .codex/hooks.json) as a
// person would with /hooks in the TUI: it appends to
// CODEX_HOME/config.toml, for each, a [hooks.state."PATH:LABEL:GROUP:HANDLER"]
// table with trusted_hash = CodexHookHash(...). Codex 0.171 runs a
// non-managed hook only when so trusted (or with
// --dangerously-bypass-hook-trust); a hook changed since is "modified",
// and not run.
func TrustCodexHooks(t testing.TB, codexHome, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f codexHooksFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var sb strings.Builder
	for event, groups := range f.Hooks {
		label, ok := CodexHookEvents[event]
		if !ok {
			t.Fatalf("%s: unknown hook event %q", path, event)
		}
		for gi, g := range groups {
			for hi, h := range g.Hooks {
				if h.Type != "command" {
					continue
				}
				key := fmt.Sprintf("%s:%s:%d:%d", path, label, gi, hi)
				fmt.Fprintf(&sb, "[hooks.state.%s]\ntrusted_hash = %q\n", strconv.Quote(key), CodexHookHash(event, g.Matcher, h.Command, h.Timeout))
			}
		}
	}
	AppendCodexConfig(t, codexHome, sb.String())
}
