//go:build linux

package realclient

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/internal/testenv"
)

// loopAgentx runs the agentx under test in dir with env, failing t when it
// exits other than 0.
func loopAgentx(t *testing.T, bin, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentx %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// withPath is env with dirs put first on PATH.
func withPath(env []string, dirs ...string) []string {
	out := make([]string, 0, len(env)+1)
	path := strings.Join(dirs, string(os.PathListSeparator))
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path += string(os.PathListSeparator) + v
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+path)
}

// waitContains waits until the file at path contains substr.
func waitContains(ctx context.Context, path, substr string) error {
	for {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), substr) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestLoopCodexExec is the loop with the real Codex (codex exec), wired by
// agentx setup codex alone: the model asks over MCP and ends its turn;
// Codex's Stop hook (agentx hook stop) holds the turn; the architect
// answers while it holds, and the same run's next request to the model
// carries the answer. Then a question nobody answers in time: the run
// ends; the answer lands later, and [agents.engineer] resume (codex exec
// resume) runs once, on the same session, with the answer.
func TestLoopCodexExec(t *testing.T) {
	bin := testenv.AgentxBinary(t)
	codex := Binary(t, "codex")
	const (
		first  = "Which pattern for the adapter?"
		second = "Should the adapter cache?"
	)
	o, home, dir, env := codexSetup(t, func(r *ResponsesRequest) CodexReply {
		text := r.Text()
		switch {
		case strings.Contains(r.LastUserText(), "ANSWER-2"):
			return CodexReply{CodexSay("RESUMED-WITH-ANSWER")}
		case strings.Contains(text, "Repository pattern") && !strings.Contains(text, "Start on issue 8"):
			return CodexReply{CodexSay("CONTINUED-WITH-ANSWER")}
		case len(r.CallOutputs()) == 0 && strings.Contains(r.LastUserText(), "Start on issue"):
			q := first
			if strings.Contains(r.LastUserText(), "issue 8") {
				q = second
			}
			n := 7
			if q == second {
				n = 8
			}
			return CodexReply{CodexMCPCall("agentx", "clarify_ask", map[string]any{"issue": n, "to": "architect", "topic": "Design", "question": q})}
		}
		return CodexReply{CodexSay("Asked; ending my turn until the answer comes.")}
	})
	env = withPath(env, filepath.Dir(bin), filepath.Dir(codex))
	env = append(env, "AGENTX_NO_COLOR=1")
	loopAgentx(t, bin, dir, env, "init")
	if err := os.WriteFile(filepath.Join(dir, ".agentx", "config.toml"), append(mustRead(t, filepath.Join(dir, ".agentx", "config.toml")),
		[]byte("\n[agents.engineer]\nresume = [\"codex\", \"exec\", \"resume\", \"--skip-git-repo-check\", \"{session}\"]\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	loopAgentx(t, bin, dir, env, "trust", "--yes")
	out := loopAgentx(t, bin, dir, env, "setup", "codex", "--agent", "engineer", "--hold", "6s")
	if !strings.Contains(out, "Wake: ") {
		t.Errorf("setup codex says nothing of the wake:\n%s", out)
	}
	if err := TrustCodexProject(home, dir); err != nil {
		t.Fatal(err)
	}
	if err := TrustCodexHooks(home, filepath.Join(dir, ".codex", "hooks.json")); err != nil {
		t.Fatal(err)
	}
	architect := append(env[:len(env):len(env)], "AGENTX_AGENT=architect")

	// 1. the answer lands while the Stop hook holds the turn
	done := make(chan string, 1)
	var stderr1 string
	go func() {
		stdout, stderr, err := RunCodex(t, dir, env, "", "exec", "--skip-git-repo-check", "Start on issue 7.")
		if err != nil {
			t.Errorf("codex exec: %v\n%s", err, stderr)
		}
		stderr1 = stderr
		done <- stdout
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	if err := waitContains(ctx, filepath.Join(dir, ".agentx", "state", "wake", "engineer.json"), `"holds"`); err != nil {
		t.Fatalf("the Stop hook never held the turn: %v", err)
	}
	loopAgentx(t, bin, dir, architect, "clarify", "answer", "CLR-7-001", "--body", "Repository pattern")
	stdout := <-done
	if !strings.Contains(stdout, "CONTINUED-WITH-ANSWER") {
		t.Errorf("the run did not carry on with the answer; stdout:\n%s\nstderr:\n%s", stdout, stderr1)
		for _, f := range []string{"events.jsonl", "wake/engineer.json", "clarifications/issue-7.json"} {
			data, _ := os.ReadFile(filepath.Join(dir, ".agentx", "state", f))
			t.Logf("%s:\n%s", f, data)
		}
	}
	var session string
	for _, r := range o.Requests() {
		if strings.Contains(r.Text(), "Repository pattern") {
			session = r.SessionID()
		}
	}
	if session == "" {
		t.Fatal("no request carried the answer")
	}

	// 2. no answer in time: the run ends; the later answer resumes it once
	start := time.Now()
	stdout, stderr, err := RunCodex(t, dir, env, "", "exec", "--skip-git-repo-check", "Start on issue 8.")
	if err != nil {
		t.Fatalf("codex exec: %v\n%s", err, stderr)
	}
	t.Logf("second run: %v (hold 6s)", time.Since(start).Round(time.Millisecond))
	before := len(o.Requests())
	loopAgentx(t, bin, dir, architect, "clarify", "answer", "CLR-8-001", "--body", "ANSWER-2: no cache")
	r, err := o.WaitFor(ctx, func(r *ResponsesRequest) bool { return strings.Contains(r.LastUserText(), "ANSWER-2") })
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, ".agentx", "state", "wake", "engineer.log"))
		t.Fatalf("the resume never reached the model: %v\nwake log:\n%s", err, log)
	}
	var asked string
	for _, r := range o.Requests()[:before] {
		if strings.Contains(r.Text(), "Start on issue 8") {
			asked = r.SessionID()
		}
	}
	time.Sleep(2 * time.Second) // a second wake would have sent its request by now
	n := 0
	for _, r := range o.Requests() {
		if strings.Contains(r.LastUserText(), "ANSWER-2") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the answer reached the model %d times, want once", n)
	}
	if r.SessionID() == "" || r.SessionID() != asked {
		t.Errorf("resumed session %q, want %q (the run that asked)", r.SessionID(), asked)
	}
	if !strings.Contains(stdout, "waits on CLR-8-001") && !strings.Contains(stderr, "waits on CLR-8-001") {
		t.Logf("the hold's message was not shown by codex exec (stdout %q)", stdout)
	}
	t.Logf("resumed session %s; the first run's %s", r.SessionID(), session)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
