//go:build unix

package lock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNotRegularLock: a dangling symlink (or a FIFO) where the lock file
// belongs is refused at once with an error that says to remove it; it is
// never followed, spun on or removed. Examine reports it to doctor.
func TestNotRegularLock(t *testing.T) {
	for _, kind := range []string{"dangling symlink", "symlink to a file", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "s.json")
			target := filepath.Join(dir, "elsewhere")
			switch kind {
			case "dangling symlink":
				os.Symlink(target, data+".lock")
			case "symlink to a file":
				writeFile(t, target, "precious")
				os.Symlink(target, data+".lock")
			case "fifo":
				if err := syscall.Mkfifo(data+".lock", 0o644); err != nil {
					t.Skip(err)
				}
			}
			start := time.Now()
			_, err := Acquire(t.Context(), data, Options{Wait: 3 * time.Second})
			var nr *NotRegularError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), "rm "+data+".lock") {
				t.Fatalf("err = %v, want NotRegularError", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v: it waited instead of refusing", d)
			}
			if _, err := os.Lstat(data + ".lock"); err != nil {
				t.Errorf("lock path removed: %v", err)
			}
			if kind == "symlink to a file" {
				if got, _ := os.ReadFile(target); string(got) != "precious" {
					t.Errorf("target changed to %q", got)
				}
			}
			if _, err := Examine(data+".lock", Options{}); !errors.As(err, &nr) {
				t.Errorf("Examine = %v", err)
			}
		})
	}
}
