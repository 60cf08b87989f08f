//go:build unix

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentx-cli/agentx/internal/workspace"
	"github.com/agentx-cli/agentx/router"
)

// TestWatchWakesBetweenTurns: the real binary, agentx watch --interval 1h
// left running. An answer recorded by a writer that wakes nobody itself
// (this test, through the hub, as agentx slack listen records a reply)
// starts the asker's resume command within a couple of
// seconds, not at the next turn an hour later; watch says so on stdout;
// Ctrl-C (SIGINT) stops it with exit 130.
func TestWatchWakesBetweenTurns(t *testing.T) {
	root, agentx := initWorkspace(t, "AGENTX_AGENT=")
	// the resume command: records its arguments and what it was given
	resume := filepath.Join(root, "resume.sh")
	got := filepath.Join(root, "resumed")
	script := "#!/bin/sh\necho \"$@\" > " + strconv.Quote(got+".argv") + "\ncat > " + strconv.Quote(got+".tmp") + "\nmv " + strconv.Quote(got+".tmp") + " " + strconv.Quote(got) + "\n"
	if err := os.WriteFile(resume, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.OpenFile(filepath.Join(root, ".agentx", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cfg.WriteString("\n[agents.engineer]\nresume = [" + strconv.Quote(resume) + ", \"{issue}\", \"{id}\"]\n")
	if cerr := cfg.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	trustWorkspace(t, agentx())
	if out, err := agentx("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "Queue", "--question", "Kafka or SQS?").CombinedOutput(); err != nil {
		t.Fatalf("ask: %v\n%s", err, out)
	}
	// the engineer's turn ends here: its hook records it (only an agent
	// whose hook ran on this machine is woken)
	stop := agentx("hook", "stop", "--agent", "engineer", "--issue", "1", "--hold", "0s")
	stop.Stdin = strings.NewReader(`{"session_id":"s-1","hook_event_name":"Stop","stop_hook_active":false}`)
	if out, err := stop.CombinedOutput(); err != nil {
		t.Fatalf("hook stop: %v\n%s", err, out)
	}

	outPath := filepath.Join(t.TempDir(), "watch.out")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var stderr strings.Builder
	w := agentx("watch", "--interval", "1h")
	w.Stdout, w.Stderr = out, &stderr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Process.Kill() }()
	stdout := func() string { b, _ := os.ReadFile(outPath); return string(b) }
	if !watchUntil(10*time.Second, func() bool { return strings.Contains(stdout(), "watching") }) {
		t.Fatalf("watch did not start: stdout %q, stderr %q", stdout(), stderr.String())
	}

	ws, err := workspace.Open(root, root, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	h := router.New(ws.Store, ws.Rules, ws.Root)
	if _, err := h.Answer(context.Background(), "CLR-1-001", "architect", "SQS, FIFO queues"); err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	if !watchUntil(5*time.Second, func() bool { _, err := os.Stat(got); return err == nil }) {
		t.Fatalf("no resume within 5s of the answer: stdout %q, stderr %q", stdout(), stderr.String())
	}
	if d := time.Since(answered); d > 3*time.Second {
		t.Errorf("the resume started %v after the answer, want within a couple of seconds", d)
	}
	if b, _ := os.ReadFile(got); !strings.Contains(string(b), "SQS, FIFO queues") {
		t.Errorf("the resume command's input does not carry the answer: %q", b)
	}
	if b, _ := os.ReadFile(got + ".argv"); strings.TrimSpace(string(b)) != "1 CLR-1-001" {
		t.Errorf("resume argv %q, want \"1 CLR-1-001\"", b)
	}
	if !watchUntil(2*time.Second, func() bool { return strings.Contains(stdout(), "woke engineer: issue #1, CLR-1-001") }) {
		t.Errorf("watch did not say it woke the engineer: %q", stdout())
	}

	if err := w.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Wait() }()
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not stop within 5s of SIGINT")
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 130 {
		t.Errorf("exit %d, want 130; stderr: %s", code, stderr.String())
	}
	if b, _ := os.ReadFile(got + ".argv"); len(b) == 0 {
		t.Error("no resume recorded")
	}
}

// watchUntil polls cond every 20 ms until it holds or d has passed.
func watchUntil(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}
