package cli

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snapshot is every file under dir with its content and mode.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if e.IsDir() {
			files[rel+"/"] = info.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		files[rel] = info.Mode().String() + "\n" + string(b)
		return err
	}))
	return files
}

// TestDemoRefusesAnExistingWorkspace: demo --dir on a directory that holds
// a workspace (a real one, with a responder and a question) is a usage
// error, and changes nothing there.
func TestDemoRefusesAnExistingWorkspace(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init"},
		{"clarify", "ask", "--issue", "7", "--from", "engineer", "--to", "architect", "--topic", "Real", "--question", "A real question?"},
	} {
		require.Equal(t, 0, runCmd(t, dir, nil, "", args...).code)
	}
	appendConfig(t, dir, "\n[agents.architect]\ncommand = [\"./scripts/the-real-architect.sh\"]\n")
	before := snapshot(t, dir)

	for _, at := range []string{dir, filepath.Base(dir)} { // absolute, and relative to the working directory
		r := runCmd(t, filepath.Dir(dir), nil, "", "demo", "--dir", at)
		assert.Equal(t, 2, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
		assert.Contains(t, r.stderr, "already holds an agentx workspace")
		assert.Empty(t, r.stdout)
		assert.Equal(t, before, snapshot(t, dir), "the workspace is byte for byte as it was")
	}
}

// cancelWriter cancels a context once what was written contains a marker.
type cancelWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel func()
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.cancel()
	}
	return n, err
}

// TestDemoStopsOnInterrupt: Ctrl-C (the context cancelled) during step 2
// stops the demo there: no further steps, no "Done", a summary that says
// where it stopped, exit 130, and the temp workspace removed.
func TestDemoStopsOnInterrupt(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Chdir(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelWriter{marker: "2. The engineer asks the product manager", cancel: cancel}
	var errb bytes.Buffer
	a := &App{stdin: strings.NewReader(""), stdout: out, stderr: &errb, getenv: func(string) string { return "" }}
	code := run(ctx, a, []string{"demo"})
	text := out.buf.String()

	assert.Equal(t, 130, code, text)
	assert.Contains(t, errb.String(), "agentx: interrupted")
	assert.Contains(t, text, "Interrupted in step 2 of 5 (step 1 complete)")
	assert.NotContains(t, text, "3. On issue 43")
	assert.NotContains(t, text, "Done")
	assert.LessOrEqual(t, strings.Count(text, "(exit 130)"), 1, "at most the command that was running is interrupted")
	assert.Contains(t, text, "The workspace was a temp dir and is gone")
	left, err := filepath.Glob(filepath.Join(tmp, "agentx-demo-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "the temp workspace is removed")
}

// failingWriter fails every write after the first n bytes, as a pipe does
// once its reader has gone.
type failingWriter struct {
	n   int
	err error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, w.err
	}
	w.n -= len(p)
	return len(p), nil
}

// TestDemoStopsWhenItsOutputFails: when the output stops taking writes
// (EPIPE: the reader of a pipe went away) the demo stops at once, quietly,
// and removes its temp workspace.
func TestDemoStopsWhenItsOutputFails(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Chdir(t.TempDir())
	var errb bytes.Buffer
	a := &App{stdin: strings.NewReader(""), stdout: &failingWriter{n: 1, err: &fs.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}}, stderr: &errb,
		getenv: func(string) string { return "" }}
	code := run(context.Background(), a, []string{"demo"})
	assert.Equal(t, 130, code)
	assert.Empty(t, errb.String(), "a reader that went away is not an error to report")
	left, err := filepath.Glob(filepath.Join(tmp, "agentx-demo-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "the temp workspace is removed")
}

// TestRunQuietWhenTheOutputClosed: a command stopped because its reader
// went away (SIGPIPE cancels the context with errOutputClosed) exits 130
// and says nothing; Ctrl-C says it was interrupted.
func TestRunQuietWhenTheOutputClosed(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 0, runCmd(t, dir, nil, "", "init").code)
	for _, tt := range []struct {
		cause  error
		stderr string
	}{
		{errOutputClosed, ""},
		{context.Canceled, "agentx: interrupted\n"},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(tt.cause)
		var out, errb bytes.Buffer
		a := &App{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		code := run(ctx, a, []string{"events", "--follow"})
		assert.Equal(t, 130, code)
		assert.Equal(t, tt.stderr, errb.String())
	}
}
