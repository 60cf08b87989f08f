package atomicfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 16<<10 - 1, 16 << 10, 16<<10 + 1, 1 << 20} {
		data := bytes.Repeat([]byte("agentx\n"), n/7+1)[:n]
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: got %d bytes, %v", n, len(got), err)
		}
	}
	_, err := ReadFile(filepath.Join(dir, "missing"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "missing") {
		t.Fatalf("missing file: %v, want a *fs.PathError naming it", err)
	}
	if _, err := ReadFile(dir); err == nil {
		t.Fatal("a directory: want an error")
	}
}
