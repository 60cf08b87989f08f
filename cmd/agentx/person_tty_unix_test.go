//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestPersonConfirmsAtTerminal runs a person's action in a real
// pseudo-terminal, the process's controlling terminal as at a person's
// shell: agentx asks there (never on stdin or stdout), and what the person
// types decides. y records the answer under the person's name; n, or
// anything else, leaves the question as it was (exit 4).
func TestPersonConfirmsAtTerminal(t *testing.T) {
	_, agentx := initWorkspace(t, "AGENTX_AGENT=", "USER=pat", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	for i, q := range []string{"Launch Monday?", "Launch Tuesday?"} {
		ask := agentx("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "human", "--topic", "Launch", "--question", q)
		ask.Env = append(ask.Env, "AGENTX_AGENT=engineer")
		if out, err := ask.CombinedOutput(); err != nil {
			t.Fatalf("ask %d: %v\n%s", i, err, out)
		}
	}

	cases := []struct {
		id, typed string
		code      int
		status    string
	}{
		{"CLR-1-001", "y", 0, "answered"},
		{"CLR-1-002", "n", 4, "pending"},
		{"CLR-1-002", "yes please", 4, "pending"},
	}
	for _, c := range cases {
		cmd := agentx("clarify", "answer", c.id, "--body", "Yes.")
		out, code := atTerminal(t, cmd, c.typed)
		if !strings.Contains(out, "pat acts as a person (human): agentx clarify answer "+c.id) || !strings.Contains(out, "[y/N]") {
			t.Errorf("%s typed %q: the terminal did not show the question: %q", c.id, c.typed, out)
		}
		if code != c.code {
			t.Errorf("%s typed %q: exit %d, want %d: %q", c.id, c.typed, code, c.code, out)
		}
		show := agentx("clarify", "show", c.id, "--json")
		b, err := show.Output()
		if err != nil {
			t.Fatalf("show %s: %v", c.id, err)
		}
		if !bytes.Contains(b, []byte(`"status":"`+c.status+`"`)) && !bytes.Contains(b, []byte(`"status": "`+c.status+`"`)) {
			t.Errorf("%s typed %q: status is not %s: %s", c.id, c.typed, c.status, b)
		}
	}
	ev, err := agentx("events", "--id", "CLR-1-001", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ev, []byte(`"by": "human:pat"`)) && !bytes.Contains(ev, []byte(`"by":"human:pat"`)) {
		t.Errorf("the answer is not recorded as the person's: %s", ev)
	}
}

// atTerminal runs cmd with a new pseudo-terminal as its controlling
// terminal (and stdin, stdout, stderr), types typed and Enter once the
// confirmation question shows, and returns everything the terminal showed
// and the exit code. It gives up after 20 s.
func atTerminal(t *testing.T, cmd *exec.Cmd, typed string) (string, int) {
	t.Helper()
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	defer tty.Close()
	timer := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	var seen bytes.Buffer
	r := bufio.NewReader(tty)
	done := make(chan struct{})
	go func() {
		defer close(done)
		typedYet := false
		buf := make([]byte, 512)
		for {
			n, err := r.Read(buf)
			seen.Write(buf[:n])
			if !typedYet && bytes.Contains(seen.Bytes(), []byte("[y/N] ")) {
				typedYet = true
				_, _ = io.WriteString(tty, typed+"\r")
			}
			if err != nil {
				return
			}
		}
	}()
	err = cmd.Wait()
	_ = tty.Close()
	<-done
	var exit *exec.ExitError
	switch {
	case err == nil:
		return seen.String(), 0
	case errors.As(err, &exit):
		return seen.String(), exit.ExitCode()
	}
	t.Fatalf("%v: %v", cmd.Args, err)
	return "", -1
}
