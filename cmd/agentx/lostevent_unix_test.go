//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestKilledBeforeEventFoundByDoctor: an answer whose writer was killed
// (SIGKILL) after the ledger's rename and before the event's append is in
// the ledger and not in the event log. doctor reports it (exit 7), and four
// doctor --fix run at once append its event exactly once; then doctor finds
// the workspace healthy. The binary is built with the agentx_crashpoints
// tag, which kills the process at that point (AGENTX_CRASH_BEFORE_EVENT).
func TestKilledBeforeEventFoundByDoctor(t *testing.T) {
	bin := buildAgentx(t, "-tags=agentx_crashpoints")
	root := t.TempDir()
	run := func(env []string, args ...string) (string, int) {
		c := exec.Command(bin, args...)
		c.Dir = root
		c.Env = processEnv(root, append([]string{"AGENTX_AGENT="}, env...)...)
		out, err := c.CombinedOutput()
		if c.ProcessState == nil {
			t.Fatalf("%v: %v", args, err)
		}
		return string(out), c.ProcessState.ExitCode()
	}
	if out, code := run(nil, "init"); code != 0 {
		t.Fatalf("init: %d: %s", code, out)
	}
	if out, code := run([]string{"AGENTX_AGENT=engineer"}, "clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect",
		"--topic", "retries", "--question", "Which retry budget?", "--non-blocking"); code != 0 {
		t.Fatalf("ask: %d: %s", code, out)
	}
	out, code := run([]string{"AGENTX_AGENT=architect", "AGENTX_CRASH_BEFORE_EVENT=clarification-answered"},
		"clarify", "answer", "CLR-1-001", "--from", "architect", "--body", "Three tries.")
	if code != -1 {
		t.Fatalf("answer was to be killed before its event; exit %d: %s", code, out)
	}
	ledgerText, err := os.ReadFile(filepath.Join(root, ".agentx", "state", "clarifications", "issue-1.json"))
	if err != nil || !bytes.Contains(ledgerText, []byte("Three tries.")) {
		t.Fatalf("the answer is not in the ledger (%v)", err)
	}
	answered := func() int {
		b, err := os.ReadFile(filepath.Join(root, ".agentx", "state", "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), `"type":"clarification-answered"`)
	}
	if n := answered(); n != 0 {
		t.Fatalf("%d answered events before doctor", n)
	}
	later := []string{"AGENTX_NOW=" + time.Now().Add(2*time.Minute).UTC().Format(time.RFC3339)}
	out, code = run(later, "doctor", "--json")
	if code != 7 || !strings.Contains(out, "clarification-answered of CLR-1-001") {
		t.Fatalf("doctor: exit %d, want 7 naming the missing event: %s", code, out)
	}

	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Go(func() { _, codes[i] = run(later, "doctor", "--fix", "--json") })
	}
	wg.Wait()
	for i, c := range codes {
		if c != 0 {
			t.Errorf("doctor --fix %d: exit %d", i, c)
		}
	}
	if n := answered(); n != 1 {
		t.Fatalf("after four concurrent doctor --fix: %d answered events, want 1", n)
	}
	out, code = run(later, "doctor", "--json")
	var rep struct {
		Findings []struct{ Check string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("doctor after the fix: exit %d (%v): %s", code, err, out)
	}
	// the answer reaches the asker's inbox through the event put back
	if out, code := run([]string{"AGENTX_AGENT=engineer"}, "inbox", "--agent", "engineer", "--peek"); code != 0 || !strings.Contains(out, "Three tries.") {
		t.Errorf("inbox: exit %d, want the answer: %s", code, out)
	}
}

// TestHeldTurnWaitsForTheAnswersEvent: a Stop hook holding the asker's
// turn sees the answer in the ledger before its writer has logged its event
// (a writer the machine is slow to schedule: the binary is built with the
// agentx_crashpoints tag, and AGENTX_PAUSE_BEFORE_EVENT holds it there a
// second and a half). The hook waits for the event and blocks the stop
// with the answer: the agent carries on in the same run, rather than
// stopping and the answer going to a waker that resumes it in a new one.
func TestHeldTurnWaitsForTheAnswersEvent(t *testing.T) {
	h := holdTurn(t)
	if b, err := h.command([]string{"AGENTX_AGENT=architect", "AGENTX_PAUSE_BEFORE_EVENT=clarification-answered"},
		"clarify", "answer", "CLR-1-001", "--body", "Three tries.").CombinedOutput(); err != nil {
		t.Fatalf("answer: %v: %s", err, b)
	}
	if err := h.hook.Wait(); err != nil {
		t.Fatalf("hook stop: %v: %s", err, h.out.String())
	}
	if !strings.Contains(h.out.String(), `"decision":"block"`) || !strings.Contains(h.out.String(), "Three tries.") {
		t.Errorf("the held turn did not carry the answer on: %s", h.out.String())
	}
}

// TestHeldTurnLetsGoWhenNothingIsToBeTold: while a Stop hook holds the
// asker's turn, the asker withdraws its question elsewhere (clarify
// cancel), whose writer is held a second and a half before its event, as
// in the test above. Nothing of a withdrawal is for the asker to be told:
// the hook lets the agent stop at once, before that writer has even
// ended, with no word of a question it no longer waits on. Before, it
// waited up to 3 s for an event that delivers nothing, then said the
// agent "waits on CLR-1-001".
func TestHeldTurnLetsGoWhenNothingIsToBeTold(t *testing.T) {
	h := holdTurn(t)
	cancel := h.command([]string{"AGENTX_AGENT=engineer", "AGENTX_PAUSE_BEFORE_EVENT=clarification-abandoned"},
		"clarify", "cancel", "CLR-1-001")
	var cancelOut bytes.Buffer
	cancel.Stdout, cancel.Stderr = &cancelOut, &cancelOut
	if err := cancel.Start(); err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan error, 1)
	go func() { cancelled <- cancel.Wait() }()
	if err := h.hook.Wait(); err != nil {
		t.Fatalf("hook stop: %v: %s", err, h.out.String())
	}
	select {
	case <-cancelled:
		t.Errorf("the hook ended after the withdrawal's writer: it waited for its event")
		cancelled <- nil
	default:
	}
	if err := <-cancelled; err != nil {
		t.Fatalf("cancel: %v: %s", err, cancelOut.String())
	}
	if s := h.out.String(); strings.Contains(s, "waits on") || strings.Contains(s, `"decision"`) {
		t.Errorf("the hook spoke of a withdrawn question: %s", s)
	}
}

// heldTurn is a Stop hook of the engineer's (started, output in out)
// holding its turn for its blocking question CLR-1-001, in a workspace of
// an agentx built with the agentx_crashpoints tag, which command runs.
type heldTurn struct {
	command func(env []string, args ...string) *exec.Cmd
	hook    *exec.Cmd
	out     *bytes.Buffer
}

// holdTurn starts a heldTurn and returns once the hook holds the turn.
func holdTurn(t *testing.T) heldTurn {
	t.Helper()
	bin := buildAgentx(t, "-tags=agentx_crashpoints")
	root := t.TempDir()
	command := func(env []string, args ...string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Dir = root
		c.Env = processEnv(root, append([]string{"AGENTX_AGENT=", "AGENTX_ISSUE=1"}, env...)...)
		return c
	}
	for _, args := range [][]string{{"init"}, {"clarify", "ask", "--from", "engineer", "--to", "architect", "--topic", "retries", "--question", "Which retry budget?"}} {
		if out, err := command(nil, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	hook := command([]string{"AGENTX_AGENT=engineer"}, "hook", "stop", "--hold", "30s")
	hook.Stdin = strings.NewReader(`{"session_id":"s-1","hook_event_name":"Stop","stop_hook_active":false}`)
	out := &bytes.Buffer{}
	hook.Stdout, hook.Stderr = out, out
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if hook.ProcessState == nil {
			_ = hook.Process.Kill()
			_ = hook.Wait()
		}
	})
	wakeFile := filepath.Join(root, ".agentx", "state", "wake", "engineer.json")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(wakeFile); bytes.Contains(b, []byte(`"holds"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hook never held the turn: %s", out.String())
		}
	}
	return heldTurn{command: command, hook: hook, out: out}
}
