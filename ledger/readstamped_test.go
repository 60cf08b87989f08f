package ledger

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReadStamped: the bytes of the file whatever its size, the stamp
// StampOf gives for it, and a *fs.PathError a missing file is ErrNotExist
// of.
func TestReadStamped(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "issue-1.json")
	for _, n := range []int{0, 1, 4095, 4096, 1 << 20} {
		data := bytes.Repeat([]byte("x"), n)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, st, err := ReadStamped(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: got %d, %v", n, len(got), err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := StampOf(fi); st != want {
			t.Fatalf("%d bytes: stamp %+v, want %+v", n, st, want)
		}
	}
	_, _, err := ReadStamped(filepath.Join(dir, "missing.json"))
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		t.Fatalf("missing: %v", err)
	}
	if _, _, err := ReadStamped(dir); err == nil {
		t.Fatal("a directory: want an error")
	}
}
