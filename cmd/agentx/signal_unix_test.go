//go:build unix

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptDuringAWait: the real binary, Ctrl-C (SIGINT) or SIGTERM
// while `clarify wait` waits for an answer: it stops at once with exit 130
// and a message saying so, and leaves no lock or temp file behind. The
// signals are taken over when the command starts (see signalContext), so
// this holds though agentx version no longer takes them.
func TestInterruptDuringAWait(t *testing.T) {
	root, agentx := initWorkspace(t)
	if out, err := agentx("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "--topic", "t", "--question", "q?", "--non-blocking").CombinedOutput(); err != nil {
		t.Fatalf("ask: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			c := agentx("clarify", "wait", "CLR-1-001", "--timeout", "30s")
			var stderr bytes.Buffer
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second) // the command has long taken the signals over and waits
			start := time.Now()
			if err := c.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := c.Wait()
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("stopped %v after the signal", d)
			}
			code := -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err == nil {
				code = 0
			}
			if code != 130 {
				t.Errorf("exit %d (%v), want 130; stderr: %s", code, err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("stderr does not say it was interrupted: %q", stderr.String())
			}
			left, _ := filepath.Glob(filepath.Join(root, ".agentx", "state", "*", "*.lock"))
			tmp, _ := filepath.Glob(filepath.Join(root, ".agentx", "state", "*", ".*.tmp-*"))
			if len(left)+len(tmp) > 0 {
				t.Errorf("left behind: %v %v", left, tmp)
			}
		})
	}
}
