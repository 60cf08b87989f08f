//go:build linux

package realclient

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/internal/testenv"
)

// codexTestTimeout bounds each Codex test.
const codexTestTimeout = 60 * time.Second

// codexAnswer answers each main request with ANSWER- and the text of its
// last user message, so a test can tell which prompt a reply is for.
func codexAnswer(r *ResponsesRequest) CodexReply {
	return CodexReply{CodexSay("ANSWER-" + strings.TrimSpace(r.LastUserText()))}
}

// codexSetup starts an OpenAI with script and makes a CODEX_HOME for it, and
// a project directory.
func codexSetup(t *testing.T, script func(*ResponsesRequest) CodexReply) (o *OpenAI, codexHome, dir string, env []string) {
	t.Helper()
	Binary(t, "codex") // skips when codex is not installed
	o = NewOpenAI(t, script)
	codexHome, env = CodexEnv(t, o.URL)
	dir = t.TempDir()
	t.Cleanup(func() {
		if others := o.Others(); len(others) > 0 {
			t.Logf("other requests: %v", others)
		}
	})
	return o, codexHome, dir, env
}

// codexMustRun runs codex and fails t if it fails.
func codexMustRun(t *testing.T, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	stdout, stderr, err := RunCodex(t, dir, env, stdin, args...)
	if err != nil {
		t.Fatalf("codex %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout
}

// TestCodexExec: codex exec sends the prompt to the provider of
// CODEX_HOME/config.toml and prints the model's answer. Outside a git
// repository it needs --skip-git-repo-check, trusted directory or not.
func TestCodexExec(t *testing.T) {
	o, home, dir, env := codexSetup(t, func(*ResponsesRequest) CodexReply {
		return CodexReply{CodexSay("SCRIPTED-HELLO-1")}
	})
	stdout := codexMustRun(t, dir, env, "", "exec", "--skip-git-repo-check", "hello")
	if !strings.Contains(stdout, "SCRIPTED-HELLO-1") {
		t.Errorf("codex exec printed %q, want the scripted text", stdout)
	}
	reqs := o.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if got := strings.TrimSpace(r.LastUserText()); got != "hello" {
		t.Errorf("the request's last user message is %q, want hello", got)
	}
	if r.Model != CodexModel || !r.Stream || !r.IsMain() {
		t.Errorf("request: model %q stream %v main %v", r.Model, r.Stream, r.IsMain())
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-agentx-fake" {
		t.Errorf("Authorization %q", got)
	}
	if r.SessionID() == "" || r.SessionID() != r.CacheKey {
		t.Errorf("session id %q, prompt_cache_key %q", r.SessionID(), r.CacheKey)
	}
	t.Logf("tools offered: %v", r.ToolNames())

	// Outside a git repository: refused, trusted or not (the message
	// speaks of a trusted directory, but a git repository is what counts).
	if err := TrustCodexProject(home, dir); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := RunCodex(t, dir, env, "", "exec", "hello")
	if err == nil || !strings.Contains(stderr, "Not inside a trusted directory and --skip-git-repo-check was not specified") {
		t.Errorf("codex exec outside a git repository: err %v, stderr:\n%s", err, stderr)
	}
	// In a git repository (untrusted): runs.
	repo := t.TempDir()
	if out, err := codexRunIn(repo, "git", "init", "-q"); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if stdout := codexMustRun(t, repo, env, "", "exec", "hello"); !strings.Contains(stdout, "SCRIPTED-HELLO-1") {
		t.Errorf("codex exec in a git repository printed %q", stdout)
	}
}

// codexAgentxMCP is the [mcp_servers.agentx] table running bin mcp as the
// engineer.
func codexAgentxMCP(bin string) string {
	return fmt.Sprintf("[mcp_servers.agentx]\ncommand = %q\nargs = [\"mcp\"]\nenv = { AGENTX_AGENT = \"engineer\" }\n", bin)
}

// TestCodexMCPTool: Codex offers an MCP server's tools as the namespace
// tool mcp__SERVER, runs the model's call of one (no approval asked under
// approval_policy = "never") and sends its output back. The server may be
// configured in CODEX_HOME/config.toml, or in the project's
// .codex/config.toml, which Codex reads only when the project is trusted.
func TestCodexMCPTool(t *testing.T) {
	agentx := testenv.AgentxBinary(t)
	for _, where := range []string{"user", "project-trusted", "project-untrusted"} {
		t.Run(where, func(t *testing.T) {
			o, home, dir, env := codexSetup(t, func(r *ResponsesRequest) CodexReply {
				if r.HasTool("mcp__agentx/clarify_list") && len(r.CallOutputs()) == 0 {
					return CodexReply{CodexSay("Listing."), CodexMCPCall("agentx", "clarify_list", map[string]any{"all": true})}
				}
				return CodexReply{CodexSay("DONE")}
			})
			if out, err := codexRunIn(dir, agentx, "init"); err != nil {
				t.Fatalf("agentx init: %v\n%s", err, out)
			}
			switch where {
			case "user":
				if err := AppendCodexConfig(home, codexAgentxMCP(agentx)); err != nil {
					t.Fatal(err)
				}
			default:
				codexWriteFile(t, filepath.Join(dir, ".codex", "config.toml"), codexAgentxMCP(agentx))
				if where == "project-trusted" {
					if err := TrustCodexProject(home, dir); err != nil {
						t.Fatal(err)
					}
				}
			}
			stdout, stderr, err := RunCodex(t, dir, env, "", "exec", "--skip-git-repo-check", "--json", "list the clarifications")
			if err != nil {
				t.Fatalf("codex exec: %v\n%s\n%s", err, stdout, stderr)
			}
			reqs := o.Requests()
			if where == "project-untrusted" {
				if reqs[0].HasTool("mcp__agentx/clarify_list") {
					t.Errorf("an untrusted project's MCP server is offered: %v", reqs[0].ToolNames())
				}
				if !strings.Contains(stderr, "Untrusted project-local configuration is disabled") {
					t.Errorf("no warning about the untrusted project; stderr:\n%s", stderr)
				}
				return
			}
			var names []string
			for _, n := range reqs[0].ToolNames() {
				if strings.HasPrefix(n, "mcp__agentx/") {
					names = append(names, n)
				}
			}
			t.Logf("agentx tools offered: %v", names)
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2 (the call, then its output)", len(reqs))
			}
			call := reqs[0].Reply()[1]
			out, ok := reqs[1].CallOutput(call.CallID)
			if !ok {
				t.Fatalf("the second request has no output for %s: %s", call.CallID, reqs[1].Raw)
			}
			t.Logf("clarify_list output as the model gets it: %q", out)
			if !strings.Contains(out, `"clarifications":[]`) {
				t.Errorf("clarify_list output %q, want the structured empty list", out)
			}
			if !strings.Contains(stdout, `"type":"mcp_tool_call","server":"agentx","tool":"clarify_list"`) {
				t.Errorf("codex exec --json shows no mcp_tool_call:\n%s", stdout)
			}
		})
	}
}

// codexHookScript records each hook's payload in the directory %[1]s as
// EVENT.N.json (N from 0; whole once there) and answers as agentx would: the first Stop
// blocks with a reason, SessionStart and UserPromptSubmit add context.
const codexHookScript = `#!/bin/sh
ev=$1
n=$(ls %[1]s | grep -c "^$ev\..*\.json$")
cat > %[1]s/.$ev.$n.tmp && mv %[1]s/.$ev.$n.tmp %[1]s/$ev.$n.json
case $ev in
Stop) [ "$n" = 0 ] && echo '{"decision":"block","reason":"CONTINUE-WITH-42"}' ;;
SessionStart) echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"CTX-555"}}' ;;
UserPromptSubmit) echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"CTX-777"}}' ;;
esac
exit 0
`

// codexHookEvents are the events TestCodexHooks hooks.
var codexHookEvents = []string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}

// codexWriteHooks writes the hook script and returns a hooks.json and the
// same hooks as config.toml [hooks] tables running it, and the directory
// the payloads go to.
func codexWriteHooks(t *testing.T) (hooksJSON, hooksTOML, payloads string) {
	t.Helper()
	payloads = t.TempDir()
	script := filepath.Join(t.TempDir(), "hook.sh")
	codexWriteFile(t, script, fmt.Sprintf(codexHookScript, payloads))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	events := map[string]any{}
	var tomlb strings.Builder
	for _, ev := range codexHookEvents {
		cmd := script + " " + ev
		handler := map[string]any{"type": "command", "command": cmd}
		group := map[string]any{"hooks": []any{handler}}
		fmt.Fprintf(&tomlb, "[[hooks.%s]]\n", ev)
		switch ev { // a matcher and a timeout, which the trust hash covers
		case "SessionStart":
			group["matcher"] = "startup|resume"
			tomlb.WriteString("matcher = \"startup|resume\"\n")
		case "Stop":
			handler["timeout"] = 30
		}
		fmt.Fprintf(&tomlb, "[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = %q\n", ev, cmd)
		if ev == "Stop" {
			tomlb.WriteString("timeout = 30\n")
		}
		tomlb.WriteString("\n")
		events[ev] = []any{group}
	}
	js, err := json.MarshalIndent(map[string]any{"hooks": events}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(js), tomlb.String(), payloads
}

// codexReadPayloads reads the payloads the hook script recorded, by file name.
func codexReadPayloads(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue // being written
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("hook payload %s: %s", e.Name(), data)
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("payload %s: %v", e.Name(), err)
		}
		out[strings.TrimSuffix(e.Name(), ".json")] = m
	}
	return out
}

// TestCodexHooks: Codex 0.171 runs the hooks of CODEX_HOME/hooks.json,
// of [hooks] tables in CODEX_HOME/config.toml, and of a trusted project's
// .codex/hooks.json, once each hook is trusted (TrustCodexHooks) or under
// --dangerously-bypass-hook-trust; no feature flag is needed (hooks is
// stable and on). A Stop hook's {"decision":"block","reason":R} makes Codex
// send another request whose last user message carries R (in a
// <hook_prompt> element); SessionStart and UserPromptSubmit hooks'
// hookSpecificOutput.additionalContext comes as a developer message.
func TestCodexHooks(t *testing.T) {
	for _, mode := range []string{"user-hooks.json", "user-config.toml", "project-hooks.json", "bypass-untrusted", "untrusted", "modified"} {
		t.Run(mode, func(t *testing.T) {
			o, home, dir, env := codexSetup(t, codexAnswer)
			hooksJSON, hooksTOML, payloads := codexWriteHooks(t)
			path := filepath.Join(home, "hooks.json")
			switch mode {
			case "user-config.toml":
				path = filepath.Join(home, "config.toml")
				if err := AppendCodexConfig(home, hooksTOML); err != nil {
					t.Fatal(err)
				}
			case "project-hooks.json":
				path = filepath.Join(dir, ".codex", "hooks.json")
				if err := TrustCodexProject(home, dir); err != nil {
					t.Fatal(err)
				}
				codexWriteFile(t, path, hooksJSON)
			default:
				codexWriteFile(t, path, hooksJSON)
			}
			switch mode {
			case "bypass-untrusted", "untrusted":
			default:
				if err := TrustCodexHooks(home, path); err != nil {
					t.Fatal(err)
				}
			}
			if mode == "modified" { // changed since trusted: a space more
				codexWriteFile(t, path, strings.ReplaceAll(hooksJSON, "hook.sh ", "hook.sh  "))
			}
			args := []string{"exec", "--skip-git-repo-check", "--json"}
			if mode == "bypass-untrusted" {
				args = append(args, "--dangerously-bypass-hook-trust")
			}
			stdout := codexMustRun(t, dir, env, "", append(args, "hello")...)
			reqs := o.Requests()
			got := codexReadPayloads(t, payloads)

			if mode == "untrusted" || mode == "modified" {
				if len(got) != 0 || len(reqs) != 1 || strings.Contains(reqs[0].Text(), "CTX-777") {
					t.Errorf("%s hooks ran: %d payloads, %d requests", mode, len(got), len(reqs))
				}
				return
			}
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2 (the prompt, then the Stop hook's reason)", len(reqs))
			}
			first, second := reqs[0], reqs[1]
			for _, ctx := range []string{"CTX-555", "CTX-777"} {
				if !slices.Contains(first.DeveloperTexts(), ctx) {
					t.Errorf("the first request has no developer message %q", ctx)
				}
			}
			last := second.LastUserText()
			t.Logf("the Stop hook's reason as the model gets it: %q", last)
			if !strings.Contains(last, "CONTINUE-WITH-42") || !strings.HasPrefix(last, "<hook_prompt hook_run_id=\"stop:") {
				t.Errorf("the second request's last user message is %q, want the Stop hook's reason", last)
			}
			if !strings.Contains(second.Text(), "ANSWER-hello") {
				t.Errorf("the second request lacks the first answer")
			}

			id := CodexThreadID(stdout)
			if id == "" || first.SessionID() != id {
				t.Errorf("thread id %q, the request's session %q", id, first.SessionID())
			}
			for _, name := range []string{"SessionStart.0", "UserPromptSubmit.0", "Stop.0", "Stop.1", "SessionEnd.0"} {
				p := got[name]
				if p == nil {
					t.Errorf("no payload %s", name)
					continue
				}
				if p["session_id"] != id || p["cwd"] != dir {
					t.Errorf("%s: session_id %v cwd %v, want %s %s", name, p["session_id"], p["cwd"], id, dir)
				}
				if tp, _ := p["transcript_path"].(string); !strings.HasPrefix(tp, filepath.Join(home, "sessions")+"/") || !strings.HasSuffix(tp, id+".jsonl") {
					t.Errorf("%s: transcript_path %v", name, p["transcript_path"])
				}
			}
			if p := got["SessionStart.0"]; p != nil && p["source"] != "startup" {
				t.Errorf("SessionStart source %v", p["source"])
			}
			if p := got["UserPromptSubmit.0"]; p != nil && p["prompt"] != "hello" {
				t.Errorf("UserPromptSubmit prompt %v", p["prompt"])
			}
			if p := got["Stop.0"]; p != nil && (p["stop_hook_active"] != false || p["last_assistant_message"] != "ANSWER-hello" || p["turn_id"] == "") {
				t.Errorf("Stop.0: %v", p)
			}
			if p := got["Stop.1"]; p != nil && (p["stop_hook_active"] != true || p["turn_id"] != got["Stop.0"]["turn_id"]) {
				t.Errorf("Stop.1 (after the block, same turn): %v", p)
			}
			if _, ok := got["Stop.2"]; ok {
				t.Errorf("a third Stop")
			}
		})
	}
}

// TestCodexExecResume: codex exec resume ID continues the session ID (the
// thread_id of codex exec --json's thread.started event, the hooks'
// session_id, the end of the rollout file's name in
// CODEX_HOME/sessions/YYYY/MM/DD/): its request carries the conversation
// so far and the new prompt, given as an argument, as "-" with the prompt
// on stdin, or with no prompt argument and stdin piped.
func TestCodexExecResume(t *testing.T) {
	o, home, dir, env := codexSetup(t, codexAnswer)
	id := CodexThreadID(codexMustRun(t, dir, env, "", "exec", "--skip-git-repo-check", "--json", "FIRST"))
	if id == "" {
		t.Fatal("no thread.started event")
	}
	rollouts, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"))
	if len(rollouts) != 1 {
		t.Errorf("rollout files for %s: %v", id, rollouts)
	}
	steps := []struct {
		prompt, stdin string
		args          []string
	}{
		{"SECOND", "", []string{id, "SECOND"}},
		{"THIRD", "THIRD\n", []string{id, "-"}},
		{"FOURTH", "FOURTH\n", []string{id}},
		{"FIFTH", "", []string{"--last", "FIFTH"}},
	}
	want := []string{"FIRST", "ANSWER-FIRST"}
	for _, s := range steps {
		out := codexMustRun(t, dir, env, s.stdin, append([]string{"exec", "resume", "--skip-git-repo-check", "--json"}, s.args...)...)
		if got := CodexThreadID(out); got != id {
			t.Errorf("resume %v: thread %q, want %s", s.args, got, id)
		}
		reqs := o.Requests()
		r := reqs[len(reqs)-1]
		if r.SessionID() != id || strings.TrimSpace(r.LastUserText()) != s.prompt {
			t.Errorf("resume %v: session %s, last user message %q", s.args, r.SessionID(), r.LastUserText())
		}
		text := r.Text()
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("resume %v: the request lacks %q of the earlier conversation", s.args, w)
			}
		}
		want = append(want, s.prompt, "ANSWER-"+s.prompt)
	}
}

// TestCodexQueueInteractive: codex queue --thread ID --message TEXT
// stores TEXT in CODEX_HOME/queue_1.sqlite, and an idle interactive codex
// that has the thread open (in tmux here) takes it as a new turn: its next
// request carries TEXT after the conversation so far. With the shared
// background server (the daemon, which codex starts by default) it comes
// at once; with --no-daemon the TUI finds it within about 10 s. The
// thread's id is the hooks' session_id. With the daemon, queue --resume
// also runs a thread open nowhere (one of codex exec's), headless.
func TestCodexQueueInteractive(t *testing.T) {
	for _, daemon := range []bool{false, true} {
		t.Run(map[bool]string{false: "no-daemon", true: "daemon"}[daemon], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), codexTestTimeout)
			defer cancel()
			o, home, dir, env := codexSetup(t, codexAnswer)
			if err := TrustCodexProject(home, dir); err != nil {
				t.Fatal(err)
			}
			hooksJSON, _, payloads := codexWriteHooks(t)
			codexWriteFile(t, filepath.Join(home, "hooks.json"), hooksJSON)
			if err := TrustCodexHooks(home, filepath.Join(home, "hooks.json")); err != nil {
				t.Fatal(err)
			}
			argv := []string{Binary(t, "codex")}
			if daemon {
				t.Cleanup(func() { codexStopDaemon(t, dir, env, home) })
			} else {
				argv = append(argv, "--no-daemon")
			}
			tui := StartTmux(t, dir, env, append(argv, "INTERACTIVE-1")...)

			first, err := o.WaitFor(ctx, func(r *ResponsesRequest) bool {
				return strings.TrimSpace(r.LastUserText()) == "INTERACTIVE-1"
			})
			if err != nil {
				t.Fatalf("%v; screen:\n%s", err, tui.Capture())
			}
			if got := first.Header.Get("Originator"); got != "codex-tui" {
				t.Errorf("originator %q", got)
			}
			// The first Stop (it blocks) and the turn it makes, then idle.
			if _, err := tui.WaitScreen(ctx, "ANSWER-<hook_prompt"); err != nil {
				t.Fatal(err)
			}
			id := first.SessionID()
			start := codexReadPayloads(t, payloads)["SessionStart.0"]
			if start == nil || start["session_id"] != id {
				t.Errorf("SessionStart payload %v, the request's session %s", start, id)
			}

			out := codexMustRun(t, dir, env, "", "queue", "--thread", id, "--message", "QUEUED-777")
			t.Logf("codex queue: %s", out)
			r, err := o.WaitFor(ctx, func(r *ResponsesRequest) bool {
				return strings.Contains(r.LastUserText(), "QUEUED-777")
			})
			if err != nil {
				t.Fatalf("the queued message did not come: %v; screen:\n%s", err, tui.Capture())
			}
			if r.SessionID() != id || !strings.Contains(r.Text(), "INTERACTIVE-1") || !strings.Contains(r.Text(), "CONTINUE-WITH-42") {
				t.Errorf("the queued turn: session %s (want %s), text:\n%s", r.SessionID(), id, r.Text())
			}
			// A queued message is a turn as a typed one: the hooks run.
			if p := codexReadPayloads(t, payloads)["UserPromptSubmit.1"]; p == nil || p["prompt"] != "QUEUED-777" || p["session_id"] != id {
				t.Errorf("UserPromptSubmit for the queued message: %v", p)
			}
			if _, err := tui.WaitScreen(ctx, "ANSWER-QUEUED-777"); err != nil {
				t.Error(err)
			}
			if !tui.Alive() {
				t.Error("codex ended")
			}

			// A thread open nowhere, from codex exec: queue --resume has the
			// daemon resume it and run the queued message, headless; with no
			// daemon the message stays queued, with a warning.
			execID := CodexThreadID(codexMustRun(t, dir, env, "", "exec", "--skip-git-repo-check", "--json", "EXEC-1"))
			stdout, stderr, err := RunCodex(t, dir, env, "", "queue", "--thread", execID, "--message", "QUEUED-888", "--resume")
			if err != nil {
				t.Fatalf("codex queue --resume: %v\n%s\n%s", err, stdout, stderr)
			}
			if !daemon {
				if !strings.Contains(stderr, "could not resume thread") {
					t.Errorf("codex queue --resume without a daemon: no warning:\n%s", stderr)
				}
				return
			}
			r, err = o.WaitFor(ctx, func(r *ResponsesRequest) bool {
				return strings.Contains(r.LastUserText(), "QUEUED-888")
			})
			if err != nil {
				t.Fatalf("the daemon did not run the queued message: %v", err)
			}
			if r.SessionID() != execID || !strings.Contains(r.Text(), "EXEC-1") {
				t.Errorf("the queued turn: session %s (want %s), text:\n%s", r.SessionID(), execID, r.Text())
			}
		})
	}
}

// codexStopDaemon stops the app-server daemon the interactive codex
// started for codexHome (codex app-server daemon stop), and its updater,
// which the stop leaves running, by the pid in its pid file.
func codexStopDaemon(t *testing.T, dir string, env []string, codexHome string) {
	stdout, stderr, err := RunCodex(t, dir, env, "", "app-server", "daemon", "stop")
	if err != nil {
		t.Errorf("codex app-server daemon stop: %v\n%s\n%s", err, stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(codexHome, "app-server-daemon", "daemon-updater.pid"))
	if err != nil {
		return // no updater
	}
	var pid struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(data, &pid) == nil && pid.PID > 0 && processAlive(pid.PID) {
		_ = syscall.Kill(pid.PID, syscall.SIGTERM)
	}
	if sock, err := os.Readlink(filepath.Join(codexHome, "app-server-daemon", "daemon-updater.sock")); err == nil {
		_ = os.Remove(sock) // outside codexHome: /tmp/codex-daemon-UID/HASH
	}
}

// codexRunIn runs bin with args in dir.
func codexRunIn(dir, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// codexWriteFile writes data to path, making its directory.
func codexWriteFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
