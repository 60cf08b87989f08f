package realclient

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestCodexExplore(t *testing.T) {
	bin := Binary(t, "codex")
	o := NewOpenAI(t, func(r *ResponsesRequest) CodexReply {
		return CodexReply{CodexSay("ANSWER-" + strings.TrimSpace(r.LastUserText()))}
	})
	_, env := CodexEnv(t, o.URL)
	dir := t.TempDir()
	run := func(stdin string, args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = env
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		out, err := cmd.CombinedOutput()
		t.Logf("%v err=%v\n%s", args, err, out)
		return string(out)
	}
	out := run("", "exec", "--skip-git-repo-check", "--json", "FIRST")
	i := strings.Index(out, `"thread_id":"`)
	id := out[i+13 : i+13+36]
	run("", "queue", "--thread", id, "--message", "QUEUED-1")
	time.Sleep(2 * time.Second)
	t.Logf("after queue: %d requests", len(o.Requests()))
	run("", "queue", "--thread", id, "--message", "QUEUED-2", "--resume")
	time.Sleep(3 * time.Second)
	t.Logf("after queue --resume: %d requests", len(o.Requests()))
	run("", "exec", "resume", "--skip-git-repo-check", "--json", id, "SECOND")
	for _, r := range o.Requests() {
		t.Logf("req %d session=%s user=%q orig=%s", r.Seq, r.SessionID(), r.UserTexts()[1:], r.Header.Get("Originator"))
	}
	out2, _ := exec.Command("sh", "-c", "ls -la "+env2(env, "CODEX_HOME")+"; ps -ef | grep -i codex | grep -v grep").CombinedOutput()
	t.Logf("%s", out2)
}

func env2(env []string, k string) string {
	for _, kv := range env {
		if strings.HasPrefix(kv, k+"=") {
			return kv[len(k)+1:]
		}
	}
	return ""
}
